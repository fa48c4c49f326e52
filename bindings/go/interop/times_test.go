package interop

// Times bound from Go (issue #20 point 5 on the Go face): a time.Time
// stored into DATE, DATETIME(6), DATETIME and VARCHAR columns, compared,
// and used in expressions, gives what go-sql-driver/mysql gives on the same
// server, both prepared and with interpolateParams, but for the trailing
// zeros of a fraction (fractionTrimmed says why). Go has no date type:
// like go-sql-driver (which writes a time at midnight as 'YYYY-MM-DD'),
// staunch binds a time at midnight in loc as a DATE, any other as a
// DATETIME with microseconds, time.Duration as a TIME.

import (
	"database/sql"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func Test_times_bind_as_go_sql_driver(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no Asia/Tokyo zone:", err)
	}
	values := []time.Time{
		time.Date(2012, 10, 15, 0, 0, 0, 0, time.UTC),
		time.Date(2012, 10, 15, 12, 34, 56, 0, time.UTC),
		time.Date(2012, 10, 15, 12, 34, 56, 123000000, time.UTC),
		time.Date(2012, 10, 15, 12, 34, 56, 123456000, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2012, 10, 15, 0, 0, 0, 0, tokyo), // midnight in Tokyo, 15:00 UTC the day before
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Second),
		{}, // the zero time: '0000-00-00' (go-sql-driver)
	}
	var byWay [][]string // staunch's outcomes, prepared then interpolated
	for _, interp := range []bool{false, true} {
		opts := fmt.Sprintf("interpolateParams=%v&parseTime=true", interp)
		got := map[string][]string{}
		for _, drv := range []string{"mysql", "staunch"} {
			db, err := sql.Open(drv, goSQLDriverDSN(t, opts))
			if err != nil {
				t.Fatal(err)
			}
			const table = "gotimes" // one driver after the other
			if _, err := db.Exec("CREATE OR REPLACE TABLE " + table + " (id INT PRIMARY KEY, d DATE, dt6 DATETIME(6), dt0 DATETIME, v VARCHAR(40))"); err != nil {
				t.Fatal(err)
			}
			for i, v := range values {
				q := "INSERT INTO " + table + " VALUES (?, ?, ?, ?, ?)"
				got[drv] = append(got[drv], fmt.Sprintf("%s %v => %s", q, v, outcomeExec(db, q, i, v, v, v, v)))
			}
			steps := []struct {
				q    string
				args []any
			}{
				{"SELECT id, CAST(d AS CHAR), CAST(dt6 AS CHAR), CAST(dt0 AS CHAR), v FROM " + table + " ORDER BY id", nil},
				{"SELECT id FROM " + table + " WHERE dt6 = ? ORDER BY id", []any{values[3]}},
				{"SELECT id FROM " + table + " WHERE d = ? ORDER BY id", []any{values[0]}},
				{"SELECT id FROM " + table + " WHERE dt0 = ? ORDER BY id", []any{values[1]}},
				{"SELECT CAST(? AS CHAR)", []any{values[0]}},
				{"SELECT CAST(DATE_ADD(?, INTERVAL 1 DAY) AS CHAR)", []any{values[0]}},
				{"SELECT CAST(DATE_ADD(?, INTERVAL 1 SECOND) AS CHAR)", []any{values[3]}},
				{"SELECT ? < '2012-10-15 00:00:01', ? > '2012-10-15 12:34:56.123455'", []any{values[0], values[3]}},
				{"SELECT CONCAT('at ', ?)", []any{values[2]}},
				{"DROP TABLE " + table, nil},
			}
			for _, s := range steps {
				got[drv] = append(got[drv], s.q+" => "+outcome(t, db, s.q, s.args...))
			}
			db.Close()
		}
		for i := range got["mysql"] {
			t.Logf("%s: %s", opts, got["mysql"][i])
		}
		for i := range got["mysql"] {
			if a, b := fractionTrimmed(got["mysql"][i]), fractionTrimmed(got["staunch"][i]); a != b {
				t.Errorf("%s: go-sql-driver %s\n   staunch %s", opts, a, b)
			}
		}
		byWay = append(byWay, got["staunch"])
		// Whatever the reference does: microseconds are kept.
		if s := got["staunch"][len(values)]; !strings.Contains(s, `"2012-10-15 12:34:56.123456"`) {
			t.Errorf("%s: microseconds lost: %s", opts, s)
		}
	}
	// staunch's two ways agree to the letter (the fraction's zeros too).
	for i := range byWay[0] {
		if byWay[0][i] != byWay[1][i] {
			t.Errorf("prepared %s\n   interpolated %s", byWay[0][i], byWay[1][i])
		}
	}
}

// A time with a fraction is a DATETIME parameter with microseconds, which
// the server shows with 6 decimals where it makes text of it (a VARCHAR
// column, CONCAT): '12:34:56.123000' where go-sql-driver, which sends the
// time as a string, stores '12:34:56.123'. The same instant; the one
// difference is the trailing zeros of a fraction that is not all zeros,
// which fractionTrimmed drops from both sides before they are compared.
var fraction = regexp.MustCompile(`(:\d\d\.\d*[1-9])0+\b`)

func fractionTrimmed(s string) string { return fraction.ReplaceAllString(s, "$1") }

// Test_times_select_param_types: `SELECT ?` of a time.Time is a DATE
// column at midnight, else DATETIME (issue #20 point 5), read back as the
// same time.Time. go-sql-driver sends times as strings, so there the column
// is text, which does not scan into a time.Time (logged, not compared).
func Test_times_select_param_types(t *testing.T) {
	for _, interp := range []bool{false, true} {
		opts := fmt.Sprintf("interpolateParams=%v&parseTime=true", interp)
		db, err := sql.Open("staunch", goSQLDriverDSN(t, opts))
		if err != nil {
			t.Fatal(err)
		}
		ref, err := sql.Open("mysql", goSQLDriverDSN(t, opts))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			v    any
			want string
		}{
			{time.Date(2012, 10, 15, 0, 0, 0, 0, time.UTC), "DATE"},
			{time.Date(2012, 10, 15, 12, 34, 56, 123456000, time.UTC), "DATETIME"},
			{time.Date(2012, 10, 15, 12, 34, 56, 0, time.UTC), "DATETIME"},
			{-(26*time.Hour + 3*time.Minute + 4*time.Second + 500*time.Microsecond), "TIME"},
		} {
			t.Logf("%s: go-sql-driver SELECT ? of %v => %s", opts, c.v, outcome(t, ref, "SELECT ?", c.v))
			rows, err := db.Query("SELECT ?", c.v)
			if err != nil {
				t.Fatal(err)
			}
			cts, err := rows.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			if name := cts[0].DatabaseTypeName(); name != c.want {
				t.Errorf("%s: SELECT ? of %v: column %s, want %s", opts, c.v, name, c.want)
			}
			if !rows.Next() {
				t.Fatal("no row", rows.Err())
			}
			back := reflect.New(reflect.TypeOf(c.v))
			if _, isTime := c.v.(time.Time); !isTime {
				var s string
				back = reflect.ValueOf(&s)
			}
			if err := rows.Scan(back.Interface()); err != nil {
				t.Fatal(err)
			}
			if tv, isTime := c.v.(time.Time); isTime {
				if b := back.Elem().Interface().(time.Time); !b.Equal(tv) {
					t.Errorf("%s: SELECT ? of %v read back %v", opts, tv, b)
				}
			} else if s := back.Elem().String(); s != "-26:03:04.000500" {
				t.Errorf("%s: SELECT ? of %v read back %q", opts, c.v, s)
			}
			rows.Close()
		}
		db.Close()
		ref.Close()
	}
}

// outcomeExec runs a statement and gives its rows affected or its error
// number, comparable across drivers.
func outcomeExec(db *sql.DB, q string, args ...any) string {
	res, err := db.Exec(q, args...)
	if err != nil {
		return "error: " + err.Error()[:min(len(err.Error()), 12)]
	}
	n, err := res.RowsAffected()
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprint(n, " row")
}
