package staunch_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

func openDB(t testing.TB, knobs string) (*staunch.Pool, *sql.DB) {
	t.Helper()
	p := openPool(t, knobs)
	db := staunch.OpenDB(p)
	t.Cleanup(func() { db.Close() })
	return p, db
}

func Test_sql_conf_basic_connections_go_straight_back(t *testing.T) {
	p, db := openDB(t, "max_size=2")
	var n int
	for range 3 {
		if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("SELECT 1: %d %v", n, err)
		}
	}
	if s := p.Stat(); s.InUse != 0 || s.Idle != 1 || s.Acquired != 3 || s.Created != 1 {
		t.Fatalf("staunch stats: %+v", *s)
	}
	if s := db.Stats(); s.Idle != 0 || s.InUse != 0 {
		t.Fatalf("database/sql kept connections: %+v", s)
	}
	if err := db.PingContext(bg); err != nil {
		t.Fatal(err)
	}
}

func Test_sql_conf_types(t *testing.T) {
	_, db := openDB(t, "")
	var (
		ni  sql.NullInt64
		ns  sql.NullString
		nt  sql.NullTime
		i   int64
		u   uint64
		f   float64
		s   string
		b   []byte
		dec string
		dt  time.Time
		tm  string
		bl  bool
	)
	dt0 := time.Date(2023, 7, 1, 12, 34, 56, 789012000, time.UTC)
	err := db.QueryRow("SELECT NULL, NULL, NULL, ?, ?, ?, ?, ?, CAST(? AS DECIMAL(10,3)), CAST(? AS DATETIME(6)), CAST(? AS TIME), ?",
		int64(math.MinInt64), uint64(math.MaxUint64), 2.5, "ünïcode", []byte{0, 'a', 0}, "1.250", dt0, -90*time.Minute, true).
		Scan(&ni, &ns, &nt, &i, &u, &f, &s, &b, &dec, &dt, &tm, &bl)
	if err != nil {
		t.Fatal(err)
	}
	if ni.Valid || ns.Valid || nt.Valid {
		t.Error("NULLs")
	}
	if i != math.MinInt64 || u != math.MaxUint64 || f != 2.5 || s != "ünïcode" || string(b) != "\x00a\x00" {
		t.Errorf("values: %d %d %v %q %q", i, u, f, s, b)
	}
	if dec != "1.250" || !dt.Equal(dt0) || tm != "-01:30:00" || !bl {
		t.Errorf("values: %q %v %q %v", dec, dt, tm, bl)
	}
	rows, err := db.Query("SELECT CAST(1 AS UNSIGNED) AS u, 'x' AS s, 1.5 AS d")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cts[0].DatabaseTypeName(), "UNSIGNED ") || cts[1].DatabaseTypeName() != "VARCHAR" || cts[2].DatabaseTypeName() != "DECIMAL" {
		t.Errorf("type names %q %q %q", cts[0].DatabaseTypeName(), cts[1].DatabaseTypeName(), cts[2].DatabaseTypeName())
	}
	if p, sc, ok := cts[2].DecimalSize(); !ok || p != 2 || sc != 1 {
		t.Errorf("DECIMAL size %d,%d %v", p, sc, ok)
	}
}

func Test_sql_conf_params(t *testing.T) {
	_, db := openDB(t, "")
	if _, err := db.Exec("CREATE OR REPLACE TABLE go_sql_params (id INT PRIMARY KEY, s TEXT)"); err != nil {
		t.Fatal(err)
	}
	evil := "'); DROP TABLE go_sql_params; --"
	if _, err := db.Exec("INSERT INTO go_sql_params VALUES (?, ?)", 1, evil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO go_sql_params VALUES (?, ?)", 2); !errors.Is(err, staunch.ErrInvalid) {
		t.Fatalf("wrong count: %v", err)
	}
	if _, err := db.Exec("INSERT INTO go_sql_params VALUES (?, ?)", 3, struct{}{}); !errors.Is(err, staunch.ErrInvalid) {
		t.Fatalf("a struct parameter: %v", err)
	}
	if _, err := db.Exec("INSERT INTO go_sql_params VALUES (?, ?)", sql.Named("id", 4), "x"); !errors.Is(err, staunch.ErrInvalid) {
		t.Fatalf("named parameter: %v", err)
	}
	var s string
	if err := db.QueryRow("SELECT s FROM go_sql_params WHERE id = ?", 1).Scan(&s); err != nil || s != evil {
		t.Fatalf("%q %v", s, err)
	}
	stmt, err := db.Prepare("SELECT COUNT(*) FROM go_sql_params WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var n int
	for range 3 {
		if err := stmt.QueryRow(1).Scan(&n); err != nil || n != 1 {
			t.Fatalf("prepared: %d %v", n, err)
		}
	}
}

func Test_sql_conf_txn(t *testing.T) {
	p, db := openDB(t, "max_size=1")
	if _, err := db.Exec("CREATE OR REPLACE TABLE go_sql_txn (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(bg, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO go_sql_txn VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	tx, err = db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO go_sql_txn VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("second commit: %v", err)
	}
	if _, err := db.BeginTx(bg, &sql.TxOptions{Isolation: sql.LevelLinearizable}); !errors.Is(err, staunch.ErrInvalid) {
		t.Fatalf("unsupported isolation: %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM go_sql_txn").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows, %v", n, err)
	}
	if s := p.Stat(); s.InUse != 0 {
		t.Fatal("a connection is still in use")
	}
}

func Test_sql_conf_cancel_statement(t *testing.T) {
	_, db := openDB(t, "max_size=1")
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(500*time.Millisecond, cancel)
	t0 := time.Now()
	_, err := db.ExecContext(ctx, "SELECT SLEEP(10)")
	took := time.Since(t0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if took > time.Second+slack() {
		t.Fatalf("returned after %v", took)
	}
	if n := sleepersOnServer(t); n != 0 {
		t.Fatalf("the server still runs %d SLEEP(10)", n)
	}
	var n int
	if err := db.QueryRow("SELECT 1").Scan(&n); err != nil || n != 1 {
		t.Fatal(err)
	}
}

func Test_sql_conf_cancel_get(t *testing.T) {
	p, db := openDB(t, "max_size=1")
	held := acquire(t, p)
	defer held.Release()
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := db.PingContext(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, staunch.ErrPoolExhausted) {
		t.Fatalf("%v", err)
	}
	if took := time.Since(t0); took > 200*time.Millisecond+slack() {
		t.Fatalf("took %v", took)
	}
	if s := p.Stat(); s.Waiting != 0 || s.InUse != 1 {
		t.Fatalf("waiting=%d inuse=%d", s.Waiting, s.InUse)
	}
}

// conf_no_crossed_answer through database/sql, with driver.ErrBadConn only
// where the statement cannot have run.
func Test_sql_conf_no_crossed_answer_and_bad_conn(t *testing.T) {
	p, db := openDB(t, "query_timeout=300ms&max_size=2")
	conn, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = conn.QueryRowContext(bg, "SET STATEMENT max_statement_time=0 FOR SELECT 111 + SLEEP(3)").Scan(&n)
	if !errors.Is(err, staunch.ErrStatementTimeout) || errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("the cut statement (it may have run: not ErrBadConn): %v", err)
	}
	time.Sleep(2 * time.Second)
	// The sql.Conn's connection is broken: the statement is refused before it
	// is sent, and database/sql sees driver.ErrBadConn.
	err = conn.QueryRowContext(bg, "SELECT 222").Scan(&n)
	if !errors.Is(err, driver.ErrBadConn) || n == 111 {
		t.Fatalf("next statement on the broken sql.Conn: %v (n=%d)", err, n)
	}
	conn.Close()
	if err := db.QueryRow("SELECT 222").Scan(&n); err != nil || n != 222 {
		t.Fatalf("the next borrow: %d %v", n, err)
	}
	if s := p.Stat(); s.ClosedBroken != 1 {
		t.Fatalf("closed_broken=%d", s.ClosedBroken)
	}
}

func Test_sql_conf_session_reset(t *testing.T) {
	_, db := openDB(t, "max_size=1")
	if _, err := db.Exec("SET @go_sql_mark = 1"); err != nil {
		t.Fatal(err)
	}
	var mark sql.NullInt64
	if err := db.QueryRow("SELECT @go_sql_mark").Scan(&mark); err != nil || mark.Valid {
		t.Fatalf("the next statement sees the previous borrower's variable: %v %v", mark, err)
	}
}

func Test_sql_conf_threads(t *testing.T) {
	p, db := openDB(t, "max_size=4")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				var got int
				if err := db.QueryRow("SELECT ?", g*1000+i).Scan(&got); err != nil || got != g*1000+i {
					t.Errorf("tag %d: %d %v", g*1000+i, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if s := p.Stat(); s.InUse != 0 || s.Acquired != 1600 {
		t.Fatalf("in use %d acquired %d", s.InUse, s.Acquired)
	}
}

func Test_sql_open_by_name_with_a_bad_dsn_names_both_forms(t *testing.T) {
	_, err := sql.Open("staunch", "not a dsn")
	if !errors.Is(err, staunch.ErrInvalid) || !strings.Contains(err.Error(), "mysql://") || !strings.Contains(err.Error(), "tcp(host:port)") {
		t.Fatalf("sql.Open(\"staunch\", \"not a dsn\"): %v", err)
	}
}

func Test_sql_prepare_reports_a_bad_statement(t *testing.T) {
	_, db := openDB(t, "")
	if _, err := db.Prepare("SELEC nothing"); err == nil || !strings.Contains(err.Error(), "Error 1064 (42000)") {
		t.Fatalf("Prepare of bad SQL: %v", err)
	}
	if _, err := db.Prepare("SELECT * FROM no_such_table_here"); err == nil || !strings.Contains(err.Error(), "Error 1146") {
		t.Fatalf("Prepare of an unknown table: %v", err)
	}
	st, err := db.Prepare("SELECT ? + ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	if err := st.QueryRow(1, 2).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d %v", n, err)
	}
	// database/sql checks the count against NumInput before anything is sent.
	if err := st.QueryRow(1).Scan(&n); err == nil || !strings.Contains(err.Error(), "expected 2 arguments, got 1") {
		t.Fatalf("one argument for two: %v", err)
	}
}

// A statement the server cannot prepare (1295) is accepted at Prepare, as
// go-sql-driver (interpolating) accepts it, with the library's count of its
// placeholders: database/sql checks the arguments against it, and it runs
// as text with its value.
func Test_sql_prepare_accepts_what_only_runs_as_text(t *testing.T) {
	_, db := openDB(t, "max_size=1")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.PrepareContext(ctx, "PREPARE go_ps FROM CONCAT('SELECT 40 + ', ?)")
	if err != nil {
		t.Fatalf("Prepare of a statement the server cannot prepare: %v", err)
	}
	defer st.Close()
	if _, err := st.Exec(); err == nil || !strings.Contains(err.Error(), "expected 1 arguments, got 0") {
		t.Fatalf("no argument for one: %v", err)
	}
	if _, err := st.Exec(2); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "EXECUTE go_ps").Scan(&n); err != nil || n != 42 {
		t.Fatalf("EXECUTE: %d %v", n, err)
	}
}

// A deadlock (two transactions taking the same two row locks in opposite
// orders) fails the loser with an error matching staunch.ErrConflict, as a
// Galera certification failure does: a *MySQLError 1213 (40001), as
// go-sql-driver returns; the other transaction commits.
func Test_sql_deadlock_is_a_conflict(t *testing.T) {
	_, db := openDB(t, "max_size=2")
	for _, q := range []string{
		"CREATE OR REPLACE TABLE go_sql_dl (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB",
		"INSERT INTO go_sql_dl VALUES (1, 0), (2, 0)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	a, err := db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec("UPDATE go_sql_dl SET v = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec("UPDATE go_sql_dl SET v = 2 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	// b waits for a's row 1; a then asks for b's row 2: one is rolled back.
	errB := make(chan error, 1)
	go func() {
		_, err := b.Exec("UPDATE go_sql_dl SET v = 2 WHERE id = 1")
		errB <- err
	}()
	time.Sleep(300 * time.Millisecond)
	_, errA := a.Exec("UPDATE go_sql_dl SET v = 1 WHERE id = 2")
	if errA == nil {
		if err := a.Commit(); err != nil { // b lost: its rollback freed row 1
			t.Fatal(err)
		}
	}
	eb := <-errB
	if (errA == nil) == (eb == nil) {
		t.Fatalf("want exactly one deadlock victim: a=%v b=%v", errA, eb)
	}
	lost, winner := errA, b
	if lost == nil {
		lost, winner = eb, nil
	}
	if !errors.Is(lost, staunch.ErrConflict) {
		t.Fatalf("want an error matching ErrConflict, got %T %v", lost, lost)
	}
	var me *staunch.MySQLError
	if !errors.As(lost, &me) || me.Number != 1213 || me.SQLState != "40001" {
		t.Fatalf("want a *MySQLError 1213 (40001), got %T %v", lost, lost)
	}
	if errors.Is(lost, staunch.ErrBroken) || errors.Is(lost, driver.ErrBadConn) {
		t.Fatalf("a conflict leaves the connection usable: %v", lost)
	}
	if winner != nil {
		if err := winner.Commit(); err != nil {
			t.Fatal(err)
		}
	} else {
		_ = b.Rollback()
	}
	if errA != nil {
		_ = a.Rollback()
	}
	var one *staunch.Error
	if errors.As(lost, &one) {
		t.Fatalf("a server error is no *staunch.Error: %v", lost)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM go_sql_dl WHERE v > 0").Scan(&n); err != nil || n != 2 {
		t.Fatalf("the winner's two rows: %d %v", n, err)
	}
}
