// Command memchild is the Go contenders' child of benches/memory/mem_bench.py
// (issue 50): the resident memory of a process holding N idle pooled
// connections, then after each of them has carried one large answer and gone
// back. One process per contender and size:
//
//	memchild staunch|staunch-sql|go-sql-driver URL N ROWS
//
//	staunch        the binding's native pool (staunch.NewWithConfig)
//	staunch-sql    database/sql over that pool (staunch.OpenDB)
//	go-sql-driver  database/sql + github.com/go-sql-driver/mysql
//
// Each pool at its defaults but for its size (N, all opened at the start).
// One JSON line per phase on stdout: {"phase":..,"rss_kb":..,"threads":..}
// (VmRSS and Threads of /proc/self/status), plus the Go runtime's own share:
// go_heap_kb (MemStats.HeapInuse: spans in use, garbage not yet collected
// included), go_heap_held_kb (HeapSys - HeapReleased: heap memory the runtime
// holds, not returned to the OS), go_sys_kb (MemStats.Sys: everything it
// mapped) and goroutines.
//
// The runtime is left as shipped (GOGC default, no runtime.GC or
// debug.FreeOSMemory): the figures are what a user's process shows.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	staunch "github.com/staunch-db/staunch/bindings/go"
)

// statusField is a field of /proc/self/status: kB for VmRSS, a count for Threads.
func statusField(name string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return -1
}

func emit(phase string) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	line, _ := json.Marshal(map[string]any{
		"phase":           phase,
		"rss_kb":          statusField("VmRSS"),
		"threads":         statusField("Threads"),
		"go_heap_kb":      ms.HeapInuse / 1024,
		"go_heap_held_kb": (ms.HeapSys - ms.HeapReleased) / 1024,
		"go_sys_kb":       ms.Sys / 1024,
		"goroutines":      runtime.NumGoroutine(),
	})
	fmt.Println(string(line))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "memchild:", err)
		os.Exit(1)
	}
}

func waitUntil(what string, done func() bool) {
	deadline := time.Now().Add(120 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			check(fmt.Errorf("%s: not within 120 s", what))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func largeSQL(rows int) string {
	return fmt.Sprintf("SELECT seq, REPEAT('x', 100) FROM seq_1_to_%d", rows)
}

type scanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// drain reads every row into the same two variables: nothing is kept.
func drain(rs scanner, want int) {
	var seq int64
	var s string
	n := 0
	for rs.Next() {
		check(rs.Scan(&seq, &s))
		n++
	}
	check(rs.Err())
	if n != want {
		check(fmt.Errorf("read %d rows, want %d", n, want))
	}
}

// openStaunch opens a staunch pool of k connections and waits until all k
// are connected and idle.
func openStaunch(ctx context.Context, rawURL string, k int) *staunch.Pool {
	cfg, err := staunch.ParseConfig(rawURL)
	check(err)
	cfg.MaxConns, cfg.MinIdleConns = k, k
	pool, err := staunch.NewWithConfig(ctx, cfg)
	check(err)
	waitUntil("idle connections", func() bool {
		s := pool.Stat()
		return s.Idle >= k && s.PendingCreates == 0
	})
	return pool
}

func native(ctx context.Context, rawURL string, n, rows int) {
	pool := openStaunch(ctx, rawURL, 1)
	_, err := pool.Exec(ctx, "DO 1")
	check(err)
	pool.Close()
	time.Sleep(200 * time.Millisecond)
	emit("base")

	pool = openStaunch(ctx, rawURL, n)
	defer pool.Close()
	time.Sleep(500 * time.Millisecond)
	emit("idle")
	if rows > 0 {
		held := make([]*staunch.Conn, n)
		for i := range held {
			held[i], err = pool.Acquire(ctx)
			check(err)
		}
		for _, c := range held {
			rs, err := c.Query(ctx, largeSQL(rows))
			check(err)
			drain(rs, rows)
			rs.Close()
		}
		for _, c := range held {
			c.Release()
		}
		time.Sleep(12 * time.Second)
		emit("after_large")
	}
}

// sqlPool is a *sql.DB of k connections; idle reports how many of them are
// idle, and close lets everything go.
type sqlPool struct {
	db    *sql.DB
	idle  func() int
	close func()
}

func openStaunchSQL(ctx context.Context, rawURL string, k int) sqlPool {
	pool := openStaunch(ctx, rawURL, k)
	db := staunch.OpenDB(pool)
	return sqlPool{db, func() int { return pool.Stat().Idle }, func() { check(db.Close()); pool.Close() }}
}

func openGoSQLDriver(_ context.Context, rawURL string, _ int) sqlPool {
	u, err := url.Parse(rawURL)
	check(err)
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	db, err := sql.Open("mysql", cfg.FormatDSN())
	check(err)
	return sqlPool{db, func() int { return db.Stats().Idle }, func() { check(db.Close()) }}
}

// withDatabaseSQL runs the phases through database/sql: N connections
// opened by borrowing N at once (db.Conn) and giving them back.
func withDatabaseSQL(ctx context.Context, open func(context.Context, string, int) sqlPool, rawURL string, n, rows int) {
	hold := func(db *sql.DB, k int) []*sql.Conn {
		held := make([]*sql.Conn, k)
		for i := range held {
			var err error
			held[i], err = db.Conn(ctx)
			check(err)
		}
		return held
	}
	giveBack := func(held []*sql.Conn) {
		for _, c := range held {
			check(c.Close())
		}
	}
	p := open(ctx, rawURL, 1)
	p.db.SetMaxOpenConns(1)
	p.db.SetMaxIdleConns(1)
	_, err := p.db.ExecContext(ctx, "DO 1")
	check(err)
	p.close()
	time.Sleep(200 * time.Millisecond)
	emit("base")

	p = open(ctx, rawURL, n)
	defer p.close()
	p.db.SetMaxOpenConns(n)
	p.db.SetMaxIdleConns(n)
	giveBack(hold(p.db, n))
	waitUntil("idle connections", func() bool { return p.idle() >= n })
	time.Sleep(500 * time.Millisecond)
	emit("idle")
	if rows > 0 {
		held := hold(p.db, n)
		for _, c := range held {
			rs, err := c.QueryContext(ctx, largeSQL(rows))
			check(err)
			drain(rs, rows)
			check(rs.Close())
		}
		giveBack(held)
		time.Sleep(12 * time.Second)
		emit("after_large")
	}
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: memchild staunch|staunch-sql|go-sql-driver URL N ROWS")
		os.Exit(2)
	}
	rawURL := os.Args[2]
	n, err := strconv.Atoi(os.Args[3])
	check(err)
	rows, err := strconv.Atoi(os.Args[4])
	check(err)
	if n < 1 || rows < 0 {
		check(fmt.Errorf("N must be >= 1 and ROWS >= 0"))
	}
	ctx := context.Background()
	switch os.Args[1] {
	case "staunch":
		native(ctx, rawURL, n, rows)
	case "staunch-sql":
		withDatabaseSQL(ctx, openStaunchSQL, rawURL, n, rows)
	case "go-sql-driver":
		withDatabaseSQL(ctx, openGoSQLDriver, rawURL, n, rows)
	default:
		fmt.Fprintln(os.Stderr, "memchild: unknown contender", os.Args[1])
		os.Exit(2)
	}
}
