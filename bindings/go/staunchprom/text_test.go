package staunchprom

// The conversion alone, on fixed texts: what the library does not write
// today (summaries, untyped samples) and what must fail loudly (a text that
// does not parse, a closed pool).

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	staunch "github.com/staunch-db/staunch/bindings/go"
)

func register(t *testing.T, text string, err error) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&collector{text: func() (string, error) { return text, err }})
	return reg
}

func Test_text_kinds_convert(t *testing.T) {
	const text = `# HELP t_requests_total Requests.
# TYPE t_requests_total counter
t_requests_total{a="x",b="y \"q\""} 3
t_requests_total{a="z",b=""} 4
# HELP t_up Up.
# TYPE t_up gauge
t_up 1
t_plain{k="v"} 2.5
# HELP t_lat Latency.
# TYPE t_lat summary
t_lat{quantile="0.5"} 0.2
t_lat{quantile="0.99"} 0.9
t_lat_sum 12
t_lat_count 30
# HELP t_wait Wait.
# TYPE t_wait histogram
t_wait_bucket{le="0.001"} 1
t_wait_bucket{le="0.1"} 5
t_wait_bucket{le="+Inf"} 6
t_wait_sum 0.75
t_wait_count 6
`
	reg := register(t, text, nil)
	// The registry writes back what it was given (labels sorted, HELP of
	// an untyped sample made up by client_golang's text writer).
	want := `# HELP t_lat Latency.
# TYPE t_lat summary
t_lat{quantile="0.5"} 0.2
t_lat{quantile="0.99"} 0.9
t_lat_sum 12
t_lat_count 30
# HELP t_requests_total Requests.
# TYPE t_requests_total counter
t_requests_total{a="x",b="y \"q\""} 3
t_requests_total{a="z",b=""} 4
# HELP t_up Up.
# TYPE t_up gauge
t_up 1
# HELP t_wait Wait.
# TYPE t_wait histogram
t_wait_bucket{le="0.001"} 1
t_wait_bucket{le="0.1"} 5
t_wait_bucket{le="+Inf"} 6
t_wait_sum 0.75
t_wait_count 6
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "t_lat", "t_requests_total", "t_up", "t_wait"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "t_plain"); err != nil || n != 1 {
		t.Fatalf("untyped t_plain: %d series, %v", n, err)
	}
}

func Test_text_errors_reach_gather(t *testing.T) {
	// A text that does not parse: Gather says so.
	reg := register(t, "t_bad{a=\"x\" 1\n", nil)
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "parsing the pool's text") {
		t.Fatalf("Gather of a bad text: %v", err)
	}
	// An error from the pool other than closed: Gather says so.
	reg = register(t, "", errors.New("boom"))
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Gather with a failing pool: %v", err)
	}
	// A closed pool: nothing, and no error.
	reg = register(t, "", &staunch.Error{Status: staunch.StatusClosed, Op: "metrics", Message: "the pool is closed"})
	if mfs, err := reg.Gather(); err != nil || len(mfs) != 0 {
		t.Fatalf("Gather of a closed pool: %d families, %v", len(mfs), err)
	}
}
