// Package bench runs staunch's Go binding side by side with database/sql +
// go-sql-driver/mysql (its peer), in one run against one throwaway server
// from staunch-testkit: acquire + SELECT 1 + release at 1 and 8 goroutines,
// scanning 10,000 rows, and statements with parameters (a one-shot INSERT,
// a repeated SELECT by id) sent prepared and interpolated. scripts/go-bench.sh runs it and gives the
// ratios (benchstat). A module of its own: the binding's module needs no
// third-party dependency.
package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
)

var (
	server   testkit.Server
	bg       = context.Background()
	pool     *staunch.Pool
	staunchD *sql.DB // staunch.OpenDB(pool)
	mysqlD   *sql.DB // go-sql-driver/mysql at its defaults
	mysqlD8  *sql.DB // go-sql-driver/mysql with SetMaxIdleConns(8)

	// For the statements with parameters (#20): the same, sending them
	// interpolated into the SQL text (staunch's knob interpolate_params,
	// go-sql-driver's interpolateParams=true) instead of prepared on the
	// server (both libraries' default in Go).
	poolI     *staunch.Pool
	staunchDI *sql.DB
	mysqlDI   *sql.DB

	// The same as pool and staunchD, their statements waiting in a thread
	// blocked in the library instead of in the netpoller
	// (STAUNCH_GO_NOPOLLER=1 when the pool opens): the "-blocking"
	// implementations.
	// Over TLS, on a second server (the test kit's self-signed
	// certificate): staunch verifying it against its CA, and go-sql-driver
	// with the same CA as its tls.Config (BenchmarkSelect1TLS).
	poolT    *staunch.Pool
	mysqlDT  *sql.DB
	mysqlDT8 *sql.DB // with SetMaxIdleConns(8): no TLS handshake per borrow at g=8

	poolB *staunch.Pool
	// poolH: timings on (what an exporter's first scrape turns on) and a
	// Tracer that does nothing: the cost of observability with a no-op
	// exporter (issue 47), beside pool at the defaults.
	poolH     *staunch.Pool
	staunchDB *sql.DB
)

func TestMain(m *testing.M) {
	kit, err := testkit.Start("server")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		os.Exit(1)
	}
	server = kit.Ready.Servers[0]
	code := func() int {
		// Both pools may open up to 10 connections (staunch's default
		// max_size; go-sql-driver's database/sql has no limit by default).
		pool, err = staunch.New(bg, server.URL)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pool.Close()
		staunchD = staunch.OpenDB(pool)
		defer staunchD.Close()
		os.Setenv("STAUNCH_GO_NOPOLLER", "1")
		poolB, err = staunch.New(bg, server.URL)
		os.Unsetenv("STAUNCH_GO_NOPOLLER")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer poolB.Close()
		staunchDB = staunch.OpenDB(poolB)
		cfgH, err := staunch.ParseConfig(server.URL + "?timings=on")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cfgH.Tracer = noopTracer{}
		poolH, err = staunch.NewWithConfig(bg, cfgH)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer poolH.Close()
		defer staunchDB.Close()
		cfg := mysqlConfig(server.Port)
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		mysqlD = sql.OpenDB(conn)
		defer mysqlD.Close()
		mysqlD8 = sql.OpenDB(conn)
		mysqlD8.SetMaxIdleConns(8)
		defer mysqlD8.Close()
		poolI, err = staunch.New(bg, server.URL+"?interpolate_params=true")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer poolI.Close()
		staunchDI = staunch.OpenDB(poolI)
		defer staunchDI.Close()
		cfgI := cfg.Clone()
		cfgI.InterpolateParams = true
		connI, err := mysql.NewConnector(cfgI)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		mysqlDI = sql.OpenDB(connI)
		defer mysqlDI.Close()
		if err := paramTables(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		tlsKit, err := testkit.Start("server", "--tls-self-signed")
		if err != nil {
			fmt.Fprintln(os.Stderr, "TestMain: the TLS server:", err)
			return 1
		}
		defer tlsKit.Stop()
		if err := openTLS(tlsKit); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer poolT.Close()
		defer mysqlDT.Close()
		defer mysqlDT8.Close()
		return m.Run()
	}()
	kit.Stop()
	os.Exit(code)
}

// cpuTime is this process's CPU time (user + system) in ns: the client's
// cost per operation, whatever the wall clock says.
// openTLS opens the pools of BenchmarkSelect1TLS on the kit's server,
// whose URL carries tls_mode=verify_ca and its CA.
func openTLS(kit *testkit.Kit) error {
	srv := kit.Ready.Servers[0]
	var err error
	if poolT, err = staunch.New(bg, kit.Ready.URL); err != nil {
		return err
	}
	pem, err := os.ReadFile(kit.Ready.TLS.CA)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return fmt.Errorf("no certificate in %s", kit.Ready.TLS.CA)
	}
	cfg := mysqlConfig(srv.Port)
	// MySQL's VERIFY_CA, as staunch's tls_mode=verify_ca: the chain is
	// checked against the CA, the name is not (the test certificate has
	// none for 127.0.0.1).
	cfg.TLS = &tls.Config{
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return fmt.Errorf("no certificate")
			}
			cert, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			_, err = cert.Verify(x509.VerifyOptions{Roots: roots})
			return err
		},
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	mysqlDT = sql.OpenDB(conn)
	mysqlDT8 = sql.OpenDB(conn)
	mysqlDT8.SetMaxIdleConns(8)
	return nil
}

func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// parallel runs b.N calls of fn over exactly g goroutines.
// mysqlConfig is go-sql-driver's configuration for the test kit's app
// user on port (TCP, staunch_test), at the driver's defaults otherwise.
func mysqlConfig(port int) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net = "app", "app-secret", "tcp"
	cfg.Addr, cfg.DBName = fmt.Sprintf("127.0.0.1:%d", port), "staunch_test"
	return cfg
}

func parallel(b *testing.B, g int, fn func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var ferr error
	cpu0 := cpuTime()
	b.ResetTimer()
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := fn(); err != nil {
					once.Do(func() { ferr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	if ferr != nil {
		b.Fatal(ferr)
	}
}

func select1DB(db *sql.DB) func() error {
	return func() error {
		var n int
		if err := db.QueryRow("SELECT 1").Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("SELECT 1 gave %d", n)
		}
		return nil
	}
}

// reqCtx is a context that can end (never does here), as a request's: with
// it, staunch's database/sql rows fetch on a goroutine of their own (so
// that Next answers a cancel at once); the -ctx variants measure that.
var reqCtx, _ = context.WithCancel(context.Background())

func select1DBCtx(db *sql.DB) func() error {
	return func() error {
		var n int
		if err := db.QueryRowContext(reqCtx, "SELECT 1").Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("SELECT 1 gave %d", n)
		}
		return nil
	}
}

func select1Native() error { return select1NativeOn(pool) }

func select1NativeOn(pool *staunch.Pool) error {
	c, err := pool.Acquire(bg)
	if err != nil {
		return err
	}
	var n int
	err = c.QueryRow(bg, "SELECT 1").Scan(&n)
	c.Release()
	if err == nil && n != 1 {
		err = fmt.Errorf("SELECT 1 gave %d", n)
	}
	return err
}

// select1Pool is the same through the pool's own QueryRow, as
// db.QueryRow is for database/sql: one call into the library
// (staunch_pool_query) borrows, runs and gives back.
func select1Pool() error {
	var n int
	err := pool.QueryRow(bg, "SELECT 1").Scan(&n)
	if err == nil && n != 1 {
		err = fmt.Errorf("SELECT 1 gave %d", n)
	}
	return err
}

// noopTracer hears every acquire and statement and does nothing, as a
// tracer whose SDK exports nowhere.
type noopTracer struct{}

func (noopTracer) TraceAcquireStart(ctx context.Context, _ *staunch.Pool, _ staunch.TraceAcquireStartData) context.Context {
	return ctx
}
func (noopTracer) TraceAcquireEnd(context.Context, *staunch.Pool, staunch.TraceAcquireEndData) {}
func (noopTracer) TraceQueryStart(ctx context.Context, _ *staunch.Conn, _ staunch.TraceQueryStartData) context.Context {
	return ctx
}
func (noopTracer) TraceQueryEnd(context.Context, *staunch.Conn, staunch.TraceQueryEndData) {}

// BenchmarkSelect1: acquire + SELECT 1 + release.
func BenchmarkSelect1(b *testing.B) {
	impls := []struct {
		name string
		fn   func() error
	}{
		{"go-sql-driver", select1DB(mysqlD)},
		{"go-sql-driver-idle8", select1DB(mysqlD8)},
		{"staunch-native", select1Native},
		{"staunch-pool", select1Pool},
		{"staunch-OpenDB", select1DB(staunchD)},
		{"staunch-native-blocking", func() error { return select1NativeOn(poolB) }},
		{"staunch-native-hooks", func() error { return select1NativeOn(poolH) }},
		{"staunch-OpenDB-blocking", select1DB(staunchDB)},
		{"go-sql-driver-ctx", select1DBCtx(mysqlD)},
		{"staunch-OpenDB-ctx", select1DBCtx(staunchD)},
	}
	for _, g := range []int{1, 8} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("g=%d/impl=%s", g, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				parallel(b, g, impl.fn)
			})
		}
	}
}

// BenchmarkSelect1TLS: acquire + SELECT 1 + release over TLS (issue 45's
// target: staunch at least as fast as go-sql-driver with TLS on).
func BenchmarkSelect1TLS(b *testing.B) {
	impls := []struct {
		name string
		fn   func() error
	}{
		{"go-sql-driver", select1DB(mysqlDT)},
		{"go-sql-driver-idle8", select1DB(mysqlDT8)},
		{"staunch-native", func() error { return select1NativeOn(poolT) }},
	}
	for _, g := range []int{1, 8} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("g=%d/impl=%s", g, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				parallel(b, g, impl.fn)
			})
		}
	}
}

// BenchmarkSelect1Overhead: what observability costs, measured in one loop.
// Select1's staunch-native-hooks and staunch-native are two benchmarks run
// one after the other, and on a shared machine their difference (a few
// percent) drowns in the noise between them. Here the two pools take turns
// in phases of 32 operations per goroutine (all g goroutines on one pool,
// then all on the other), so both meet the same moments of the machine.
// Reported: each pool's wall time per operation; hooks-over-defaults, the
// median over the pairs of phases (defaults, then hooks) of the hooks
// phase's wall time over the defaults' (a pause of the machine spoils a
// pair or two, not the figure); and cpu-hooks-over-defaults, the process's
// CPU time per operation of the hooks phases over the defaults' (summed:
// the kernel counts CPU time too coarsely for one phase). 1.00 = free;
// issue 47's target: at most 1.03.
func BenchmarkSelect1Overhead(b *testing.B) {
	const perPhase = 32
	pools := [2]*staunch.Pool{pool, poolH}
	for _, g := range []int{1, 8} {
		b.Run(fmt.Sprintf("g=%d", g), func(b *testing.B) {
			var wall, cpu, count [2]int64
			var ratios []float64
			var lastDefault float64 // the last defaults phase's wall ns per operation
			var ferr error
			var once sync.Once
			b.ReportAllocs()
			b.ResetTimer()
			for done, k := 0, 0; done < b.N; k ^= 1 {
				n := min(perPhase, (b.N-done+g-1)/g)
				t0, c0 := time.Now(), cpuTime()
				var wg sync.WaitGroup
				for range g {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range n {
							if err := select1NativeOn(pools[k]); err != nil {
								once.Do(func() { ferr = err })
								return
							}
						}
					}()
				}
				wg.Wait()
				w := int64(time.Since(t0))
				if k == 1 && count[0] > 0 {
					// This phase's time per operation over the defaults
					// phase's just before it.
					ratios = append(ratios, (float64(w)/float64(n))/lastDefault)
				} else {
					lastDefault = float64(w) / float64(n)
				}
				wall[k] += w
				cpu[k] += cpuTime() - c0
				count[k] += int64(n * g)
				done += n * g
			}
			b.StopTimer()
			if ferr != nil {
				b.Fatal(ferr)
			}
			if len(ratios) == 0 {
				return // too few operations for both (b.N of 1 while probing)
			}
			per := func(v [2]int64, k int) float64 { return float64(v[k]) / float64(count[k]) }
			slices.Sort(ratios)
			b.ReportMetric(per(wall, 0), "defaults-ns/op")
			b.ReportMetric(per(wall, 1), "hooks-ns/op")
			b.ReportMetric(ratios[len(ratios)/2], "hooks-over-defaults")
			b.ReportMetric(per(cpu, 1)/per(cpu, 0), "cpu-hooks-over-defaults")
		})
	}
}

const scanSQL = "SELECT seq, CONCAT('row-', seq), seq * 1.5e0, NULLIF(seq % 10, 0) FROM seq_1_to_10000"

func scanDB(db *sql.DB) error { return scanDBCtx(db, bg) }

func scanDBCtx(db *sql.DB, ctx context.Context) error {
	rows, err := db.QueryContext(ctx, scanSQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		n   int64
		s   string
		f   float64
		opt sql.NullInt64
		k   int
	)
	for rows.Next() {
		if err := rows.Scan(&n, &s, &f, &opt); err != nil {
			return err
		}
		k++
	}
	if k != 10000 {
		return fmt.Errorf("%d rows", k)
	}
	return rows.Err()
}

func scanNative() error { return scanNativeWith(pool.Query) }

// scanNativeStream: the rows as they arrive (Pool.QueryStream, one call).
func scanNativeStream() error { return scanNativeWith(pool.QueryStream) }

func scanNativeWith(query func(context.Context, string, ...any) (*staunch.Rows, error)) error {
	rows, err := query(bg, scanSQL)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		n   int64
		s   string
		f   float64
		opt *int64
		k   int
	)
	for rows.Next() {
		if err := rows.Scan(&n, &s, &f, &opt); err != nil {
			return err
		}
		k++
	}
	if k != 10000 {
		return fmt.Errorf("%d rows", k)
	}
	return rows.Err()
}

// BenchmarkScan10k: one query of 10,000 rows of 4 columns, each scanned.
func BenchmarkScan10k(b *testing.B) {
	for _, impl := range []struct {
		name string
		fn   func() error
	}{
		{"go-sql-driver", func() error { return scanDB(mysqlD) }},
		{"staunch-native", scanNative},
		{"staunch-native-stream", scanNativeStream},
		{"staunch-OpenDB", func() error { return scanDB(staunchD) }},
		{"go-sql-driver-ctx", func() error { return scanDBCtx(mysqlD, reqCtx) }},
		{"staunch-OpenDB-ctx", func() error { return scanDBCtx(staunchD, reqCtx) }},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			parallel(b, 1, impl.fn)
		})
	}
}

// The statements with parameters of #20: a one-shot INSERT of 5 values, and
// a SELECT by primary key run again and again (the same text, another id
// each time), each as an application writes it (db.Exec, db.QueryRow, no
// *sql.Stmt kept), through the server-side prepare that both libraries use
// by default in Go and through interpolation.

const (
	insertSQL = "INSERT INTO bench_ins (a, b, c, d, e) VALUES (?, ?, ?, ?, ?)"
	selectSQL = "SELECT id, a, b, e FROM bench_sel WHERE id = ?"
	selRows   = 1000
)

func paramTables() error {
	for _, q := range []string{
		"CREATE OR REPLACE TABLE bench_ins (id BIGINT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(64), c DOUBLE, d DATETIME(6), e DECIMAL(12,2))",
		"CREATE OR REPLACE TABLE bench_sel (id BIGINT PRIMARY KEY, a INT, b VARCHAR(64), e DECIMAL(12,2))",
		fmt.Sprintf("INSERT INTO bench_sel SELECT seq, seq * 7, CONCAT('name-', seq), seq / 100 FROM seq_1_to_%d", selRows),
	} {
		if _, err := mysqlD.Exec(q); err != nil {
			return err
		}
	}
	return nil
}

var when = time.Date(2026, 12, 1, 23, 59, 58, 123456000, time.UTC)

func insertArgs(i int64) []any {
	return []any{i, "a name of some length", 1.25 * float64(i), when, "12345.67"}
}

func insertDB(db *sql.DB) func() error {
	var i atomic.Int64
	return func() error {
		r, err := db.Exec(insertSQL, insertArgs(i.Add(1))...)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("INSERT affected %d rows (%v)", n, err)
		}
		return nil
	}
}

func insertNative(p **staunch.Pool) func() error {
	var i atomic.Int64
	return func() error {
		r, err := (*p).Exec(bg, insertSQL, insertArgs(i.Add(1))...)
		if err == nil && r.RowsAffected != 1 {
			err = fmt.Errorf("INSERT affected %d rows", r.RowsAffected)
		}
		return err
	}
}

func checkSel(id, gotID int64, a int64, b string) error {
	if gotID != id || a != id*7 || b != fmt.Sprintf("name-%d", id) {
		return fmt.Errorf("row %d: got %d, %d, %q", id, gotID, a, b)
	}
	return nil
}

func selectDB(db *sql.DB) func() error {
	var i atomic.Int64
	return func() error {
		id := i.Add(1)%selRows + 1
		var (
			gotID, a int64
			b, e     string
		)
		if err := db.QueryRow(selectSQL, id).Scan(&gotID, &a, &b, &e); err != nil {
			return err
		}
		return checkSel(id, gotID, a, b)
	}
}

func selectNative(p **staunch.Pool) func() error {
	var i atomic.Int64
	return func() error {
		id := i.Add(1)%selRows + 1
		var (
			gotID, a int64
			b, e     string
		)
		if err := (*p).QueryRow(bg, selectSQL, id).Scan(&gotID, &a, &b, &e); err != nil {
			return err
		}
		return checkSel(id, gotID, a, b)
	}
}

// paramImpls: go-sql-driver at its defaults is the base of the ratios;
// "-interp" sends the values interpolated into the SQL text.
func paramImpls(db func(*sql.DB) func() error, native func(**staunch.Pool) func() error) []struct {
	name string
	fn   func() error
} {
	return []struct {
		name string
		fn   func() error
	}{
		{"go-sql-driver", db(mysqlD)},
		{"go-sql-driver-interp", db(mysqlDI)},
		{"staunch-native", native(&pool)},
		{"staunch-native-interp", native(&poolI)},
		{"staunch-OpenDB", db(staunchD)},
		{"staunch-OpenDB-interp", db(staunchDI)},
	}
}

// BenchmarkInsert5: a one-shot INSERT of 5 values (an integer, a string, a
// double, a DATETIME(6) and a decimal as its text).
func BenchmarkInsert5(b *testing.B) {
	for _, impl := range paramImpls(insertDB, insertNative) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			parallel(b, 1, impl.fn)
		})
	}
}

// BenchmarkSelectByID: SELECT ... WHERE id = ? again and again.
func BenchmarkSelectByID(b *testing.B) {
	for _, impl := range paramImpls(selectDB, selectNative) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			parallel(b, 1, impl.fn)
		})
	}
}

// BenchmarkSelect1Crowd: 1,000 goroutines borrowing from a pool of 8 (issue
// 48: at least go-sql-driver's rate with database/sql limited to 8 open
// connections). staunch's borrows wait in the netpoller; -blocking is the
// same pool with every wait in a thread (STAUNCH_GO_NOPOLLER=1), as before.
// Each op is acquire + SELECT 1 + release.
func BenchmarkSelect1Crowd(b *testing.B) {
	url := server.URL + "?max_size=8"
	p8, err := staunch.New(bg, url)
	if err != nil {
		b.Fatal(err)
	}
	defer p8.Close()
	os.Setenv("STAUNCH_GO_NOPOLLER", "1")
	p8B, err := staunch.New(bg, url)
	os.Unsetenv("STAUNCH_GO_NOPOLLER")
	if err != nil {
		b.Fatal(err)
	}
	defer p8B.Close()
	d8 := staunch.OpenDB(p8)
	defer d8.Close()
	conn, err := mysql.NewConnector(mysqlConfig(server.Port))
	if err != nil {
		b.Fatal(err)
	}
	m8 := sql.OpenDB(conn)
	m8.SetMaxOpenConns(8)
	m8.SetMaxIdleConns(8)
	defer m8.Close()
	impls := []struct {
		name string
		fn   func() error
	}{
		{"go-sql-driver", select1DB(m8)},
		{"staunch-native", func() error { return select1NativeOn(p8) }},
		{"staunch-OpenDB", select1DB(d8)},
		{"staunch-native-blocking", func() error { return select1NativeOn(p8B) }},
	}
	for _, impl := range impls {
		b.Run("g=1000/impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			parallel(b, 1000, impl.fn)
		})
	}
}
