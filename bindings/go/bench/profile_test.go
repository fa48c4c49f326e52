package bench

import (
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	staunch "github.com/staunch-db/staunch/bindings/go"
)

// TestProfile is not a benchmark: with STAUNCH_PROFILE=impl:g:n (impl one
// of the Select1 or Scan10k implementations' names, prefixed "scan-" for
// Scan10k), it runs n operations over g goroutines and prints, per
// operation, what the client spent: cgo calls (runtime.NumCgoCall), heap
// allocations, context switches of the process (voluntary: a thread that
// waited; involuntary: one that was preempted) and CPU time. With
// STAUNCH_PROFILE_WAIT=file it first prints its pid and waits for file to
// exist, so that strace or perf can attach to the client alone (not to the
// test kit's server, a child of this process); scripts/go-profile.sh does
// that. Skipped without STAUNCH_PROFILE.
func TestProfile(t *testing.T) {
	spec := os.Getenv("STAUNCH_PROFILE")
	if spec == "" {
		t.Skip("STAUNCH_PROFILE=impl:goroutines:ops runs it")
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		t.Fatalf("STAUNCH_PROFILE=%q: want impl:goroutines:ops", spec)
	}
	g, err1 := strconv.Atoi(parts[1])
	n, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || g < 1 || n < 1 {
		t.Fatalf("STAUNCH_PROFILE=%q: goroutines and ops are positive integers", spec)
	}
	fn := profileImpls()[parts[0]]
	if fn == nil {
		t.Fatalf("STAUNCH_PROFILE: unknown implementation %q", parts[0])
	}
	// Warm up: every connection the run will use is open.
	runN(t, g, 200, fn)
	if wait := os.Getenv("STAUNCH_PROFILE_WAIT"); wait != "" {
		fmt.Fprintf(os.Stderr, "PROFILE-PID %d\n", os.Getpid())
		for {
			if _, err := os.Stat(wait); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var ms0, ms1 runtime.MemStats
	var ru0, ru1 syscall.Rusage
	runtime.ReadMemStats(&ms0)
	cgo0 := runtime.NumCgoCall()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	runN(t, g, n, fn)
	wall := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cgo1 := runtime.NumCgoCall()
	runtime.ReadMemStats(&ms1)
	per := func(d int64) float64 { return float64(d) / float64(n) }
	cpu := (ru1.Utime.Nano() + ru1.Stime.Nano()) - (ru0.Utime.Nano() + ru0.Stime.Nano())
	fmt.Fprintf(os.Stderr, "PROFILE %s g=%d n=%d: wall %.1f us/op, cpu %.1f us/op (user %.1f, sys %.1f), cgo calls %.2f/op, allocs %.1f/op (%.0f B/op), ctx switches %.2f voluntary + %.2f involuntary /op\n",
		parts[0], g, n, float64(wall.Nanoseconds())/float64(n)/1e3, per(cpu)/1e3,
		per(ru1.Utime.Nano()-ru0.Utime.Nano())/1e3, per(ru1.Stime.Nano()-ru0.Stime.Nano())/1e3,
		per(cgo1-cgo0), per(int64(ms1.Mallocs-ms0.Mallocs)), per(int64(ms1.TotalAlloc-ms0.TotalAlloc)),
		per(ru1.Nvcsw-ru0.Nvcsw), per(ru1.Nivcsw-ru0.Nivcsw))
	if done := os.Getenv("STAUNCH_PROFILE_WAIT"); done != "" {
		_ = os.WriteFile(done+".done", nil, 0o644)
	}
}

func runN(t *testing.T, g, n int, fn func() error) {
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	errs := make(chan error, g)
	for range g {
		go func() {
			for range next {
				if err := fn(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range g {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func profileImpls() map[string]func() error {
	return map[string]func() error{
		"go-sql-driver":       select1DB(mysqlD),
		"staunch-native":      select1Native,
		"staunch-pool":        select1Pool,
		"staunch-OpenDB":      select1DB(staunchD),
		"go-sql-driver-ctx":   select1DBCtx(mysqlD),
		"staunch-OpenDB-ctx":  select1DBCtx(staunchD),
		"scan-go-sql-driver":  func() error { return scanDB(mysqlD) },
		"scan-staunch-native": scanNative,
		"scan-staunch-OpenDB": func() error { return scanDB(staunchD) },
		// BenchmarkSelect1Crowd's contenders: 8 connections each.
		"crowd-go-sql-driver":  func() error { return select1DB(crowdPools().db)() },
		"crowd-staunch-native": func() error { return select1NativeOn(crowdPools().pool) },
	}
}

// crowdPools opens, once, a staunch pool and a go-sql-driver database of
// at most 8 connections each, as BenchmarkSelect1Crowd does; they stay open
// until the process ends.
var crowdPools = sync.OnceValue(func() (c struct {
	pool *staunch.Pool
	db   *sql.DB
}) {
	var err error
	if c.pool, err = staunch.New(bg, server.URL+"?max_size=8"); err != nil {
		panic(err)
	}
	conn, err := mysql.NewConnector(mysqlConfig(server.Port))
	if err != nil {
		panic(err)
	}
	c.db = sql.OpenDB(conn)
	c.db.SetMaxOpenConns(8)
	c.db.SetMaxIdleConns(8)
	return c
})
