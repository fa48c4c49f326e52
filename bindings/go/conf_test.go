package staunch_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
)

var bg = context.Background()

func openPool(t testing.TB, knobs string) *staunch.Pool {
	t.Helper()
	p, err := staunch.New(bg, withKnobs(directURL, knobs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func queryInt(t testing.TB, q interface {
	QueryRow(context.Context, string, ...any) *staunch.Row
}, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := q.QueryRow(bg, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// sessionStatus is the connection's session status variable name (SHOW
// SESSION STATUS: Questions, Com_stmt_prepare, ...).
func sessionStatus(t testing.TB, c *staunch.Conn, name string) int64 {
	t.Helper()
	var got string
	var n int64
	if err := c.QueryRow(bg, "SHOW SESSION STATUS LIKE '"+name+"'").Scan(&got, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func acquire(t testing.TB, p *staunch.Pool) *staunch.Conn {
	t.Helper()
	c, err := p.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// acquireN borrows n connections and holds them.
func acquireN(t testing.TB, p *staunch.Pool, n int) []*staunch.Conn {
	t.Helper()
	conns := make([]*staunch.Conn, n)
	for i := range conns {
		conns[i] = acquire(t, p)
	}
	return conns
}

// warm makes n connections (borrowed at once) and gives them back idle.
func warm(t testing.TB, p *staunch.Pool, n int) {
	t.Helper()
	for _, c := range acquireN(t, p, n) {
		c.Release()
	}
}

func Test_conf_basic(t *testing.T) {
	p, err := staunch.New(bg, directURL)
	if err != nil {
		t.Fatal(err)
	}
	c := acquire(t, p)
	if n := queryInt(t, c, "SELECT 1"); n != 1 {
		t.Fatalf("SELECT 1 gave %d", n)
	}
	c.Release()
	c.Release() // idempotent
	if n := queryInt(t, p, "SELECT 1"); n != 1 {
		t.Fatalf("pool SELECT 1 gave %d", n)
	}
	p.Close()
	p.Close() // idempotent
	if _, err := p.Acquire(bg); !errors.Is(err, staunch.ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
	if s := p.Stat(); s.Acquired != 2 || s.OpenConnections != 0 {
		t.Fatalf("stats after close: acquired=%d open=%d", s.Acquired, s.OpenConnections)
	}
}

func Test_conf_types(t *testing.T) {
	p := openPool(t, "")
	c := acquire(t, p)
	defer c.Release()
	bin := []byte{0, 1, 2, 0, 255, 'x', 0}
	dt := time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC)
	tm := -(838*time.Hour + 59*time.Minute + 59*time.Second + 999999*time.Microsecond)
	for _, ddl := range []string{
		"DROP TABLE IF EXISTS go_types",
		`CREATE TABLE go_types (id INT PRIMARY KEY, n INT NULL, i BIGINT, u BIGINT UNSIGNED, d DOUBLE,
		  s VARCHAR(64) CHARACTER SET utf8mb4, e VARBINARY(16), b BLOB, dec_ DECIMAL(20,6), da DATE, dt DATETIME(6), tm TIME(6))`,
	} {
		if _, err := c.Exec(bg, ddl); err != nil {
			t.Fatal(err)
		}
	}
	rows := []struct {
		i int64
		u uint64
	}{{math.MinInt64, math.MaxUint64}, {math.MaxInt64, 0}}
	for k, r := range rows {
		_, err := c.Exec(bg, "INSERT INTO go_types VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
			k, nil, r.i, r.u, 3.141592653589793, "héllo wörld ✓ 日本", []byte{}, bin,
			"-12345678901234.123456", time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), dt, tm)
		if err != nil {
			t.Fatal(err)
		}
	}
	for k, want := range rows {
		var (
			n    *int64
			nn   sql.NullInt64
			i    int64
			u    uint64
			d    float64
			s    string
			e, b []byte
			dec  string
			da   time.Time
			dtv  time.Time
			tmv  time.Duration
			anyv any
		)
		err := c.QueryRow(bg, "SELECT n, n, i, u, d, s, e, b, dec_, da, dt, tm, u FROM go_types WHERE id = ?", k).
			Scan(&n, &nn, &i, &u, &d, &s, &e, &b, &dec, &da, &dtv, &tmv, &anyv)
		if err != nil {
			t.Fatal(err)
		}
		if n != nil || nn.Valid {
			t.Errorf("NULL came back as %v / %v", n, nn)
		}
		if i != want.i || u != want.u || anyv != want.u {
			t.Errorf("64-bit edges: %d %d %v, want %d %d", i, u, anyv, want.i, want.u)
		}
		if d != 3.141592653589793 || s != "héllo wörld ✓ 日本" {
			t.Errorf("double/text: %v %q", d, s)
		}
		if e == nil || len(e) != 0 || !bytes.Equal(b, bin) {
			t.Errorf("bytes: empty=%#v bin=%#v", e, b)
		}
		if dec != "-12345678901234.123456" {
			t.Errorf("DECIMAL %q", dec)
		}
		if !da.Equal(time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)) || !dtv.Equal(dt) || tmv != tm {
			t.Errorf("temporal: %v %v %v", da, dtv, tmv)
		}
	}
	// Values in their natural Go types.
	rs, err := c.Query(bg, "SELECT NULL, CAST(-1 AS SIGNED), CAST(18446744073709551615 AS UNSIGNED), 0.5e0, 'x', X'00', 1.50, DATE '2020-01-02', TIME '01:02:03'")
	if err != nil {
		t.Fatal(err)
	}
	if !rs.Next() {
		t.Fatal("no row", rs.Err())
	}
	vals, err := rs.Values()
	if err != nil {
		t.Fatal(err)
	}
	want := []any{nil, int64(-1), uint64(math.MaxUint64), 0.5, "x", []byte{0}, "1.50", time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), time.Hour + 2*time.Minute + 3*time.Second}
	if fmt.Sprintf("%#v", vals) != fmt.Sprintf("%#v", want) {
		t.Errorf("Values:\n got %#v\nwant %#v", vals, want)
	}
	rs.Close()
}

func Test_conf_params(t *testing.T) {
	p := openPool(t, "")
	c := acquire(t, p)
	defer c.Release()
	if _, err := c.Exec(bg, "CREATE OR REPLACE TABLE go_params (id INT PRIMARY KEY, s TEXT)"); err != nil {
		t.Fatal(err)
	}
	evil := "'); DROP TABLE go_params; --"
	r, err := c.Exec(bg, "INSERT INTO go_params VALUES (?, ?)", 1, evil)
	if err != nil || r.RowsAffected != 1 {
		t.Fatalf("right count: %v %+v", err, r)
	}
	_, err = c.Exec(bg, "INSERT INTO go_params VALUES (?, ?)", 2)
	var se *staunch.Error
	if !errors.As(err, &se) || se.Status != staunch.StatusParamCount || !errors.Is(err, staunch.ErrInvalid) {
		t.Fatalf("wrong count: %v", err)
	}
	_, err = c.Exec(bg, "INSERT INTO go_params VALUES (?, ?)", 3, make(chan int))
	if !errors.Is(err, staunch.ErrInvalid) || !strings.Contains(err.Error(), "argument 2") || !strings.Contains(err.Error(), "chan int") {
		t.Fatalf("wrong type: %v", err)
	}
	_, err = c.Exec(bg, "INSERT INTO go_params VALUES (?, ?)", 4, struct{}{})
	if !errors.Is(err, staunch.ErrInvalid) {
		t.Fatalf("struct argument: %v", err)
	}
	var s string
	if err := c.QueryRow(bg, "SELECT s FROM go_params WHERE id = ?", 1).Scan(&s); err != nil || s != evil {
		t.Fatalf("stored %q, %v", s, err)
	}
	if n := queryInt(t, c, "SELECT COUNT(*) FROM go_params"); n != 1 {
		t.Fatalf("the table has %d rows", n)
	}
	// Pointers, named types and Valuers bind too.
	type ID int32
	var nilp *string
	v := "v"
	if n := queryInt(t, c, "SELECT COUNT(*) FROM go_params WHERE id = ? AND ? IS NULL AND ? = 'v' AND ? IS NULL", ID(1), nilp, &v, sql.NullString{}); n != 1 {
		t.Fatalf("pointers/named/Valuer: %d", n)
	}
}

func Test_conf_txn(t *testing.T) {
	p := openPool(t, "max_size=1")
	c := acquire(t, p)
	if _, err := c.Exec(bg, "CREATE OR REPLACE TABLE go_txn (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(bg, "INSERT INTO go_txn VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(bg); !errors.Is(err, staunch.ErrTxDone) {
		t.Fatalf("commit after rollback: %v", err)
	}
	tx, err = c.BeginTx(bg, staunch.TxOptions{Isolation: staunch.IsolationSerializable})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(bg, "INSERT INTO go_txn VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	// Returned mid-transaction: rolled back before the next borrower.
	if _, err := c.Begin(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(bg, "INSERT INTO go_txn VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	c.Release()
	c = acquire(t, p)
	if n := queryInt(t, c, "SELECT COUNT(*) FROM go_txn WHERE id IN (1, 3)"); n != 0 {
		t.Fatalf("rolled-back rows present: %d", n)
	}
	if n := queryInt(t, c, "SELECT COUNT(*) FROM go_txn WHERE id = 2"); n != 1 {
		t.Fatal("committed row absent")
	}
	if n := queryInt(t, c, "SELECT @@in_transaction"); n != 0 {
		t.Fatal("the next borrower is inside the old transaction")
	}
	if s := p.Stat(); s.RollbacksOnReturn != 1 {
		t.Fatalf("rollbacks_on_return = %d", s.RollbacksOnReturn)
	}
	c.Release()
	// Pool.Begin releases on commit (the pool has one connection).
	for range 2 {
		ptx, err := p.Begin(bg)
		if err == nil {
			_, err = ptx.Exec(bg, "INSERT INTO go_txn VALUES (4) ON DUPLICATE KEY UPDATE id = id")
		}
		if err == nil {
			err = ptx.Commit(bg)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stat(); s.InUse != 0 {
		t.Fatalf("Pool.Begin's connection still in use after Commit")
	}
}

func Test_conf_threads(t *testing.T) {
	p := openPool(t, "max_size=4")
	const goroutines, rounds = 8, 500
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				tag := int64(g*100000 + i)
				c, err := p.Acquire(bg)
				if err != nil {
					errs <- err
					return
				}
				var got int64
				err = c.QueryRow(bg, "SELECT ?", tag).Scan(&got)
				c.Release()
				if err != nil || got != tag {
					errs <- fmt.Errorf("tag %d came back as %d (%v)", tag, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := p.Stat()
	if s.InUse != 0 || s.Acquired != goroutines*rounds || s.Violations != 0 || s.OpenConnections > 4 {
		t.Fatalf("stats: in use %d, acquired %d, open %d, violations %d", s.InUse, s.Acquired, s.OpenConnections, s.Violations)
	}
}

func Test_conf_timeout_exhausted(t *testing.T) {
	p := openPool(t, "max_size=1")
	held := acquire(t, p)
	defer held.Release()
	for _, how := range []string{"context deadline", "pool connection_timeout"} {
		var err error
		t0 := time.Now()
		if how == "context deadline" {
			ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
			_, err = p.Acquire(ctx)
			cancel()
		} else {
			p2 := openPool(t, "max_size=1&connection_timeout=200ms")
			h := acquire(t, p2)
			t0 = time.Now()
			_, err = p2.Acquire(bg)
			h.Release()
		}
		took := time.Since(t0)
		if !errors.Is(err, staunch.ErrPoolExhausted) || !strings.Contains(err.Error(), "exhausted") {
			t.Fatalf("%s: %v", how, err)
		}
		if took < 190*time.Millisecond || took > 200*time.Millisecond+slack() {
			t.Fatalf("%s: took %v", how, took)
		}
		if how == "context deadline" && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("does not match context.DeadlineExceeded: %v", err)
		}
	}
	if n := queryInt(t, held, "SELECT 7"); n != 7 {
		t.Fatal("held connection")
	}
}

// conf_a1 / conf_a2: incident A through the chaos proxy in black-hole mode
// (it accepts TCP and never sends the greeting).
func Test_conf_a1_black_hole_then_conf_a2_recovery(t *testing.T) {
	kit.Must(t, "mode blackhole")
	t.Cleanup(func() { kit.Do("mode pass") })
	const connectTimeout = 500 * time.Millisecond
	p, err := staunch.New(bg, withKnobs(proxyURL, "connect_timeout=500ms&max_size=2"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before := runtime.NumGoroutine()

	// conf_a1
	bound := 3 * connectTimeout
	ctx, cancel := context.WithTimeout(bg, bound)
	t0 := time.Now()
	_, err = p.Acquire(ctx)
	took := time.Since(t0)
	cancel()
	if !errors.Is(err, staunch.ErrUnreachable) {
		t.Fatalf("conf_a1: %v", err)
	}
	if !strings.Contains(err.Error(), proxyAddr) || !strings.Contains(err.Error(), "greeting") {
		t.Fatalf("conf_a1: the error does not say where and why: %v", err)
	}
	if took < bound-10*time.Millisecond || took > bound+slack() {
		t.Fatalf("conf_a1: took %v for a %v bound", took, bound)
	}
	t.Logf("conf_a1: %v after %v", err, took)
	deadline := time.Now().Add(connectTimeout + slack() + 200*time.Millisecond)
	for p.Stat().Connecting != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := p.Stat(); s.Connecting != 0 || s.ConnectFailures < 1 || s.OpenConnections != 0 || s.Waiting != 0 {
		t.Fatalf("conf_a1: connecting=%d failures=%d open=%d waiting=%d", s.Connecting, s.ConnectFailures, s.OpenConnections, s.Waiting)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("conf_a1: %d goroutines left behind", n-before)
	}

	// conf_a2
	kit.Must(t, "mode pass")
	ctx, cancel = context.WithTimeout(bg, 3*connectTimeout+2*time.Second)
	defer cancel()
	t0 = time.Now()
	c, err := p.Acquire(ctx)
	took = time.Since(t0)
	if err != nil {
		t.Fatalf("conf_a2: %v", err)
	}
	if n := queryInt(t, c, "SELECT 1"); n != 1 {
		t.Fatal("conf_a2: SELECT 1")
	}
	if took > connectTimeout+time.Second+slack() {
		t.Fatalf("conf_a2: recovery took %v", took)
	}
	c2, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("conf_a2: second get: %v", err)
	}
	if n := queryInt(t, c2, "SELECT 2"); n != 2 {
		t.Fatal("conf_a2: SELECT 2")
	}
	c2.Release()
	c.Release()
	t.Logf("conf_a2: recovered in %v", took)
}

func Test_conf_server_kill(t *testing.T) {
	p := openPool(t, "max_size=4")
	const n = 4
	conns := make([]*staunch.Conn, n)
	ids := map[uint64]bool{}
	for i := range conns {
		conns[i] = acquire(t, p)
		id, err := conns[i].ServerID()
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	for _, c := range conns {
		c.Release()
	}
	for id := range ids {
		kit.Must(t, fmt.Sprintf("sql 0 KILL CONNECTION %d", id))
	}
	time.Sleep(600 * time.Millisecond) // past alive_bypass_window: idle ones are validated
	for i := range conns {
		c, err := p.Acquire(bg)
		if err != nil {
			t.Fatalf("checkout %d after the kill: %v", i, err)
		}
		conns[i] = c
		if n := queryInt(t, c, "SELECT 1"); n != 1 {
			t.Fatal("SELECT 1")
		}
		if id, err := c.ServerID(); err != nil || ids[id] {
			t.Fatalf("got the killed session %d back (%v)", id, err)
		}
	}
	for _, c := range conns {
		c.Release()
	}
	if s := p.Stat(); s.Validations < n || s.ClosedBroken < n {
		t.Fatalf("validation_failures=%d closed_broken=%d", s.Validations, s.ClosedBroken)
	}
}

func Test_conf_bad_input(t *testing.T) {
	isInvalid := func(what string, err error) {
		t.Helper()
		if err == nil || !errors.Is(err, staunch.ErrInvalid) {
			t.Errorf("%s: want an ErrInvalid error, got %v", what, err)
		}
	}
	// nil where an object is expected
	var nilPool *staunch.Pool
	_, err := nilPool.Acquire(bg)
	isInvalid("nil pool", err)
	nilPool.Close()
	_ = nilPool.Stat()
	var nilConn *staunch.Conn
	_, err = nilConn.Exec(bg, "SELECT 1")
	isInvalid("nil conn", err)
	nilConn.Release()
	var nilRows *staunch.Rows
	if nilRows.Next() {
		t.Error("nil rows Next")
	}
	isInvalid("nil rows Scan", nilRows.Scan())
	_, err = staunch.NewWithConfig(bg, nil)
	isInvalid("nil config", err)
	//lint:ignore SA1012 nil context on purpose
	_, err = staunch.New(nil, directURL) //nolint:staticcheck
	isInvalid("nil context", err)

	// an invalid URL, an unknown knob, a bad value, a negative timeout
	for _, url := range []string{"", "postgres://x@y/z", "mysql://app@127.0.0.1:notaport/db", "mysql://app@127.0.0.1/db?max_size=-3", "mysql://a@h/db?frobnicate=1"} {
		_, err = staunch.New(bg, url)
		isInvalid("URL "+url, err)
	}
	_, err = staunch.NewWithConfig(bg, &staunch.Config{URL: directURL, Knobs: map[string]string{"no_such_knob": "1"}})
	isInvalid("unknown knob", err)
	if err != nil && !strings.Contains(err.Error(), "no_such_knob") {
		t.Errorf("the error does not name the knob: %v", err)
	}
	_, err = staunch.NewWithConfig(bg, &staunch.Config{URL: directURL, ConnectTimeout: -time.Second})
	isInvalid("negative ConnectTimeout", err)
	if err != nil && !strings.Contains(err.Error(), "connect_timeout") {
		t.Errorf("the error does not name the knob: %v", err)
	}

	p := openPool(t, "max_size=2")
	c := acquire(t, p)
	isInvalid("negative statement timeout", c.SetStatementTimeout(-time.Millisecond))
	_, err = c.Exec(bg, "SELECT 1\x00; DROP TABLE x")
	isInvalid("NUL in SQL", err)
	_, err = c.Exec(bg, "SELEKT 1")
	var me *staunch.MySQLError
	if !errors.As(err, &me) || me.Number != 1064 || me.SQLState != "42000" {
		t.Errorf("syntax error: %v", err)
	}
	var a, b int
	isInvalid("Scan count", c.QueryRow(bg, "SELECT 1, 2").Scan(&a))
	if err := c.QueryRow(bg, "SELECT 'abc'").Scan(&a); err == nil {
		t.Error("'abc' scanned into an int")
	}
	if err := c.QueryRow(bg, "SELECT NULL").Scan(&a); err == nil || !strings.Contains(err.Error(), "NULL") {
		t.Errorf("NULL into int: %v", err)
	}
	if err := c.QueryRow(bg, "SELECT 300").Scan(new(int8)); err == nil {
		t.Error("300 fits in an int8?")
	}
	if err := c.QueryRow(bg, "SELECT 1").Scan(a); err == nil {
		t.Error("Scan into a non-pointer")
	}
	if err := c.QueryRow(bg, "SELECT 1 FROM DUAL WHERE 0").Scan(&a); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no rows: %v", err)
	}
	rs, err := c.Query(bg, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Scan(&a); err == nil {
		t.Error("Scan before Next")
	}
	rs.Close()
	rs.Close()

	// use after release
	c.Release()
	_, err = c.Exec(bg, "SELECT 1")
	if !errors.Is(err, staunch.ErrReleased) {
		t.Errorf("use after release: %v", err)
	}
	if _, err := c.Begin(bg); !errors.Is(err, staunch.ErrReleased) {
		t.Errorf("begin after release: %v", err)
	}
	// use after pool close
	c = acquire(t, p)
	p.Close()
	if _, err := c.Exec(bg, "SELECT 1"); !errors.Is(err, staunch.ErrClosed) {
		t.Errorf("use after pool close: %v", err)
	}
	c.Release()
	if err := p.QueryRow(bg, "SELECT 1").Scan(&b); !errors.Is(err, staunch.ErrClosed) {
		t.Errorf("pool use after close: %v", err)
	}
}

func Test_conf_stats(t *testing.T) {
	p := openPool(t, "max_size=2&min_idle=0")
	check := func(step string, total, active, idle, acquired, created, timeouts int64) {
		t.Helper()
		s := p.Stat()
		if int64(s.OpenConnections) != total || int64(s.InUse) != active || int64(s.Idle) != idle ||
			s.Acquired != acquired || s.Created != created || s.AcquireTimeouts != timeouts ||
			s.Waiting != 0 || s.Violations != 0 || s.ConnectFailures != 0 {
			t.Fatalf("%s: %+v", step, *s)
		}
		if s.AcquireCount() != acquired || s.TotalConns() != int32(total) || s.IdleConns() != int32(idle) || s.MaxConns() != 2 {
			t.Fatalf("%s: pgxpool-style methods disagree", step)
		}
	}
	check("opened", 0, 0, 0, 0, 0, 0)
	a := acquire(t, p)
	check("one", 1, 1, 0, 1, 1, 0)
	b := acquire(t, p)
	check("two", 2, 2, 0, 2, 2, 0)
	a.Release()
	check("released one", 2, 1, 1, 2, 2, 0)
	a = acquire(t, p)
	check("reused", 2, 2, 0, 3, 2, 0)
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	_, err := p.Acquire(ctx)
	cancel()
	if !errors.Is(err, staunch.ErrPoolExhausted) {
		t.Fatal(err)
	}
	check("timed out", 2, 2, 0, 3, 2, 1)
	if _, err := b.Begin(bg); err != nil {
		t.Fatal(err)
	}
	b.Release()
	a.Release()
	check("both back", 2, 0, 2, 3, 2, 1)
	if s := p.Stat(); s.RollbacksOnReturn != 1 || s.AcquiresCancelled != 0 {
		t.Fatalf("rollbacks_on_return=%d cancelled=%d", s.RollbacksOnReturn, s.AcquiresCancelled)
	}
	ctx, cancel = context.WithCancel(bg)
	cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	check("cancelled before the call: never reached the pool", 2, 0, 2, 3, 2, 1)
	p.Close()
	s := p.Stat()
	if s.OpenConnections != 0 || s.ClosedPoolClosed != 2 || s.Acquired != 3 {
		t.Fatalf("after close: %+v", *s)
	}
}

func Test_conf_events(t *testing.T) {
	kit.Must(t, "mode reset")
	t.Cleanup(func() { kit.Do("mode pass") })
	var mu sync.Mutex
	var got []staunch.Event
	goroutines := map[uint64]bool{} // the goroutines OnEvent ran on
	p, err := staunch.NewWithConfig(bg, &staunch.Config{
		URL: withKnobs(proxyURL, "connect_timeout=500ms&max_size=1"),
		OnEvent: func(e staunch.Event) {
			g := goroutineID()
			mu.Lock()
			got = append(got, e)
			goroutines[g] = true
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 800*time.Millisecond)
	_, err = p.Acquire(ctx)
	cancel()
	if !errors.Is(err, staunch.ErrUnreachable) {
		t.Fatalf("through a resetting proxy: %v", err)
	}
	kit.Must(t, "mode pass")
	c, err := p.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	wait := func(kind staunch.EventKind) staunch.Event {
		deadline := time.Now().Add(2*time.Second + slack())
		for time.Now().Before(deadline) {
			mu.Lock()
			for _, e := range got {
				if e.Kind == kind {
					mu.Unlock()
					return e
				}
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no %v event; got %v", kind, got)
		return staunch.Event{}
	}
	failed := wait(staunch.EventConnectFailed)
	rec := wait(staunch.EventRecovered)
	if failed.Status == staunch.StatusOK || failed.Message == "" || failed.PoolID == 0 {
		t.Errorf("connect_failed event: %+v", failed)
	}
	if rec.Count < 1 || !rec.At.After(failed.At) {
		t.Errorf("recovered event: %+v", rec)
	}
	p.Close()
	mu.Lock()
	n := len(got)
	mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Errorf("%d events after Close returned", len(got)-n)
	}
	closed := false
	for _, e := range got {
		closed = closed || e.Kind == staunch.EventPoolClosed
	}
	if !closed {
		t.Errorf("no pool_closed event before Close returned: %v", got)
	}
	// As documented: one goroutine of the pool, whatever thread saw them.
	if len(goroutines) != 1 {
		t.Errorf("OnEvent ran on %d goroutines", len(goroutines))
	}
}

func goroutineID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	var id uint64
	fmt.Sscanf(string(buf), "goroutine %d ", &id)
	return id
}

// A Conn nobody releases is closed by its finalizer (a fallback: it is
// discarded, not returned, since a finalizer must not block).
func Test_finalizer_fallback_for_a_forgotten_conn(t *testing.T) {
	p := openPool(t, "max_size=1")
	func() {
		c := acquire(t, p)
		if n := queryInt(t, c, "SELECT 1"); n != 1 {
			t.Fatal(n)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for p.Stat().InUse != 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if s := p.Stat(); s.InUse != 0 {
		t.Fatalf("the forgotten connection is still in use")
	}
	c := acquire(t, p)
	defer c.Release()
	if n := queryInt(t, c, "SELECT 2"); n != 2 {
		t.Fatal(n)
	}
}

func Test_conf_cancel_get(t *testing.T) {
	p := openPool(t, "max_size=1")
	held := acquire(t, p)
	defer held.Release()
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		_, err := p.Acquire(ctx)
		done <- err
	}()
	deadline := time.Now().Add(2 * time.Second)
	for p.Stat().Waiting != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.Stat().Waiting != 1 {
		t.Fatal("the second Acquire does not wait")
	}
	t0 := time.Now()
	cancel()
	var err error
	var took time.Duration
	select {
	case err = <-done:
		took = time.Since(t0)
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled Acquire did not return")
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, staunch.ErrCancelled) {
		t.Fatalf("cancelled Acquire: %v", err)
	}
	if took > 100*time.Millisecond+slack() {
		t.Fatalf("returned %v after the cancel", took)
	}
	s := p.Stat()
	if s.Waiting != 0 || s.InUse != 1 || s.AcquiresCancelled != 1 || s.CanceledAcquireCount() != 1 {
		t.Fatalf("stats: waiting=%d inuse=%d cancelled=%d", s.Waiting, s.InUse, s.AcquiresCancelled)
	}
	if n := queryInt(t, held, "SELECT 5"); n != 5 {
		t.Fatal("held connection")
	}
}

func sleepersOnServer(t *testing.T) int64 {
	return kit.QueryInt(t, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(10)%'")
}

func Test_conf_cancel_statement(t *testing.T) {
	p := openPool(t, "max_size=1")
	c := acquire(t, p)
	defer c.Release()
	for _, op := range []string{"exec", "query"} {
		ctx, cancel := context.WithCancel(bg)
		timer := time.AfterFunc(500*time.Millisecond, cancel)
		t0 := time.Now()
		var err error
		if op == "exec" {
			_, err = c.Exec(ctx, "SELECT SLEEP(10)")
		} else {
			var n int64
			err = c.QueryRow(ctx, "SELECT SLEEP(10)").Scan(&n)
		}
		took := time.Since(t0)
		timer.Stop()
		cancel()
		if !errors.Is(err, context.Canceled) || !errors.Is(err, staunch.ErrCancelled) {
			t.Fatalf("%s: %v", op, err)
		}
		if took > time.Second+slack() {
			t.Fatalf("%s: returned after %v", op, took)
		}
		if n := sleepersOnServer(t); n != 0 {
			t.Fatalf("%s: the server still runs %d SLEEP(10)", op, n)
		}
		if n := queryInt(t, c, "SELECT 1"); n != 1 {
			t.Fatal("the same connection")
		}
		t.Logf("%s: cancelled, returned after %v", op, took)
	}
}

func Test_conf_cancel_statement_deadline(t *testing.T) {
	p := openPool(t, "max_size=1")
	c := acquire(t, p)
	defer c.Release()
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := c.Exec(ctx, "SELECT SLEEP(10)")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	if took := time.Since(t0); took > time.Second+slack() {
		t.Fatalf("returned after %v", took)
	}
	if n := sleepersOnServer(t); n != 0 {
		t.Fatalf("the server still runs %d SLEEP(10)", n)
	}
	if n := queryInt(t, c, "SELECT 1"); n != 1 {
		t.Fatal("the same connection")
	}
}

func Test_conf_statement_timeout(t *testing.T) {
	p := openPool(t, "max_size=1")
	c := acquire(t, p)
	defer c.Release()
	if err := c.SetStatementTimeout(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := c.Exec(bg, "SELECT SLEEP(5)")
	took := time.Since(t0)
	if !errors.Is(err, staunch.ErrStatementTimeout) || errors.Is(err, staunch.ErrBroken) {
		t.Fatalf("want a statement timeout, got %v", err)
	}
	if took > time.Second+slack() {
		t.Fatalf("took %v", took)
	}
	if c.IsBroken() {
		t.Fatal("the connection is broken")
	}
	if n := queryInt(t, c, "SELECT 1"); n != 1 {
		t.Fatal("SELECT 1 after the timeout")
	}
	// And as a pool knob.
	p2 := openPool(t, "max_size=1&query_timeout=300ms")
	_, err = p2.Exec(bg, "SELECT SLEEP(5)")
	if !errors.Is(err, staunch.ErrStatementTimeout) {
		t.Fatalf("query_timeout knob: %v", err)
	}
}

func Test_conf_no_crossed_answer(t *testing.T) {
	p := openPool(t, "query_timeout=300ms&max_size=1")
	c := acquire(t, p)
	t0 := time.Now()
	var n int64
	err := c.QueryRow(bg, "SET STATEMENT max_statement_time=0 FOR SELECT 111 + SLEEP(3)").Scan(&n)
	took := time.Since(t0)
	if !errors.Is(err, staunch.ErrStatementTimeout) {
		t.Fatalf("the cut statement: %v", err)
	}
	if took < 1200*time.Millisecond || took > 2500*time.Millisecond+slack() {
		t.Fatalf("cut off after %v", took)
	}
	if !c.IsBroken() {
		t.Fatal("not broken")
	}
	time.Sleep(2 * time.Second) // the late answer (111) has arrived by now
	err = c.QueryRow(bg, "SELECT 222").Scan(&n)
	if !errors.Is(err, staunch.ErrBroken) || n == 111 {
		t.Fatalf("the next statement: %v (n=%d)", err, n)
	}
	if _, err := c.Exec(bg, "SELECT 222"); !errors.Is(err, staunch.ErrBroken) {
		t.Fatalf("exec on the broken connection: %v", err)
	}
	c.Release()
	c = acquire(t, p)
	defer c.Release()
	if got := queryInt(t, c, "SELECT 222"); got != 222 {
		t.Fatalf("the next borrow answered %d", got)
	}
	if s := p.Stat(); s.ClosedBroken != 1 || s.StatementsCut != 1 {
		t.Fatalf("closed_broken=%d statements_cut=%d", s.ClosedBroken, s.StatementsCut)
	}
}

func Test_conf_session_reset(t *testing.T) {
	p := openPool(t, "max_size=1")
	c := acquire(t, p)
	var tz0 string
	if err := c.QueryRow(bg, "SELECT @@session.time_zone").Scan(&tz0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(bg, "SET @go_mark = 42, time_zone = '+05:30'"); err != nil {
		t.Fatal(err)
	}
	c.Release()
	c = acquire(t, p)
	defer func() { c.Release() }() // idempotent; the last one borrowed
	var mark *int64
	var tz string
	if err := c.QueryRow(bg, "SELECT @go_mark, @@session.time_zone").Scan(&mark, &tz); err != nil {
		t.Fatal(err)
	}
	if mark != nil || tz != tz0 {
		t.Fatalf("the next borrower sees @go_mark=%v time_zone=%q (pool's: %q)", mark, tz, tz0)
	}
	if s := p.Stat(); s.ResetsOnReturn != 1 {
		t.Fatalf("resets_on_return = %d", s.ResetsOnReturn)
	}
	// What the server's tracker does not report is undone too: a
	// user-level lock, a variable set inside a SELECT.
	if _, err := c.Exec(bg, "SELECT GET_LOCK('conf', 0), @go_y := 7"); err != nil {
		t.Fatal(err)
	}
	c.Release()
	c = acquire(t, p)
	var free bool
	var y *int64
	if err := c.QueryRow(bg, "SELECT IS_USED_LOCK('conf') IS NULL, @go_y").Scan(&free, &y); err != nil {
		t.Fatal(err)
	}
	c.Release()
	if !free || y != nil {
		t.Fatalf("the next borrower sees the lock held: %v, @go_y=%v", !free, y)
	}
}

// Every watcher a cancellable call starts ends with the call: after many
// cancelled acquires and statements, no goroutine is left.
func Test_no_goroutine_leak_after_cancels(t *testing.T) {
	p := openPool(t, "max_size=1")
	runtime.GC()
	before := runtime.NumGoroutine()
	held := acquire(t, p)
	for range 20 {
		ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
		if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		cancel()
		ctx, cancel = context.WithCancel(bg)
		time.AfterFunc(5*time.Millisecond, cancel)
		if _, err := p.Acquire(ctx); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	for range 3 {
		ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
		if _, err := held.Exec(ctx, "SELECT SLEEP(5)"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		cancel()
		// Cancellable statements that complete: the watcher is unregistered.
		ctx, cancel = context.WithCancel(bg)
		if n := queryInt(t, held, "SELECT 3"); n != 3 {
			t.Fatal(n)
		}
		if _, err := held.Exec(ctx, "DO 1"); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	held.Release()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines left:\n%s", n-before, buf[:runtime.Stack(buf, true)])
	}
}

// A Conn shared by goroutines (a misuse) is serialized, never a crash.
func Test_many_goroutines_share_a_conn(t *testing.T) {
	p := openPool(t, "max_size=2")
	c := acquire(t, p)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				var n int
				err := c.QueryRow(bg, "SELECT ?", g*1000+i).Scan(&n)
				if errors.Is(err, staunch.ErrReleased) {
					return // released by the other goroutine: refused, not a crash
				}
				if err != nil || n != g*1000+i {
					t.Errorf("got %d, %v", n, err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); time.Sleep(20 * time.Millisecond); c.Release() }()
	wg.Wait()
	c.Release()
	if s := p.Stat(); s.InUse != 0 || s.Violations != 0 {
		t.Fatalf("in use %d, violations %d", s.InUse, s.Violations)
	}
}

func Test_rows_scan_many_rows_in_batches(t *testing.T) {
	p := openPool(t, "")
	rs, err := p.Query(bg, "SELECT seq, CONCAT('r', seq) FROM seq_1_to_1000")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if cols := rs.Columns(); len(cols) != 2 || cols[0] != "seq" {
		t.Fatalf("columns %v", cols)
	}
	if ct := rs.ColumnTypes(); ct[0].Kind != staunch.KindUint || ct[1].Kind != staunch.KindText {
		t.Fatalf("column types %+v", ct)
	}
	var k uint64
	for rs.Next() {
		var n uint64
		var s string
		if err := rs.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		k++
		if n != k || s != fmt.Sprint("r", k) {
			t.Fatalf("row %d: %d %q", k, n, s)
		}
	}
	if rs.Err() != nil || k != 1000 {
		t.Fatalf("%d rows, %v", k, rs.Err())
	}
}

// QueryStream (the one call of a context that cannot end, and Acquire's
// way under one that can; text and with arguments): every row in order,
// the connection held while the rows stream and back once they end, or once
// they are closed early.
func Test_pool_query_stream_holds_a_connection_until_the_rows_end(t *testing.T) {
	p := openPool(t, "max_size=1")
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		args []any
	}{
		{"one call, text", bg, nil},
		{"one call, prepared", bg, []any{0}},
		{"cancellable, text", ctx, nil},
		{"cancellable, prepared", ctx, []any{0}},
	} {
		sql := "SELECT seq FROM seq_1_to_10000"
		if c.args != nil {
			sql += " WHERE seq > ?"
		}
		rs, err := p.QueryStream(c.ctx, sql, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if in := p.Stat().InUse; in != 1 {
			t.Fatalf("%s: %d connections in use while the rows stream", c.name, in)
		}
		var k uint64
		for rs.Next() {
			var n uint64
			if err := rs.Scan(&n); err != nil {
				t.Fatal(err)
			}
			k++
			if n != k {
				t.Fatalf("%s: row %d has %d", c.name, k, n)
			}
		}
		if rs.Err() != nil || k != 10000 {
			t.Fatalf("%s: %d rows, %v", c.name, k, rs.Err())
		}
		if in := p.Stat().InUse; in != 0 {
			t.Fatalf("%s: %d connections in use after the last row", c.name, in)
		}
		rs.Close()
		rs, err = p.QueryStream(c.ctx, sql, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := 0; i < 3 && rs.Next(); i++ {
		}
		rs.Close()
		var five int
		if err := p.QueryRow(bg, "SELECT 5").Scan(&five); err != nil || five != 5 {
			t.Fatalf("%s: after rows closed early: %d, %v", c.name, five, err)
		}
	}
}

// Statements with arguments are prepared once per connection: a prepare
// alone leaves nothing to reset, so releasing such a borrow costs no round
// trip and the next borrow of the connection reuses the prepared statement.
// (Before the core's fix every such borrow was reset on release, which
// also dropped the prepared statement.) A prepared SET of a user variable
// is still reset, and the next borrower does not see it.
func Test_parameters_cost_no_reset_on_release(t *testing.T) {
	p := openPool(t, "max_size=1")
	for i := int64(0); i < 100; i++ {
		if got := queryInt(t, p, "SELECT ? + 0", i); got != i {
			t.Fatalf("SELECT ? + 0 with %d: %d", i, got)
		}
	}
	if s := p.Stat(); s.ResetsOnReturn != 0 || s.Created != 1 {
		t.Fatalf("resets_on_return=%d created=%d after 100 parameterized borrows", s.ResetsOnReturn, s.Created)
	}
	if _, err := p.Exec(bg, "SET @staunch_y = ?", 7); err != nil {
		t.Fatal(err)
	}
	if s := p.Stat(); s.ResetsOnReturn != 1 {
		t.Fatalf("a prepared SET @var: resets_on_return=%d, want 1", s.ResetsOnReturn)
	}
	if n := queryInt(t, p, "SELECT COUNT(@staunch_y)"); n != 0 {
		t.Fatalf("the next borrower sees @staunch_y")
	}
}

// At the defaults: the server frozen 1 s into SELECT SLEEP(3) fails within
// the liveness bound (threshold 5 s + connect_timeout 3 s +
// validation_timeout 1 s) with an error matching ErrServerUnresponsive and
// ErrBroken; the pool serves after the thaw. Meanwhile SELECT SLEEP(25) on
// a healthy server (a second test kit) returns its answer.
func Test_conf_frozen_statement(t *testing.T) {
	healthy, err := testkit.Start("server")
	if err != nil {
		t.Fatal(err)
	}
	defer healthy.Stop()
	long := make(chan error, 1)
	go func() {
		hp, err := staunch.New(bg, healthy.Ready.Servers[0].URL)
		if err != nil {
			long <- err
			return
		}
		defer hp.Close()
		var v int64
		if err := hp.QueryRow(bg, "SELECT 25 + SLEEP(25)").Scan(&v); err != nil {
			long <- err
			return
		}
		if v != 25 {
			long <- fmt.Errorf("SLEEP(25) answered %d", v)
			return
		}
		long <- nil
	}()

	p := openPool(t, "")
	c := acquire(t, p)
	froze := make(chan time.Time, 1)
	timer := time.AfterFunc(time.Second, func() {
		_, _ = kit.Do("freeze")
		froze <- time.Now()
	})
	defer timer.Stop()
	_, err = c.Exec(bg, "SELECT SLEEP(3)")
	returned := time.Now()
	kit.Must(t, "thaw")
	if !errors.Is(err, staunch.ErrServerUnresponsive) || !errors.Is(err, staunch.ErrBroken) {
		t.Fatalf("want an error matching ErrServerUnresponsive and ErrBroken, got %v", err)
	}
	if !strings.Contains(err.Error(), "the server stopped answering during this statement") {
		t.Fatalf("message: %v", err)
	}
	if after := returned.Sub(<-froze); after > 9*time.Second+slack()+500*time.Millisecond {
		t.Fatalf("returned %v after the freeze", after)
	}
	c.Release()
	if n := queryInt(t, p, "SELECT 1"); n != 1 {
		t.Fatal("SELECT 1 after the thaw")
	}
	if err := <-long; err != nil {
		t.Fatalf("SELECT SLEEP(25) on a healthy server: %v", err)
	}
}

// Statements without arguments wait for their answer in Go's netpoller, not
// in a thread blocked in the library, once more of them run than leave a P
// free (GOMAXPROCS - 1, at least 1, wait in their threads: a blocked read
// answers sooner): eight at once on GOMAXPROCS=2, of which at most one
// blocks, overlap on the server and each gets its own answer; one alone
// waits in its thread.
func Test_statements_wait_in_the_netpoller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	p := openPool(t, "max_size=8")
	const n = 8
	// Every connection open first.
	warm(t, p, n)
	before := staunch.PollerWaits()
	c := acquire(t, p)
	if v := queryInt(t, c, "SELECT 7"); v != 7 {
		t.Fatal(v)
	}
	c.Release()
	if waits := staunch.PollerWaits() - before; waits != 0 {
		t.Fatalf("a statement alone waited in the netpoller (%d)", waits)
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := p.Acquire(bg)
			if err != nil {
				errs <- err
				return
			}
			defer c.Release()
			var v int64
			if i == n-1 {
				// The last: cancelled by its deadline, whichever way it waits.
				ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
				defer cancel()
				t0 := time.Now()
				err := c.QueryRow(ctx, "SELECT SLEEP(10)").Scan(&v)
				if !errors.Is(err, context.DeadlineExceeded) {
					errs <- fmt.Errorf("cancelled statement: %v", err)
				} else if took := time.Since(t0); took > time.Second+slack() {
					errs <- fmt.Errorf("cancelled statement returned after %v", took)
				}
				return
			}
			if err := c.QueryRow(bg, fmt.Sprintf("SELECT %d + SLEEP(0.5)", i)).Scan(&v); err != nil {
				errs <- err
			} else if v != int64(i) {
				errs <- fmt.Errorf("goroutine %d got %d", i, v)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	took := time.Since(t0)
	if waits := staunch.PollerWaits() - before; waits < n-1 {
		t.Fatalf("%d of %d statements waited in the netpoller, want %d or more", waits, n, n-1)
	}
	if n := sleepersOnServer(t); n != 0 {
		t.Fatalf("the server still runs %d SLEEP(10)", n)
	}
	if took > 2*time.Second+slack() {
		t.Fatalf("8 statements of 0.5 s took %v: they did not overlap", took)
	}

	// The same through the pool's own QueryRow (borrow, send, wait, receive
	// and give back).
	before = staunch.PollerWaits()
	errs = make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v int64
			if err := p.QueryRow(bg, fmt.Sprintf("SELECT %d + SLEEP(0.3)", i)).Scan(&v); err != nil {
				errs <- err
			} else if v != int64(i) {
				errs <- fmt.Errorf("pool: goroutine %d got %d", i, v)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if waits := staunch.PollerWaits() - before; waits < n-1 {
		t.Fatalf("pool: %d of %d statements waited in the netpoller, want %d or more", waits, n, n-1)
	}
	if st := p.Stat(); st.InUse != 0 {
		t.Fatalf("pool: %d connections still borrowed", st.InUse)
	}
}

// Statements with arguments (prepared: staunch_conn_query_send_ex) wait in
// the netpoller too, Query and Exec alike: eight at once on GOMAXPROCS=2
// overlap on the server, each gets its own answer (the binary protocol's
// integers), and a prepare the server refuses is the statement's error.
func Test_statements_with_arguments_wait_in_the_netpoller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	p := openPool(t, "max_size=8")
	const n = 8
	warm(t, p, n)
	before := staunch.PollerWaits()
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := p.Acquire(bg)
			if err != nil {
				errs <- err
				return
			}
			defer c.Release()
			for run := range 2 {
				var v int64
				if err := c.QueryRow(bg, "SELECT ? + SLEEP(0.3)", i*10+run).Scan(&v); err != nil {
					errs <- err
				} else if v != int64(i*10+run) {
					errs <- fmt.Errorf("goroutine %d run %d got %d", i, run, v)
				}
			}
			if _, err := c.Exec(bg, "DO SLEEP(?)", 0.2); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	took := time.Since(t0)
	if waits := staunch.PollerWaits() - before; waits < 3*(n-1) {
		t.Fatalf("%d of %d statements waited in the netpoller, want %d or more", waits, 3*n, 3*(n-1))
	}
	if took > 3*time.Second+slack() {
		t.Fatalf("8 x 0.8 s of statements took %v: they did not overlap", took)
	}
	// A statement the server cannot prepare fails as the statement; the
	// connection goes on.
	c := acquire(t, p)
	defer c.Release()
	var v int64
	err := c.QueryRow(bg, "SELECT * FROM no_such_table_np WHERE a = ?", 1).Scan(&v)
	var me *staunch.MySQLError
	if !errors.As(err, &me) || me.Number != 1146 {
		t.Fatalf("a missing table: %v", err)
	}
	if v := queryInt(t, c, "SELECT 8"); v != 8 {
		t.Fatal(v)
	}
}

// Test_conf_auth_plugins: users of mysql_native_password and ed25519
// connect; a user of a plugin staunch does not speak (PAM asks for
// "dialog") gets ErrConnectRejected naming the plugin at once, not
// "unreachable" at the acquire timeout.
func Test_conf_auth_plugins(t *testing.T) {
	k, err := testkit.Start("server")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	for _, q := range []string{
		"INSTALL PLUGIN IF NOT EXISTS ed25519 SONAME 'auth_ed25519'",
		"INSTALL PLUGIN IF NOT EXISTS pam SONAME 'auth_pam'",
		"CREATE USER native@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('n-secret')",
		"CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-secret')",
		"CREATE USER pamuser@'%' IDENTIFIED VIA pam",
		"GRANT ALL ON staunch_test.* TO native@'%', ed@'%', pamuser@'%'",
	} {
		k.Must(t, "sql 0 "+q)
	}
	base := withKnobs(k.Ready.Servers[0].URL, "min_idle=0&connection_timeout=20s")
	for _, u := range []testkit.User{{User: "native", Password: "n-secret"}, {User: "ed", Password: "e-secret"}} {
		p, err := staunch.New(bg, testkit.AsUser(base, u))
		if err != nil {
			t.Fatal(err)
		}
		var who string
		if err := p.QueryRow(bg, "SELECT CURRENT_USER()").Scan(&who); err != nil {
			t.Fatalf("%s: %v", u.User, err)
		}
		if who != u.User+"@%" {
			t.Errorf("%s: CURRENT_USER() is %s", u.User, who)
		}
		p.Close()
	}
	p, err := staunch.New(bg, testkit.AsUser(base, testkit.User{User: "pamuser", Password: "p-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	c, err := p.Acquire(bg)
	waited := time.Since(start)
	if err == nil {
		c.Release()
		t.Fatal("the PAM user connected")
	}
	if !errors.Is(err, staunch.ErrConnectRejected) {
		t.Errorf("error is not ErrConnectRejected: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"dialog"`) || strings.Contains(msg, "p-secret") {
		t.Errorf("message: %s", msg)
	}
	if waited > 5*time.Second+slack() {
		t.Errorf("the refusal took %v: %v", waited, err)
	}
}

// Test_conf_auth_plugins_caching_sha2: the test kit's second server
// (Vitess's go/mysql, a MySQL 8 greeting): its caching_sha2_password user
// connects over TLS and answers.
func Test_conf_auth_plugins_caching_sha2(t *testing.T) {
	k, err := testkit.Start("mysql8", "--tls")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	p, err := staunch.New(bg, k.Ready.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var who string
	if err := p.QueryRow(bg, "SELECT CURRENT_USER()").Scan(&who); err != nil {
		t.Fatal(err)
	}
	if who != "sha2@%" {
		t.Errorf("CURRENT_USER() is %s", who)
	}
}

// commitsAndRollbacks reads the server's Com_commit and Com_rollback (every
// session's: the asking session's own statements are none of them).
func commitsAndRollbacks(t *testing.T, admin *sql.DB) (commits, rollbacks int64) {
	t.Helper()
	rows, err := admin.Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		switch name {
		case "Com_commit":
			commits = v
		case "Com_rollback":
			rollbacks = v
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return commits, rollbacks
}

// The usual blocks, database/sql's QueryRow and the pool's own, send no
// COMMIT and no ROLLBACK for a read, of SELECT 1 or of an InnoDB table.
func Test_conf_readonly_return(t *testing.T) {
	_, admin := openDB(t, "max_size=1")
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS t_readonly (v INT) ENGINE=InnoDB",
		"DELETE FROM t_readonly",
		"INSERT INTO t_readonly VALUES (1)",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { admin.Exec("DROP TABLE t_readonly") })
	p, db := openDB(t, "max_size=2")
	for _, q := range []string{"SELECT 1", "SELECT v FROM t_readonly"} {
		commits, rollbacks := commitsAndRollbacks(t, admin)
		for range 200 {
			var n int64
			if err := db.QueryRow(q).Scan(&n); err != nil || n != 1 {
				t.Fatalf("database/sql %s: %d %v", q, n, err)
			}
			if n := queryInt(t, p, q); n != 1 {
				t.Fatalf("pool %s: %d", q, n)
			}
		}
		c, r := commitsAndRollbacks(t, admin)
		if c != commits || r != rollbacks {
			t.Fatalf("%s: %d COMMIT, %d ROLLBACK sent for 400 reads", q, c-commits, r-rollbacks)
		}
	}
}

// Each server error carries the library's category for it
// (staunch_error_category, one table for every binding) and matches the
// sentinel of that category: a duplicate key ErrIntegrity, a syntax error
// ErrProgramming, a value too long under strict mode ErrData, and a number
// the table does not name its SQLSTATE's class (SIGNAL sets both).
func TestServerErrorCategories(t *testing.T) {
	p := openPool(t, "max_size=1")
	c := acquire(t, p)
	for _, s := range []string{
		"SET SESSION sql_mode = 'STRICT_ALL_TABLES'",
		"CREATE TEMPORARY TABLE cat (id INT PRIMARY KEY, s VARCHAR(3))",
		"INSERT INTO cat VALUES (1, 'a')",
	} {
		if _, err := c.Exec(bg, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	cases := []struct {
		sql    string
		number uint16
		cat    staunch.Category
		is     error
	}{
		{"INSERT INTO cat VALUES (1, 'b')", 1062, staunch.CategoryIntegrity, staunch.ErrIntegrity},
		{"SELEKT 1", 1064, staunch.CategoryProgramming, staunch.ErrProgramming},
		{"INSERT INTO cat VALUES (2, 'abcd')", 1406, staunch.CategoryData, staunch.ErrData},
		{"SIGNAL SQLSTATE '23001' SET MYSQL_ERRNO = 30001", 30001, staunch.CategoryIntegrity, staunch.ErrIntegrity},
		{"SIGNAL SQLSTATE '0A001' SET MYSQL_ERRNO = 30002", 30002, staunch.CategoryNotSupported, staunch.ErrNotSupported},
		{"SIGNAL SQLSTATE '45000'", 1644, staunch.CategoryOperational, nil},
	}
	sentinels := []error{staunch.ErrIntegrity, staunch.ErrProgramming, staunch.ErrData, staunch.ErrNotSupported}
	for _, k := range cases {
		_, err := c.Exec(bg, k.sql)
		var me *staunch.MySQLError
		if !errors.As(err, &me) || me.Number != k.number || me.Category != k.cat {
			t.Errorf("%s: got %v (%#v), want number %d category %v", k.sql, err, me, k.number, k.cat)
			continue
		}
		for _, s := range sentinels {
			if errors.Is(err, s) != (s == k.is) {
				t.Errorf("%s: errors.Is(err, %v) = %v", k.sql, s, errors.Is(err, s))
			}
		}
	}
	if got := staunch.CategoryNotSupported.String(); got != "not_supported" {
		t.Errorf("CategoryNotSupported.String() = %q", got)
	}
}

// Test_conf_tls_exact: a server presenting a self-signed CA:TRUE
// certificate, pinned by tls_mode=verify_ca&tls_ca=<that certificate>,
// connects, answers and encrypts; the same URL with tls_ca naming an
// unrelated CA gets ErrConnectRejected at once (well within its 5 s
// connection_timeout) with a message naming tls_ca: under verify_ca only
// the given CA is trusted.
func Test_conf_tls_exact(t *testing.T) {
	k, err := testkit.Start("server", "--tls-self-signed")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	url := k.Ready.URL
	if !strings.Contains(url, "tls_mode=verify_ca") || k.Ready.TLS == nil {
		t.Fatalf("not a verify_ca server: url %s, tls %v", url, k.Ready.TLS)
	}
	p, err := staunch.New(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, p, "SELECT 1"); n != 1 {
		t.Errorf("SELECT 1 is %d", n)
	}
	var name, cipher string
	if err := p.QueryRow(bg, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		t.Fatal(err)
	}
	if cipher == "" {
		t.Error("Ssl_cipher is empty: the session is not encrypted")
	}
	p.Close()

	// tls_ca is the ready line's last parameter.
	head, tail, found := strings.Cut(url, "tls_ca=")
	if !found || strings.Contains(tail, "&") {
		t.Fatalf("tls_ca is not the last parameter of %s", url)
	}
	bad := withKnobs(head+"tls_ca="+k.Ready.TLS.OtherCA, "connection_timeout=5s&min_idle=0")
	p, err = staunch.New(bg, bad)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	c, err := p.Acquire(bg)
	took := time.Since(start)
	if err == nil {
		c.Release()
		t.Fatal("connected with an unrelated CA")
	}
	if !errors.Is(err, staunch.ErrConnectRejected) {
		t.Errorf("error is not ErrConnectRejected: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "tls_ca") || strings.Contains(msg, "app-secret") {
		t.Errorf("message: %s", msg)
	}
	if took > 3*time.Second+slack() {
		t.Errorf("the refusal took %v: %v", took, err)
	}
	t.Logf("refused in %v: %v", took, err)
}

// osThreads is the process's OS thread count (/proc/self/status).
func osThreads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}

// A borrow waits in the netpoller, not in a thread: 10,000 goroutines
// borrowing from a pool of 8 (each holding its connection for a statement
// and a millisecond) leave the process under 50 OS threads; they are
// served in turn with none lost; and a waiting borrow whose context is
// cancelled gives up its place at once, leaving the pool as if it had never
// waited.
func Test_acquire_waits_in_the_netpoller(t *testing.T) {
	p := openPool(t, "max_size=8&connection_timeout=120s")
	warm(t, p, 8)
	waited0, _ := staunch.AcquireWaits()
	threads0 := osThreads(t)
	var peak atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int64(osThreads(t)); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	// The race detector allows 8,128 goroutines alive at once: 2,000 under
	// it (go test -race), the 10,000 in the static run of go-tests.sh.
	n := 10000
	if raceEnabled {
		n = 2000
	}
	var wg sync.WaitGroup
	var served atomic.Int64
	errs := make(chan error, 16)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := p.Acquire(bg)
			if err != nil {
				select {
				case errs <- err:
				default:
				}
				return
			}
			defer c.Release()
			var v int64
			if err := c.QueryRow(bg, "SELECT ?", i).Scan(&v); err != nil || v != int64(i) {
				select {
				case errs <- fmt.Errorf("goroutine %d: %v %v", i, v, err):
				default:
				}
				return
			}
			time.Sleep(time.Millisecond)
			served.Add(1)
		}()
	}
	wg.Wait()
	close(done)
	<-sampled
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	waited, _ := staunch.AcquireWaits()
	t.Logf("%d goroutines on a pool of 8: %d served, %d waited in the netpoller; OS threads %d before, at most %d during",
		n, served.Load(), waited-waited0, threads0, peak.Load())
	if served.Load() != int64(n) {
		t.Fatalf("%d of %d goroutines were served", served.Load(), n)
	}
	if waited-waited0 < uint64(n/2) {
		t.Fatalf("only %d of %d borrows waited in the netpoller", waited-waited0, n)
	}
	if peak.Load() >= 50 {
		t.Fatalf("%d OS threads while %d goroutines waited for 8 connections, want under 50", peak.Load(), n)
	}

	// A cancelled wait gives up at once; the pool is as before.
	conns := acquireN(t, p, 8)
	ctx, cancel := context.WithCancel(bg)
	got := make(chan error, 1)
	go func() {
		c, err := p.Acquire(ctx)
		if c != nil {
			c.Release()
		}
		got <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for p.Stat().Waiting != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if w := p.Stat().Waiting; w != 1 {
		t.Fatalf("%d borrows waiting, want 1", w)
	}
	t0 := time.Now()
	cancel()
	err := <-got
	if !errors.Is(err, staunch.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	if took := time.Since(t0); took > 100*time.Millisecond+slack() {
		t.Fatalf("the cancel took %v", took)
	}
	if w := p.Stat().Waiting; w != 0 {
		t.Fatalf("%d borrows still waiting after the cancel", w)
	}
	for _, c := range conns {
		c.Release()
	}
	if v := queryInt(t, acquire(t, p), "SELECT 9"); v != 9 {
		t.Fatalf("after the cancel: %d", v)
	}
}

// netpollerWaitsAtOnce runs f(0) to f(n-1) in n goroutines let go at
// once, fails t on any error, and returns how many waits in the netpoller
// they made.
func netpollerWaitsAtOnce(t *testing.T, n int, f func(i int) error) uint64 {
	t.Helper()
	before := staunch.PollerWaits()
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := f(i); err != nil {
				errs <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return staunch.PollerWaits() - before
}

// A transaction's begin and end are statements like any other: with more
// starting or ending at once than may wait in their threads, START
// TRANSACTION's and COMMIT's answers are awaited in the netpoller (rows
// committed, none lost).
func Test_commits_wait_in_the_netpoller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	p := openPool(t, "max_size=8")
	if _, err := p.Exec(bg, "CREATE TABLE IF NOT EXISTS np_commit (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(bg, "DELETE FROM np_commit"); err != nil {
		t.Fatal(err)
	}
	const n, rounds = 8, 3
	apart, begunApart := uint64(0), uint64(0)
	for round := range rounds {
		conns := make([]*staunch.Conn, n)
		for i := range conns {
			c, err := p.Acquire(bg)
			if err != nil {
				t.Fatal(err)
			}
			conns[i] = c
		}
		txs := make([]*staunch.Tx, n)
		begunApart += netpollerWaitsAtOnce(t, n, func(i int) (err error) {
			txs[i], err = conns[i].Begin(bg)
			return err
		})
		for i, tx := range txs {
			if _, err := tx.Exec(bg, "INSERT INTO np_commit VALUES (?)", round*n+i); err != nil {
				t.Fatal(err)
			}
		}
		apart += netpollerWaitsAtOnce(t, n, func(i int) error { return txs[i].Commit(bg) })
		for _, c := range conns {
			c.Release()
		}
	}
	var count int64
	if err := p.QueryRow(bg, "SELECT COUNT(*) FROM np_commit").Scan(&count); err != nil || count != n*rounds {
		t.Fatalf("%d rows committed (%v), want %d", count, err, n*rounds)
	}
	if apart < rounds*n/2 {
		t.Fatalf("%d of %d commits waited in the netpoller, want %d or more", apart, rounds*n, rounds*n/2)
	}
	if begunApart < rounds*n/2 {
		t.Fatalf("%d of %d begins waited in the netpoller, want %d or more", begunApart, rounds*n, rounds*n/2)
	}
	t.Logf("%d of %d begins and %d of %d commits waited in the netpoller", begunApart, rounds*n, apart, rounds*n)
	if _, err := p.Exec(bg, "DROP TABLE np_commit"); err != nil {
		t.Fatal(err)
	}
}
