package staunch_test

// sql.Open("staunch", dsn) with go-sql-driver's DSN form and options.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

// driverDSN is the test server as a go-sql-driver DSN with params.
func driverDSN(t testing.TB, params string) string {
	t.Helper()
	u, err := url.Parse(directURL)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)%s", u.User.Username(), pass, u.Host, u.Path)
	if params != "" {
		dsn += "?" + params
	}
	return dsn
}

func sqlOpen(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("staunch", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func Test_dsn_driver_form_and_url_form_both_open(t *testing.T) {
	for _, dsn := range []string{driverDSN(t, "parseTime=true&loc=Local"), withKnobs(directURL, "parseTime=true")} {
		db := sqlOpen(t, dsn)
		var n int
		if err := db.QueryRow("SELECT ?+1", 41).Scan(&n); err != nil || n != 42 {
			t.Fatalf("%v: %d %v", dsn, n, err)
		}
		// database/sql keeps none: sql.Open's default MaxIdleConns (2) is
		// defeated by IsValid.
		if s := db.Stats(); s.Idle != 0 || s.InUse != 0 || s.OpenConnections != 0 {
			t.Fatalf("database/sql kept connections: %+v", s)
		}
	}
}

func Test_dsn_one_pool_per_dsn(t *testing.T) {
	dsn := driverDSN(t, "max_size=1&connection_timeout=200ms")
	db1, db2 := sqlOpen(t, dsn), sqlOpen(t, dsn)
	c, err := db1.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	// The one connection of the shared pool is held through db1: db2 waits
	// and times out on the same pool.
	err = db2.QueryRow("SELECT 1").Scan(new(int))
	if !errors.Is(err, staunch.ErrPoolExhausted) {
		t.Fatalf("db2 while db1 holds the only connection: %v", err)
	}
	c.Close()
	if err := db2.QueryRow("SELECT 1").Scan(new(int)); err != nil {
		t.Fatal(err)
	}
	// Closing one *sql.DB leaves the pool to the other.
	db1.Close()
	if err := db2.QueryRow("SELECT 1").Scan(new(int)); err != nil {
		t.Fatalf("after the other DB closed: %v", err)
	}
}

func Test_dsn_loc_both_directions(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	db := sqlOpen(t, driverDSN(t, "parseTime=true&loc=Asia%2FTokyo"))
	c, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(bg, "CREATE TEMPORARY TABLE tz (d DATETIME(6))"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 3, 5, 23, 30, 15, 123456000, time.UTC) // 08:30:15 on the 6th in Tokyo
	if _, err := c.ExecContext(bg, "INSERT INTO tz VALUES (?)", at); err != nil {
		t.Fatal(err)
	}
	var text string
	var back time.Time
	if err := c.QueryRowContext(bg, "SELECT CAST(d AS CHAR), d FROM tz").Scan(&text, &back); err != nil {
		t.Fatal(err)
	}
	if text != "2024-03-06 08:30:15.123456" {
		t.Fatalf("written as %q, want Tokyo's wall clock", text)
	}
	if !back.Equal(at) || back.Location().String() != tokyo.String() {
		t.Fatalf("read back %v (%v), want %v in Asia/Tokyo", back, back.Location(), at)
	}
}

func Test_dsn_zero_dates_and_parse_time_off(t *testing.T) {
	for _, parse := range []bool{true, false} {
		db := sqlOpen(t, driverDSN(t, fmt.Sprintf("parseTime=%v&sql_mode=%%27%%27", parse)))
		c, err := db.Conn(bg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(bg, "CREATE TEMPORARY TABLE z (a DATETIME, b DATE, c DATETIME(3))"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(bg, "INSERT INTO z VALUES ('0000-00-00 00:00:00', '0000-00-00', '2020-01-02 03:04:05.5')"); err != nil {
			t.Fatal(err)
		}
		if parse {
			var a, b, d time.Time
			if err := c.QueryRowContext(bg, "SELECT a, b, c FROM z").Scan(&a, &b, &d); err != nil {
				t.Fatal(err)
			}
			if !a.IsZero() || !b.IsZero() || !d.Equal(time.Date(2020, 1, 2, 3, 4, 5, 5e8, time.UTC)) {
				t.Fatalf("parseTime: %v %v %v", a, b, d)
			}
			// The zero time binds as the zero date, as go-sql-driver.
			var n int
			if err := c.QueryRowContext(bg, "SELECT COUNT(*) FROM z WHERE a = ?", time.Time{}).Scan(&n); err != nil || n != 1 {
				t.Fatalf("zero time bound: %d %v", n, err)
			}
		} else {
			var a, b, d any
			if err := c.QueryRowContext(bg, "SELECT a, b, c FROM z").Scan(&a, &b, &d); err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s|%s|%s", a, b, d)
			if got != "0000-00-00 00:00:00|0000-00-00|2020-01-02 03:04:05.500" {
				t.Fatalf("parseTime=false: %q (%T)", got, a)
			}
		}
		c.Close()
	}
}

func Test_dsn_error_text_once_and_no_password(t *testing.T) {
	db := sqlOpen(t, driverDSN(t, ""))
	c, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(bg, "CREATE TEMPORARY TABLE k (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	c.ExecContext(bg, "INSERT INTO k VALUES (1)")
	_, err = c.ExecContext(bg, "INSERT INTO k VALUES (?)", 1)
	if err == nil || err.Error() != "Error 1062 (23000): Duplicate entry '1' for key 'PRIMARY'" {
		t.Fatalf("duplicate key: %v", err)
	}

	secret := "Sup3r-s3cret!"
	for _, dsn := range []string{
		"u:" + secret + "@tcp(127.0.0.1:1)/db?tls=custom",
		"u:" + secret + "@tcp(127.0.0.1:x)/db",
		"u:" + secret + "@bogus(127.0.0.1:1)/db",
		"u:" + secret + "@tcp(127.0.0.1:1)/db?parseTime=maybe",
		"mysql://u:" + secret + "@127.0.0.1:1/db?no_such_knob=1",
	} {
		_, err := sql.Open("staunch", dsn)
		if err == nil || strings.Contains(err.Error(), secret) || !errors.Is(err, staunch.ErrInvalid) {
			t.Errorf("%v", err)
		}
	}
	// A wrong password: the connect error does not carry it either.
	u := driverDSN(t, "connection_timeout=2s")
	wrong := strings.Replace(u, "@tcp", secret+"@tcp", 1)
	err = sqlOpen(t, wrong).Ping()
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("wrong password: %v", err)
	}
}

func Test_dsn_options_refused_by_name(t *testing.T) {
	for _, c := range []struct{ params, says string }{
		{"tls=custom", "tls=custom"},
		{"charset=latin1", "charset"},
		{"collation=latin1_swedish_ci", "collation"},
		{"multiStatements=false", "multiStatements"},
		{"maxAllowedPacket=1024", "maxAllowedPacket"},
		{"allowAllFiles=true", "allowAllFiles"},
		{"compress=true", "compress"},
		{"readTimeout=x", "readTimeout"},
		{"interpolateParams=maybe", "interpolateParams"},
		{"loc=Nowhere%2FElse", "loc"},
	} {
		_, err := sql.Open("staunch", driverDSN(t, c.params))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.params, err)
		}
	}
}

func Test_dsn_options_honoured(t *testing.T) {
	db := sqlOpen(t, driverDSN(t, "charset=utf8mb4&collation=utf8mb4_unicode_ci&wait_timeout=1234"+
		"&clientFoundRows=true&columnsWithAlias=true&multiStatements=true&timeout=2s&readTimeout=30s&writeTimeout=5s"+
		"&maxAllowedPacket=0&interpolateParams=true&tls=false"))
	for range 2 { // a second connection, or the same after its reset
		var coll string
		var wt int
		if err := db.QueryRow("SELECT @@collation_connection, @@session.wait_timeout").Scan(&coll, &wt); err != nil {
			t.Fatal(err)
		}
		if coll != "utf8mb4_unicode_ci" || wt != 1234 {
			t.Fatalf("session: %q %d", coll, wt)
		}
	}
	c, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(bg, "CREATE TEMPORARY TABLE f (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(bg, "INSERT INTO f VALUES (1, 5)"); err != nil {
		t.Fatal(err)
	}
	r, err := c.ExecContext(bg, "UPDATE f SET v = 5 WHERE id = 1")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := r.RowsAffected(); n != 1 {
		t.Fatalf("clientFoundRows: %d rows affected by an unchanged row, want 1 (found)", n)
	}
	rows, err := c.QueryContext(bg, "SELECT x.id, x.v AS w FROM f AS x")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if !reflect.DeepEqual(cols, []string{"x.id", "x.w"}) {
		t.Fatalf("columnsWithAlias: %q", cols)
	}
}

func Test_dsn_scan_types_as_go_sql_driver(t *testing.T) {
	db := sqlOpen(t, driverDSN(t, "parseTime=true"))
	c, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(bg, `CREATE TEMPORARY TABLE st (
		a BIGINT UNSIGNED NULL, b BIGINT UNSIGNED NOT NULL, c INT NOT NULL, d TINYINT UNSIGNED NOT NULL,
		e DOUBLE NULL, f FLOAT NOT NULL, g VARCHAR(5) NULL, h VARBINARY(5) NOT NULL, i DECIMAL(5,2) NOT NULL,
		j DATETIME NOT NULL, k DATE NULL, l SMALLINT NULL)`); err != nil {
		t.Fatal(err)
	}
	rows, err := c.QueryContext(bg, "SELECT * FROM st")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	want := []any{sql.NullInt64{}, uint64(0), int32(0), uint8(0), sql.NullFloat64{}, float32(0),
		sql.NullString{}, []byte{}, "", sql.NullTime{}, sql.NullTime{}, sql.NullInt64{}}
	for i, ct := range types {
		if ct.ScanType() != reflect.TypeOf(want[i]) {
			t.Errorf("column %s: scan type %v, want %T", ct.Name(), ct.ScanType(), want[i])
		}
	}
}

func Test_dsn_reject_read_only(t *testing.T) {
	db := sqlOpen(t, driverDSN(t, "rejectReadOnly=true&max_size=1"))
	c, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(bg, "SET SESSION TRANSACTION READ ONLY"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(bg, "START TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	// An UPDATE of a real table inside a READ ONLY transaction is error 1792.
	_, err = c.ExecContext(context.Background(), "UPDATE mysql.db SET Host = Host WHERE 0")
	if !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("1792 with rejectReadOnly: %v, want the connection dropped (driver.ErrBadConn)", err)
	}
}

func Test_dsn_interpolate_params_sends_no_prepare(t *testing.T) {
	for _, interp := range []bool{true, false} {
		db := sqlOpen(t, driverDSN(t, fmt.Sprintf("interpolateParams=%v", interp)))
		c, err := db.Conn(bg)
		if err != nil {
			t.Fatal(err)
		}
		prepares := func() int {
			var name string
			var n int
			if err := c.QueryRowContext(bg, "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'").Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := prepares()
		var s string
		if err := c.QueryRowContext(bg, "SELECT CONCAT(?, 'x', ?)", "it's", 7).Scan(&s); err != nil || s != "it'sx7" {
			t.Fatalf("interpolateParams=%v: %q %v", interp, s, err)
		}
		if got := prepares() - before; (got == 0) != interp {
			t.Fatalf("interpolateParams=%v: %d prepares", interp, got)
		}
		c.Close()
	}
}

// A statement without args goes as text, as go-sql-driver sends it: the
// face's default of the library's text_without_params, which a URL saying
// text_without_params=false overrides (such a statement is then prepared).
func Test_a_statement_without_args_goes_as_text_unless_the_url_says(t *testing.T) {
	for _, knob := range []string{"", "text_without_params=false"} {
		p := openPool(t, knob)
		c := acquire(t, p)
		prepares := func() int64 { return sessionStatus(t, c, "Com_stmt_prepare") }
		before := prepares()
		if n := queryInt(t, c, "SELECT 41 + 1"); n != 42 {
			t.Fatalf("%q: %d", knob, n)
		}
		want := int64(0)
		if knob != "" {
			want = 1
		}
		if got := prepares() - before; got != want {
			t.Fatalf("%q: %d prepares, want %d", knob, got, want)
		}
		c.Release()
	}
}

// A staunch URL reaches the library whole: the library skips the
// database/sql options (claimed) and the face reads them from the query the
// library's own split finds, so a password holding '?' and '@' is neither
// cut at its '?' nor quoted, and parseTime still takes effect.
func Test_dsn_url_form_is_split_once_by_the_library(t *testing.T) {
	kit.Must(t, "sql 0 CREATE USER IF NOT EXISTS qm@'%' IDENTIFIED BY 'p?w@d'")
	kit.Must(t, "sql 0 GRANT ALL ON staunch_test.* TO qm@'%'")
	u, err := url.Parse(directURL)
	if err != nil {
		t.Fatal(err)
	}
	base := "mysql://qm:p?w@d@" + u.Host + "/staunch_test"
	for _, parseTime := range []bool{true, false} {
		db := sqlOpen(t, fmt.Sprintf("%s?parseTime=%v&max_size=2&loc=UTC", base, parseTime))
		var who string
		if err := db.QueryRow("SELECT CURRENT_USER()").Scan(&who); err != nil || who != "qm@%" {
			t.Fatalf("parseTime=%v: %q %v", parseTime, who, err)
		}
		var v any
		if err := db.QueryRow("SELECT TIMESTAMP'2024-01-02 03:04:05'").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if _, isTime := v.(time.Time); isTime != parseTime {
			t.Errorf("parseTime=%v: scanned a %T", parseTime, v)
		}
	}
	// Claimed names are the face's only: an unknown parameter is still the
	// library's error, naming it and never the password.
	_, err = sql.Open("staunch", base+"?parseTime=true&max_sise=2")
	if err == nil {
		db := sqlOpen(t, base+"?parseTime=true&max_sise=2")
		err = db.Ping()
	}
	if err == nil || !strings.Contains(err.Error(), "max_sise") || strings.Contains(err.Error(), "p?w") {
		t.Errorf("unknown knob: %v", err)
	}
}
