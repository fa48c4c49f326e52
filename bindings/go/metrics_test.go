package staunch_test

import (
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

// sampleValue is the value of the one sample of text whose name and labels
// start with prefix ("name{labels"), or "" if there is none.
func sampleValue(t *testing.T, text, prefix string) string {
	t.Helper()
	found := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			if found != "" {
				t.Fatalf("two samples start with %q", prefix)
			}
			found = line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	return found
}

func Test_metrics_text_and_name(t *testing.T) {
	p := openPool(t, "pool_name=go%20orders&max_size=2")
	if got := p.Name(); got != "go orders" {
		t.Fatalf("Name() = %q, want \"go orders\"", got)
	}
	text, err := p.MetricsText()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE db_client_connection_wait_time_seconds histogram\n",
		"# TYPE db_client_connection_use_time_seconds histogram\n",
		"# TYPE staunch_acquires_total counter\n",
		`db_client_connection_max{db_client_connection_pool_name="go orders",server_address="`,
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("the text lacks %q:\n%s", want, text)
		}
	}
	acquires := `staunch_acquires_total{db_client_connection_pool_name="go orders",`
	if v := sampleValue(t, text, acquires); v != "0" {
		t.Fatalf("acquires before any borrow: %q", v)
	}
	for i := 0; i < 3; i++ {
		if n := queryInt(t, p, "SELECT 1"); n != 1 {
			t.Fatalf("SELECT 1 gave %d", n)
		}
	}
	c := acquire(t, p)
	c.Release()
	text, err = p.MetricsText()
	if err != nil {
		t.Fatal(err)
	}
	if v := sampleValue(t, text, acquires); v != "4" {
		t.Fatalf("acquires after 4 borrows: %q", v)
	}
	// Timings were turned on by the first call: the 4 borrows after it
	// count in the use-time histogram.
	if v := sampleValue(t, text, `db_client_connection_use_time_seconds_count{db_client_connection_pool_name="go orders",`); v != "4" {
		t.Fatalf("use_time count after 4 timed borrows: %q", v)
	}

	p.Close()
	if _, err := p.MetricsText(); !errors.Is(err, staunch.ErrClosed) {
		t.Fatalf("MetricsText after Close: %v", err)
	}
	if got := p.Name(); got != "go orders" {
		t.Fatalf("Name() after Close = %q", got)
	}
}

func Test_metrics_name_default_and_long(t *testing.T) {
	p := openPool(t, "")
	if got := p.Name(); !regexp.MustCompile(`^staunch-[0-9]+$`).MatchString(got) {
		t.Fatalf("default Name() = %q, want staunch-N", got)
	}
	// Longer than the first buffer Name's C call gets: the second call,
	// with the length the first reported, must give it whole.
	long := strings.Repeat("n", 120)
	q := openPool(t, "pool_name="+long)
	if got := q.Name(); got != long {
		t.Fatalf("long Name() = %q (%d bytes), want %d bytes", got, len(got), len(long))
	}
	text, err := q.MetricsText()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, `db_client_connection_pool_name="`+long+`"`) {
		t.Fatal("the text does not carry the long name")
	}
	var nilPool *staunch.Pool
	if _, err := nilPool.MetricsText(); !errors.Is(err, staunch.ErrClosed) {
		t.Fatalf("MetricsText on a nil pool: %v", err)
	}
}

// leakyHandler borrows and holds the connection past the leak threshold.
func leakyHandler(t *testing.T, p *staunch.Pool) {
	c, err := p.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	c.Release()
}

// A leak report names the Go code that borrowed (issue 47 item 4).
func Test_leak_report_names_the_borrowing_function(t *testing.T) {
	var mu sync.Mutex
	var leaks []string
	p, err := staunch.NewWithConfig(bg, &staunch.Config{
		URL: withKnobs(directURL, "leak_detection_threshold=50ms&max_size=1"),
		OnEvent: func(e staunch.Event) {
			if e.Kind == staunch.EventLeakSuspected {
				mu.Lock()
				leaks = append(leaks, e.Message)
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	leakyHandler(t, p)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(leaks)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaks) != 1 {
		t.Fatalf("leak reports: %q", leaks)
	}
	msg := leaks[0]
	if !strings.Contains(msg, "possible leak; borrowed at:\n") ||
		!strings.Contains(msg, "go_test.leakyHandler\n\t") ||
		!strings.Contains(msg, "metrics_test.go:") {
		t.Fatalf("the report does not name the borrower: %s", msg)
	}
	if strings.Contains(msg, "bindings/go.(*Pool).acquire") {
		t.Fatalf("the binding's own frames are in the report: %s", msg)
	}
}
