package interop

// Strings bound where decimals are stored or computed: staunch does what
// go-sql-driver/mysql (the reference) does with the same string, on the same
// server, both prepared and with interpolateParams (conf_decimal_exact's
// string side; staunch.Decimal is what keeps arithmetic exact). And the
// statements of conf_unpreparable that the server prepares wrongly.

import (
	"database/sql"
	"fmt"
	neturl "net/url"
	"reflect"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/staunch-db/staunch/bindings/go"
)

// goSQLDriverDSN is the test server as a go-sql-driver DSN with opts.
func goSQLDriverDSN(t *testing.T, opts string) string {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	return fmt.Sprintf("%s:%s@tcp(%s)%s?%s", u.User.Username(), pass, u.Host, u.Path, opts)
}

// outcome runs a statement and gives what it answered (the rows as text,
// each column's type name) or its error number, comparable across drivers.
func outcome(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		return "error: " + err.Error()[:min(len(err.Error()), 12)]
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, ct := range cts {
		name := ct.DatabaseTypeName()
		if name == "CHAR" {
			// SELECT ? of a prepared string: go-sql-driver sends strings
			// as MYSQL_TYPE_STRING (the column is then CHAR), staunch as
			// MYSQL_TYPE_VAR_STRING (VARCHAR); the same value either way.
			name = "VARCHAR"
		}
		out += name + " "
	}
	for rows.Next() {
		cells := make([]sql.NullString, len(cts))
		ptrs := make([]any, len(cts))
		for i := range cells {
			ptrs[i] = &cells[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		text := make([]string, len(cells))
		for i, c := range cells {
			text[i] = "NULL"
			if c.Valid {
				text[i] = fmt.Sprintf("%q", c.String)
			}
		}
		out += fmt.Sprint(text)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func Test_conf_decimal_exact_strings_as_go_sql_driver(t *testing.T) {
	for _, interp := range []bool{false, true} {
		opts := fmt.Sprintf("interpolateParams=%v", interp)
		got := map[string][]string{}
		for _, drv := range []string{"mysql", "staunch"} {
			db, err := sql.Open(drv, goSQLDriverDSN(t, opts))
			if err != nil {
				t.Fatal(err)
			}
			const table = "strdec" // one driver after the other
			steps := []struct {
				q    string
				args []any
			}{
				{"CREATE OR REPLACE TABLE " + table + " (id INT PRIMARY KEY, bal DECIMAL(30,2), d65 DECIMAL(65,30))", nil},
				{"INSERT INTO " + table + " VALUES (1, ?, ?)", []any{"1234567890123456789.01", "12345678901234567890123456789012345.678901234567890123456789012345"}},
				{"SELECT bal, d65 FROM " + table, nil},
				{"SELECT COUNT(*) FROM " + table + " WHERE bal = ?", []any{"1234567890123456789.01"}},
				{"SELECT bal + ? FROM " + table, []any{"0.01"}},
				{"UPDATE " + table + " SET bal = ? WHERE id = ?", []any{"98765432109876543.21", 1}},
				{"SELECT bal FROM " + table, nil},
				{"SELECT ?", []any{"15.7563"}},
				{"SELECT ? + 1", []any{"15.7563"}},
				{"SELECT CAST(? AS DECIMAL(30,2))", []any{"1234567890123456789.015"}},
				{"WITH c(a,b) AS (VALUES (?, ?), (?, ?)) SELECT a, b FROM c", []any{"a", 2, "b", 3}},
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
		if !reflect.DeepEqual(got["mysql"], got["staunch"]) {
			for i := range got["mysql"] {
				if got["mysql"][i] != got["staunch"][i] {
					t.Errorf("%s: go-sql-driver %s\n   staunch %s", opts, got["mysql"][i], got["staunch"][i])
				}
			}
		}
		// Whatever the reference does, a string stored into a DECIMAL
		// column is exact.
		if want := `DECIMAL DECIMAL ["1234567890123456789.01" "12345678901234567890123456789012345.678901234567890123456789012345"]`; got["staunch"][2] != "SELECT bal, d65 FROM strdec => "+want {
			t.Errorf("%s: stored %s", opts, got["staunch"][2])
		}
		if want := `DECIMAL ["98765432109876543.21"]`; got["staunch"][6] != "SELECT bal FROM strdec => "+want {
			t.Errorf("%s: updated %s", opts, got["staunch"][6])
		}
	}
}
