package staunch_test

// database/sql's Query streams (STAUNCH_QUERY_STREAM): a scan of an answer
// far larger than the memory the process may use. The scan runs in a child
// process (this test binary again) so its peak RSS is its own: the parent
// checks the child's VmHWM and Go heap peak against a bound far below the
// answer's size.

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

const (
	streamRows     = 1_000_000
	streamRowBytes = 1000 // the answer: ~1 GB of text
	streamMaxRSS   = 200 << 20
)

func Test_sql_streaming_scan_far_past_the_memory_limit(t *testing.T) {
	if os.Getenv("STAUNCH_TEST_CHILD_URL") != "" {
		streamChild(t)
		return
	}
	if testing.Short() || raceEnabled {
		t.Skip("-short or -race (the race detector's shadow memory is no measure); scripts/go-tests.sh runs it in the static build")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^Test_sql_streaming_scan_far_past_the_memory_limit$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), "STAUNCH_TEST_CHILD_URL="+directURL, "GOMEMLIMIT=64MiB")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var rows, bytes, hwm, heap int64
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 5 && f[0] == "STREAM" {
			rows, _ = strconv.ParseInt(f[1], 10, 64)
			bytes, _ = strconv.ParseInt(f[2], 10, 64)
			hwm, _ = strconv.ParseInt(f[3], 10, 64)
			heap, _ = strconv.ParseInt(f[4], 10, 64)
		}
	}
	t.Logf("scanned %d rows, %d MB of values; child's peak RSS %d MB, peak Go heap %d MB",
		rows, bytes>>20, hwm>>20, heap>>20)
	if rows != streamRows || bytes < streamRows*streamRowBytes {
		t.Fatalf("child read %d rows, %d bytes:\n%s", rows, bytes, out)
	}
	if hwm == 0 || hwm > streamMaxRSS || heap > streamMaxRSS {
		t.Fatalf("peak RSS %d MB, Go heap %d MB for a %d MB answer: not streamed", hwm>>20, heap>>20, bytes>>20)
	}
}

func streamChild(t *testing.T) {
	debug.SetMemoryLimit(64 << 20)
	db := sqlOpen(t, withKnobs(directURL, "query_timeout=10m"))
	rows, err := db.Query(fmt.Sprintf("SELECT seq, REPEAT(CHAR(65 + seq %% 26), %d) FROM seq_1_to_%d", streamRowBytes, streamRows))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n, total int64
	var peakHeap uint64
	var ms runtime.MemStats
	var id int64
	var s sql.RawBytes
	last := time.Now()
	for rows.Next() {
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		n++
		total += int64(len(s))
		if n%50_000 == 0 || time.Since(last) > time.Second {
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, ms.HeapAlloc)
			last = time.Now()
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("STREAM %d %d %d %d\n", n, total, vmHWM(t), peakHeap)
}

// vmHWM is this process's peak resident set (bytes), from /proc.
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// A database/sql Rows.Next waiting on a streaming answer returns as soon as
// its context is cancelled, whether the server is slow (the next row is 10 s
// away) or frozen (SIGSTOP): the statement is killed on the server, the
// connection is closed rather than returned (its session was left
// mid-answer), and no goroutine is left behind.
func Test_sql_streaming_next_returns_when_ctx_cancelled(t *testing.T) {
	for _, server := range []string{"slow", "frozen"} {
		t.Run(server, func(t *testing.T) {
			p, db := openDB(t, "max_size=1")
			db.SetMaxOpenConns(1)
			var before int64
			if err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&before); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			goroutines := runtime.NumGoroutine()
			// slow: rows of 20 kB (past the server's 16 kB net buffer,
			// so they leave as they are made), the 301st 10 s away (a
			// fetch fills a batch of 256 rows: the second one waits).
			// frozen: a large answer, the server frozen after the first
			// row; Next blocks once the socket buffers are drained.
			q := "SELECT seq, REPEAT('x', 20000), IF(seq > 300, SLEEP(10), 0) FROM seq_1_to_400"
			marker := "SELECT seq, REPEAT('x', 20000)%"
			if server == "frozen" {
				q = "SELECT seq, REPEAT('y', 1000) FROM seq_1_to_300000"
				marker = "SELECT seq, REPEAT('y', 1000)%"
			}
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			rows, err := db.QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var read atomic.Int64
			returned := make(chan time.Time, 1)
			go func() {
				for rows.Next() {
					if read.Add(1) == 1 && server == "frozen" {
						kit.Must(t, "freeze")
					}
				}
				returned <- time.Now()
			}()
			thawed := server != "frozen"
			defer func() {
				if !thawed {
					kit.Must(t, "thaw")
				}
			}()
			// Wait until Next blocks: rows came, then none for 300 ms.
			last, lastChange := int64(0), time.Now()
			for last == 0 || time.Since(lastChange) < 300*time.Millisecond {
				if n := read.Load(); n != last {
					last, lastChange = n, time.Now()
				}
				if last == 0 && time.Since(lastChange) > 5*time.Second {
					t.Fatal("no row arrived in 5 s")
				}
				select {
				case at := <-returned:
					t.Fatalf("Next ended by itself at %v after %d rows: %v", at, read.Load(), rows.Err())
				case <-time.After(10 * time.Millisecond):
				}
			}
			cancelled := time.Now()
			cancel()
			var back time.Time
			select {
			case back = <-returned:
			case <-time.After(5 * time.Second):
				t.Fatal("Next did not return within 5 s of the cancel")
			}
			took := back.Sub(cancelled)
			t.Logf("%s: Next returned %v after the cancel, having read %d rows", server, took, read.Load())
			if took > 100*time.Millisecond+slack() {
				t.Fatalf("Next returned %v after the cancel", took)
			}
			if err := rows.Err(); !errors.Is(err, context.Canceled) || !errors.Is(err, staunch.ErrCancelled) {
				t.Fatalf("rows.Err: %v", err)
			}
			rows.Close()
			if server == "frozen" {
				kit.Must(t, "thaw")
				thawed = true
			}
			// The statement is gone from the server (killed), the
			// connection closed: the next borrow is a new connection, and
			// the old one is not on the server any more.
			deadline := time.Now().Add(5*time.Second + slack())
			for kit.QueryInt(t, fmt.Sprintf("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE %q", marker)) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("the server still runs the statement")
				}
				time.Sleep(20 * time.Millisecond)
			}
			var after int64
			if err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&after); err != nil {
				t.Fatal(err)
			}
			if after == before {
				t.Fatalf("connection %d was returned to the pool after its answer was given up", before)
			}
			for kit.QueryInt(t, fmt.Sprintf("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %d", before)) != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("connection %d is still open on the server", before)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if s := p.Stat(); s.InUse != 0 {
				t.Fatalf("%d connections still borrowed", s.InUse)
			}
			for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				buf := make([]byte, 1<<16)
				t.Fatalf("%d goroutines left:\n%s", n-goroutines, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// A streamed answer read under a context that can end waits for its rows
// in Go's netpoller, on the rows' socket (staunch_rows_wait_fd), not in a
// thread: every row arrives, in order. A wait there is bounded even when
// the context never ends: a server frozen mid-answer is cut off by the
// statement's own bound (query_timeout + 1 s, once the wait moves into the
// library after readyWait, 1 s), and the pool's next connection works.
func Test_sql_streamed_rows_wait_in_the_netpoller(t *testing.T) {
	p, db := openDB(t, "max_size=1&query_timeout=500ms")
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()

	// Rows of 20 kB (past the server's 16 kB net buffer: they leave as
	// they are made), a pause of 50 ms every 50 rows: the reader runs out.
	before := staunch.PollerWaits()
	rows, err := db.QueryContext(ctx, "SELECT seq, REPEAT('x', 20000), IF(seq % 50 = 0, SLEEP(0.05), 0) FROM seq_1_to_300")
	if err != nil {
		t.Fatal(err)
	}
	want := int64(1)
	for rows.Next() {
		var seq, slept int64
		var s string
		if err := rows.Scan(&seq, &s, &slept); err != nil {
			t.Fatal(err)
		}
		if seq != want || len(s) != 20000 {
			t.Fatalf("row %d: seq %d, %d bytes", want, seq, len(s))
		}
		want++
	}
	if err := rows.Err(); err != nil || want != 301 {
		t.Fatalf("%d rows: %v", want-1, err)
	}
	waits := staunch.PollerWaits() - before
	t.Logf("300 rows with 6 pauses: %d waits in the netpoller", waits)
	if waits == 0 {
		t.Fatal("no wait for a row went through the netpoller")
	}

	// Frozen after the first rows; the context never ends.
	rows, err = db.QueryContext(ctx, "SELECT seq, REPEAT('y', 1000) FROM seq_1_to_3000000")
	if err != nil {
		t.Fatal(err)
	}
	thawed := false
	defer func() {
		if !thawed {
			kit.Must(t, "thaw")
		}
	}()
	kit.Must(t, "freeze")
	frozen := time.Now()
	n := 0
	for rows.Next() {
		n++
	}
	took := time.Since(frozen)
	kit.Must(t, "thaw")
	thawed = true
	err = rows.Err()
	t.Logf("frozen: %d rows, then %v after %v", n, err, took)
	if !errors.Is(err, staunch.ErrStatementTimeout) && !errors.Is(err, staunch.ErrServerUnresponsive) {
		t.Fatalf("a wait on a frozen server ended with %v", err)
	}
	// readyWait, then the statement's bound (0.5 s + 1 s of grace).
	if took > 3*time.Second+slack() {
		t.Fatalf("a wait on a frozen server lasted %v", took)
	}
	rows.Close()
	var v int
	if err := db.QueryRowContext(ctx, "SELECT 9").Scan(&v); err != nil || v != 9 {
		t.Fatalf("after the cut: %d %v", v, err)
	}
	if s := p.Stat(); s.InUse != 0 {
		t.Fatalf("%d connections still borrowed", s.InUse)
	}
}
