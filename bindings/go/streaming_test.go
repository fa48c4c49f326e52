package staunch_test

// database/sql's Query streams (STAUNCH_QUERY_STREAM): a scan of an answer
// far larger than the memory the process may use. The scan runs in a child
// process (this test binary again) so its peak RSS is its own: the parent
// checks the child's VmHWM and Go heap peak against a bound far below the
// answer's size.

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
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
