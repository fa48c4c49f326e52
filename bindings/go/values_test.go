package staunch_test

// Exact values and the two ways a statement is sent (issue #20): the
// conformance scenarios conf_decimal_exact, conf_unpreparable and
// conf_sql_modes, through the native API and through database/sql, each
// both prepared (Go's default, as go-sql-driver's) and interpolated (the
// knob interpolate_params=true; go-sql-driver's DSN option
// interpolateParams=true).

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

var ways = []struct {
	name string
	knob string // the native API's pool knob
	dsn  string // go-sql-driver's DSN option
}{
	{"prepared", "interpolate_params=false", "interpolateParams=false"},
	{"interpolated", "interpolate_params=true", "interpolateParams=true"},
}

// A DECIMAL(30,2) at 1234567890123456789.01 plus a bound 0.01: a double
// would make it 1234567890123456800.00.
const (
	bigBal  = "1234567890123456789.01"
	bigBal2 = "1234567890123456789.02"
)

// 65 digits, the most a DECIMAL holds: all before the point, and 27 + 38.
var (
	digits65      = strings.Repeat("9876543210", 6) + "98765"
	digits65Scale = "-" + digits65[:27] + "." + digits65[27:]
)

func Test_conf_decimal_exact(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			p := openPool(t, "max_size=1&"+w.knob)
			c := acquire(t, p)
			defer c.Release()
			table := "dec_native_" + w.name
			mustExec(t, c, "CREATE OR REPLACE TABLE "+table+" (id INT PRIMARY KEY, bal DECIMAL(30,2) NULL)")
			mustExec(t, c, "INSERT INTO "+table+" VALUES (1, ?), (2, NULL)", staunch.Decimal(bigBal))
			r, err := c.Exec(bg, "UPDATE "+table+" SET bal = bal + ? WHERE id = ?", staunch.Decimal("0.01"), 1)
			if err != nil || r.RowsAffected != 1 {
				t.Fatalf("UPDATE: %+v %v", r, err)
			}
			var d staunch.Decimal
			var s string
			var b []byte
			var a any
			if err := c.QueryRow(bg, "SELECT bal, bal, bal, bal FROM "+table+" WHERE id = 1").Scan(&d, &s, &b, &a); err != nil {
				t.Fatal(err)
			}
			if d != bigBal2 || s != bigBal2 || string(b) != bigBal2 || a != bigBal2 {
				t.Fatalf("bal as Decimal %q, string %q, []byte %q, any %#v; want %s", d, s, b, a, bigBal2)
			}
			// Comparison is exact too: only the row's own value matches.
			if n := queryInt(t, c, "SELECT COUNT(*) FROM "+table+" WHERE bal = ?", staunch.Decimal(bigBal2)); n != 1 {
				t.Fatalf("bal = %s matched %d rows", bigBal2, n)
			}
			if n := queryInt(t, c, "SELECT COUNT(*) FROM "+table+" WHERE bal = ?", staunch.Decimal("1234567890123456789.03")); n != 0 {
				t.Fatalf("bal = ...789.03 matched %d rows", n)
			}
			// NULL into a **Decimal; the row-level ? of a NULL *Decimal.
			var pd *staunch.Decimal = new(staunch.Decimal)
			if err := c.QueryRow(bg, "SELECT bal FROM "+table+" WHERE id = 2").Scan(&pd); err != nil || pd != nil {
				t.Fatalf("NULL into **Decimal: %v %v", pd, err)
			}
			if err := c.QueryRow(bg, "SELECT bal FROM "+table+" WHERE id = 2").Scan(&d); err == nil {
				t.Fatal("NULL into *Decimal: no error")
			}
			var nilDec *staunch.Decimal
			if n := queryInt(t, c, "SELECT ? IS NULL", nilDec); n != 1 {
				t.Fatal("a nil *Decimal was not bound as NULL")
			}

			// SELECT ? of a decimal is a DECIMAL column, the value exact.
			rows, err := c.Query(bg, "SELECT ?", staunch.Decimal("15.7563"))
			if err != nil {
				t.Fatal(err)
			}
			if k := rows.ColumnTypes()[0].Kind; k != staunch.KindDecimal {
				t.Fatalf("SELECT ? of a Decimal: column kind %d, want KindDecimal", k)
			}
			if !rows.Next() {
				t.Fatal(rows.Err())
			}
			if err := rows.Scan(&d); err != nil || d != "15.7563" {
				t.Fatalf("SELECT ?: %q %v", d, err)
			}
			rows.Close()
			mustExec(t, c, "DROP TABLE "+table)
		})
	}
}

func Test_conf_decimal_exact_65_digits(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			p := openPool(t, "max_size=1&"+w.knob)
			c := acquire(t, p)
			defer c.Release()
			table := "dec65_" + w.name
			mustExec(t, c, "CREATE OR REPLACE TABLE "+table+" (a DECIMAL(65,0), b DECIMAL(65,38))")
			mustExec(t, c, "INSERT INTO "+table+" VALUES (?, ?)", staunch.Decimal(digits65), staunch.Decimal(digits65Scale))
			var a, b, echoA, echoB staunch.Decimal
			var eqA, eqB int64
			err := c.QueryRow(bg, "SELECT a, b, a = ?, b = ?, ?, ? FROM "+table,
				staunch.Decimal(digits65), staunch.Decimal(digits65Scale),
				staunch.Decimal(digits65), staunch.Decimal(digits65Scale)).Scan(&a, &b, &eqA, &eqB, &echoA, &echoB)
			if err != nil {
				t.Fatal(err)
			}
			if a != staunch.Decimal(digits65) || b != staunch.Decimal(digits65Scale) || eqA != 1 || eqB != 1 {
				t.Fatalf("stored %s, %s (equal: %d, %d)", a, b, eqA, eqB)
			}
			if echoA != staunch.Decimal(digits65) || echoB != staunch.Decimal(digits65Scale) {
				t.Fatalf("SELECT ? gave %s, %s", echoA, echoB)
			}
			// Arithmetic at full precision: the last digit moves.
			var sum staunch.Decimal
			if err := c.QueryRow(bg, "SELECT a - ? FROM "+table, staunch.Decimal("1")).Scan(&sum); err != nil ||
				sum != staunch.Decimal(digits65[:64]+"4") {
				t.Fatalf("a - 1 = %s %v", sum, err)
			}
			// One digit more than a DECIMAL holds, before or after the point:
			// refused by name, before anything is sent.
			for _, bad := range []string{digits65 + "1", "0." + strings.Repeat("1", 39)} {
				_, err := c.Exec(bg, "SELECT ?", staunch.Decimal(bad))
				if !errors.Is(err, staunch.ErrInvalid) || !strings.Contains(err.Error(), "argument 1: staunch.Decimal") ||
					!strings.Contains(err.Error(), "a DECIMAL") {
					t.Fatalf("%d characters: %v", len(bad), err)
				}
			}
			mustExec(t, c, "DROP TABLE "+table)
		})
	}
}

// badDecimals are texts that are not decimal numbers.
var badDecimals = []string{"1e5", "", "12a", " 1", "1 ", "1.2.3", "0x10", "NaN", "1,5", "+", ".", "--1", "١٢"}

func Test_conf_decimal_exact_bad_decimal_refused_naming_the_argument(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			p := openPool(t, "max_size=1&"+w.knob)
			c := acquire(t, p)
			defer c.Release()
			questions := func() int64 { return sessionStatus(t, c, "Questions") }
			for _, bad := range badDecimals {
				before := questions()
				_, err := c.Exec(bg, "SELECT ?, ?", 1, staunch.Decimal(bad))
				if !errors.Is(err, staunch.ErrInvalid) {
					t.Fatalf("%q: %v, want ErrInvalid", bad, err)
				}
				if msg := err.Error(); !strings.Contains(msg, "argument 2") || !strings.Contains(msg, fmt.Sprintf("%q is not a decimal number", bad)) {
					t.Fatalf("%q: the error does not name the argument and its text: %v", bad, err)
				}
				// Nothing was sent: the only question since is the next SHOW.
				if n := questions() - before; n != 1 {
					t.Fatalf("%q: %d statements reached the server", bad, n-1)
				}
				if _, err := staunch.ParseDecimal(bad); !errors.Is(err, staunch.ErrInvalid) {
					t.Fatalf("ParseDecimal(%q): %v", bad, err)
				}
			}
			// The connection is fine afterwards.
			if n := queryInt(t, c, "SELECT ? + 1", staunch.Decimal("1")); n != 2 {
				t.Fatalf("after the refusals: %d", n)
			}
		})
	}
}

// A time.Duration past a TIME's range is refused by the library, both ways,
// naming it: a prepared 839:00:00 would otherwise be stored as 838:59:59 by
// the server, without an error or a warning.
func Test_a_duration_past_838_hours_is_refused_not_clipped(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			p := openPool(t, "max_size=1&"+w.knob)
			c := acquire(t, p)
			defer c.Release()
			_, err := c.Exec(bg, "SELECT ?, ?", 1, -839*time.Hour)
			var se *staunch.Error
			if !errors.As(err, &se) || se.Status != staunch.StatusOutOfRange ||
				!strings.Contains(err.Error(), "839:00:00 is above 838:59:59") {
				t.Fatalf("839h: %v, want StatusOutOfRange naming it", err)
			}
			edge := -(838*time.Hour + 59*time.Minute + 59*time.Second)
			var got string
			if err := c.QueryRow(bg, "SELECT CAST(? AS CHAR)", edge).Scan(&got); err != nil || got != "-838:59:59" {
				t.Fatalf("the edge: %q, %v", got, err)
			}
		})
	}
}

func Test_decimal_parse_value_scan(t *testing.T) {
	for _, good := range []string{"0", "-12.50", "+7", ".5", "3.", "-.03", "007.10", digits65, digits65Scale, "0000" + digits65} {
		d, err := staunch.ParseDecimal(good)
		if err != nil || string(d) != good {
			t.Fatalf("ParseDecimal(%q): %q %v", good, d, err)
		}
		if v, err := d.Value(); err != nil || v != good {
			t.Fatalf("Value of %q: %#v %v", good, v, err)
		}
	}
	for _, bad := range badDecimals {
		if _, err := staunch.Decimal(bad).Value(); err == nil {
			t.Fatalf("Value of %q: no error", bad)
		}
	}
	var d staunch.Decimal
	for _, c := range []struct {
		src  any
		want staunch.Decimal
	}{
		{"12.50", "12.50"}, {[]byte("-0.01"), "-0.01"}, {int64(-42), "-42"}, {uint64(18446744073709551615), "18446744073709551615"},
		{float64(0.1), "0.1"}, {float64(1e21), "1000000000000000000000"},
	} {
		if err := d.Scan(c.src); err != nil || d != c.want {
			t.Fatalf("Scan(%#v): %q %v", c.src, d, err)
		}
	}
	for _, src := range []any{nil, "abc", []byte("1e5"), true} {
		if err := d.Scan(src); err == nil {
			t.Fatalf("Scan(%#v): no error", src)
		}
	}
}

// The same through database/sql, opened by a go-sql-driver DSN.
func Test_sql_conf_decimal_exact(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			db := sqlOpen(t, driverDSN(t, w.dsn))
			table := "dec_sql_" + w.name
			sqlExec(t, db, "CREATE OR REPLACE TABLE "+table+" (id INT PRIMARY KEY, bal DECIMAL(30,2) NULL)")
			sqlExec(t, db, "INSERT INTO "+table+" VALUES (1, ?), (2, NULL)", staunch.Decimal(bigBal))
			sqlExec(t, db, "UPDATE "+table+" SET bal = bal + ? WHERE id = ?", staunch.Decimal("0.01"), 1)
			var d staunch.Decimal
			var s string
			var b []byte
			var raw sql.RawBytes
			rows, err := db.Query("SELECT bal, bal, bal, bal FROM "+table+" WHERE id = ?", 1)
			if err != nil {
				t.Fatal(err)
			}
			if !rows.Next() {
				t.Fatal(rows.Err())
			}
			if err := rows.Scan(&d, &s, &b, &raw); err != nil {
				t.Fatal(err)
			}
			if d != bigBal2 || s != bigBal2 || string(b) != bigBal2 || string(raw) != bigBal2 {
				t.Fatalf("bal as Decimal %q, string %q, []byte %q, RawBytes %q; want %s", d, s, b, raw, bigBal2)
			}
			rows.Close()
			var n sql.Null[staunch.Decimal]
			if err := db.QueryRow("SELECT bal FROM " + table + " WHERE id = 2").Scan(&n); err != nil || n.Valid {
				t.Fatalf("NULL into sql.Null[Decimal]: %+v %v", n, err)
			}
			if err := db.QueryRow("SELECT bal FROM " + table + " WHERE id = 1").Scan(&n); err != nil || !n.Valid || n.V != bigBal2 {
				t.Fatalf("into sql.Null[Decimal]: %+v %v", n, err)
			}

			// SELECT ? of a decimal: a DECIMAL column.
			rows, err = db.Query("SELECT ?", staunch.Decimal("15.7563"))
			if err != nil {
				t.Fatal(err)
			}
			cts, err := rows.ColumnTypes()
			if err != nil || cts[0].DatabaseTypeName() != "DECIMAL" {
				t.Fatalf("SELECT ? of a Decimal: column %q %v", cts[0].DatabaseTypeName(), err)
			}
			if !rows.Next() {
				t.Fatal(rows.Err())
			}
			if err := rows.Scan(&d); err != nil || d != "15.7563" {
				t.Fatalf("SELECT ?: %q %v", d, err)
			}
			rows.Close()

			// A prepared *sql.Stmt binds it the same way.
			st, err := db.Prepare("SELECT ? + ?")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.QueryRow(staunch.Decimal(bigBal), staunch.Decimal("0.01")).Scan(&d); err != nil || d != bigBal2 {
				t.Fatalf("Stmt: %q %v", d, err)
			}
			st.Close()

			_, err = db.Exec("SELECT ?, ?", 1, staunch.Decimal("1e5"))
			if !errors.Is(err, staunch.ErrInvalid) || !strings.Contains(err.Error(), `argument 2: staunch.Decimal "1e5" is not a decimal number`) {
				t.Fatalf("a bad Decimal: %v", err)
			}
			sqlExec(t, db, "DROP TABLE "+table)
		})
	}
}

func Test_conf_unpreparable(t *testing.T) {
	const window = "SELECT CAST(SUM(x) OVER (ORDER BY x ROWS BETWEEN ? PRECEDING AND ? FOLLOWING) AS SIGNED) FROM unprep ORDER BY x"
	const values = "WITH c(a,b) AS (VALUES (?, ?), (?, ?)) SELECT a, b FROM c"
	p0 := openPool(t, "max_size=1")
	mustExec(t, p0, "CREATE OR REPLACE TABLE unprep (x INT)")
	mustExec(t, p0, "INSERT INTO unprep VALUES (1), (2), (3)")
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			p := openPool(t, "max_size=1&"+w.knob)
			// The server refuses to prepare a window frame with bound
			// values (1064 at prepare): sent interpolated either way.
			if got := int64s(t, p, window, 1, 1); fmt.Sprint(got) != "[3 6 5]" {
				t.Fatalf("window sums %v, want [3 6 5]", got)
			}
			_, db := openDB(t, "max_size=1&"+w.knob)
			if got := sqlInt64s(t, db, window, 1, 1); fmt.Sprint(got) != "[3 6 5]" {
				t.Fatalf("database/sql: window sums %v, want [3 6 5]", got)
			}
			dsnDB := sqlOpen(t, driverDSN(t, w.dsn))
			if got := sqlInt64s(t, dsnDB, window, 1, 1); fmt.Sprint(got) != "[3 6 5]" {
				t.Fatalf("by DSN %s: window sums %v, want [3 6 5]", w.dsn, got)
			}
			// The server prepares VALUES with bound values and answers
			// empty cells (go-sql-driver meets the same with its default,
			// prepared: see the interop test); interpolated it is right.
			if w.name != "interpolated" {
				return
			}
			for name, q := range map[string]interface {
				QueryContext(context.Context, string, ...any) (*sql.Rows, error)
			}{"OpenDB": db, "DSN": dsnDB} {
				rows, err := q.QueryContext(bg, values, "a", 2, "b", 3)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for rows.Next() {
					var a string
					var b int64
					if err := rows.Scan(&a, &b); err != nil {
						t.Fatal(err)
					}
					got = append(got, fmt.Sprintf("%s,%d", a, b))
				}
				if rows.Err() != nil || fmt.Sprint(got) != "[a,2 b,3]" {
					t.Fatalf("%s: VALUES gave %v %v", name, got, rows.Err())
				}
			}
			rows, err := p.Query(bg, values, "a", 2, "b", 3)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var a string
				var b int64
				if err := rows.Scan(&a, &b); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s,%d", a, b))
			}
			if rows.Err() != nil || fmt.Sprint(got) != "[a,2 b,3]" {
				t.Fatalf("native: VALUES gave %v %v", got, rows.Err())
			}
			// A real syntax error is still the server's error.
			var me *staunch.MySQLError
			if _, err := p.Exec(bg, "SELEC ?", 1); !errors.As(err, &me) || me.Number != 1064 {
				t.Fatalf("SELEC ?: %v", err)
			}
		})
	}
	mustExec(t, p0, "DROP TABLE unprep")
}

func Test_conf_sql_modes(t *testing.T) {
	bin := []byte{0xff, 0x00, 0x41}
	tricky := `it's a \ back\slash, a "quote" and a ? mark\`
	for _, mode := range []string{"NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"} {
		// The literal C:\ as each mode reads it, and aliases holding a ?
		// quoted as each mode quotes names.
		lit, alias := `'C:\\'`, `SELECT ? AS "a?", 'x"?' AS "b""?"`
		if mode == "NO_BACKSLASH_ESCAPES" {
			lit, alias = `'C:\'`, "SELECT ? AS `a?`, 'x\"?' AS `b``?`"
		}
		query := "SELECT " + lit + ", ?, 'why?', ?"
		check := func(t *testing.T, how string, scan func(q string, args []any, dest ...any) error) {
			var c1, c3, c4 string
			var c2 []byte
			if err := scan(query, []any{bin, tricky}, &c1, &c2, &c3, &c4); err != nil {
				t.Fatalf("%s %s: %v", mode, how, err)
			}
			if c1 != `C:\` || !bytes.Equal(c2, bin) || c3 != "why?" || c4 != tricky {
				t.Fatalf("%s %s: %q %x %q %q", mode, how, c1, c2, c3, c4)
			}
			var a, b string
			if err := scan(alias, []any{tricky}, &a, &b); err != nil || a != tricky || b != `x"?` {
				t.Fatalf("%s %s: aliases: %q %q %v", mode, how, a, b, err)
			}
		}
		for _, w := range ways {
			t.Run(mode+"/"+w.name, func(t *testing.T) {
				p := openPool(t, "max_size=1&"+w.knob)
				c := acquire(t, p)
				defer c.Release()
				mustExec(t, c, "SET SESSION sql_mode = '"+mode+"'")
				check(t, "native", func(q string, args []any, dest ...any) error {
					return c.QueryRow(bg, q, args...).Scan(dest...)
				})
				db := sqlOpen(t, driverDSN(t, w.dsn))
				sc, err := db.Conn(bg)
				if err != nil {
					t.Fatal(err)
				}
				defer sc.Close()
				if _, err := sc.ExecContext(bg, "SET SESSION sql_mode = '"+mode+"'"); err != nil {
					t.Fatal(err)
				}
				check(t, "database/sql", func(q string, args []any, dest ...any) error {
					return sc.QueryRowContext(bg, q, args...).Scan(dest...)
				})
			})
		}
	}
}

func mustExec(t testing.TB, q interface {
	Exec(context.Context, string, ...any) (staunch.Result, error)
}, sql string, args ...any) {
	t.Helper()
	if _, err := q.Exec(bg, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func sqlExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func int64s(t testing.TB, p *staunch.Pool, q string, args ...any) []int64 {
	t.Helper()
	rows, err := p.Query(bg, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sqlInt64s(t testing.TB, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Nullable destinations, a pointer to a pointer: nil for NULL, else a new
// value, for the kinds read without reflect (**int64, **int, **uint64,
// **float64, **string, **bool, **time.Time) and for another (**int32, the
// general way); a value that cannot convert is an error, and the
// destination keeps what it had.
func Test_scan_into_pointers_to_pointers(t *testing.T) {
	p := openPool(t, "")
	var (
		pi  *int64
		pn  *int
		pu  *uint64
		pf  *float64
		ps  *string
		pb  *bool
		pt  *time.Time
		p32 *int32
	)
	dests := []any{&pi, &pn, &pu, &pf, &ps, &pb, &pt, &p32}
	err := p.QueryRow(bg, "SELECT -5, 7, CAST(18446744073709551615 AS UNSIGNED), 2.5e0, 'héllo', 1, TIMESTAMP '2020-01-02 03:04:05', 9").Scan(dests...)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if pi == nil || *pi != -5 || pn == nil || *pn != 7 || pu == nil || *pu != math.MaxUint64 ||
		pf == nil || *pf != 2.5 || ps == nil || *ps != "héllo" || pb == nil || !*pb ||
		pt == nil || !pt.Equal(when) || p32 == nil || *p32 != 9 {
		t.Fatalf("values: %v %v %v %v %v %v %v %v", pi, pn, pu, pf, ps, pb, pt, p32)
	}
	err = p.QueryRow(bg, "SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL").Scan(dests...)
	if err != nil {
		t.Fatal(err)
	}
	if pi != nil || pn != nil || pu != nil || pf != nil || ps != nil || pb != nil || pt != nil || p32 != nil {
		t.Fatalf("NULLs: %v %v %v %v %v %v %v %v", pi, pn, pu, pf, ps, pb, pt, p32)
	}
	keep := int64(42)
	pi = &keep
	err = p.QueryRow(bg, "SELECT 'abc'").Scan(&pi)
	if err == nil || !strings.Contains(err.Error(), "column 1") {
		t.Fatalf("'abc' into **int64: %v", err)
	}
	if pi != &keep || keep != 42 {
		t.Fatalf("the destination changed: %v", pi)
	}
}
