package staunchprom_test

// The collector against a real MariaDB from staunch-testkit (started by
// TestMain through the binding's internal/testkit, as the interop module's
// tests do): borrows and statements on a pool, then the registry's view.

import (
	"context"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
	"github.com/staunch-db/staunch/bindings/go/staunchprom"
)

var (
	url        string
	serverHost string // the server's address and port as the labels carry them
	serverPort string
)

func TestMain(m *testing.M) {
	kit, err := testkit.Start("server")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		os.Exit(1)
	}
	url = kit.Ready.URL
	u, err := neturl.Parse(url)
	if err == nil {
		serverHost, serverPort, err = net.SplitHostPort(u.Host)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain: the testkit's URL has no host:port") // the URL holds a password: not printed
		kit.Stop()
		os.Exit(1)
	}
	code := m.Run()
	kit.Stop()
	os.Exit(code)
}

var bg = context.Background()

func openPool(t *testing.T, knobs string) *staunch.Pool {
	t.Helper()
	p, err := staunch.New(bg, testkit.WithKnobs(url, knobs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// borrow borrows a connection, runs one statement on it and gives it back.
// The statement goes as text (no args): one round trip, so one operation in
// db_client_operation_duration_seconds (with args a prepare and an execute
// count two).
func borrow(t *testing.T, p *staunch.Pool, i int) {
	t.Helper()
	c, err := p.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	var n int64
	if err := c.QueryRow(bg, fmt.Sprintf("SELECT %d+1", i)).Scan(&n); err != nil || n != int64(i+1) {
		t.Fatalf("SELECT %d+1: %d, %v", i, n, err)
	}
}

func gather(t *testing.T, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		byName[mf.GetName()] = mf
	}
	return byName
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return l
}

// series is the one series of family name for the pool named pool on the
// test server.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name, pool string, typ dto.MetricType) *dto.Metric {
	t.Helper()
	mf := fams[name]
	if mf == nil {
		t.Fatalf("no family %s", name)
	}
	if mf.GetType() != typ {
		t.Fatalf("%s is a %v, want a %v", name, mf.GetType(), typ)
	}
	var found *dto.Metric
	for _, m := range mf.GetMetric() {
		l := labels(m)
		if l["db_client_connection_pool_name"] == pool && l["server_address"] == serverHost && l["server_port"] == serverPort {
			if found != nil {
				t.Fatalf("%s: two series for pool %q on the server", name, pool)
			}
			found = m
		}
	}
	if found == nil {
		t.Fatalf("%s: no series for pool %q on the server", name, pool)
	}
	return found
}

// checkHistogram checks that h's buckets are cumulative and end at most at
// its count.
func checkHistogram(t *testing.T, name string, h *dto.Histogram) {
	t.Helper()
	prev := uint64(0)
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
			t.Fatalf("%s: bucket le=%g holds %d after %d, count %d", name, b.GetUpperBound(), b.GetCumulativeCount(), prev, h.GetSampleCount())
		}
		prev = b.GetCumulativeCount()
	}
	if len(h.GetBucket()) < 10 {
		t.Fatalf("%s: %d buckets", name, len(h.GetBucket()))
	}
}

func Test_collector_on_a_pool(t *testing.T) {
	const pool = "go orders"
	p := openPool(t, "pool_name=go%20orders&max_size=2")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(staunchprom.NewCollector(p))

	const before = 5 // borrows before the first scrape, untimed
	for i := 0; i < before; i++ {
		borrow(t, p, i)
	}
	fams := gather(t, reg)
	if v := series(t, fams, "staunch_acquires_total", pool, dto.MetricType_COUNTER).GetCounter().GetValue(); v != before {
		t.Fatalf("staunch_acquires_total = %g, want %d", v, before)
	}
	wait := series(t, fams, "db_client_connection_wait_time_seconds", pool, dto.MetricType_HISTOGRAM).GetHistogram()
	if wait.GetSampleCount() != before {
		t.Fatalf("wait_time count = %d, want %d", wait.GetSampleCount(), before)
	}
	checkHistogram(t, "wait_time", wait)
	// Timings start with the first scrape: nothing before it was timed.
	if n := series(t, fams, "db_client_connection_use_time_seconds", pool, dto.MetricType_HISTOGRAM).GetHistogram().GetSampleCount(); n != 0 {
		t.Fatalf("use_time count before any scrape = %d, want 0", n)
	}
	// Every series of every family carries the pool's name.
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			if got := labels(m)["db_client_connection_pool_name"]; got != pool {
				t.Fatalf("%s: pool name label %q", name, got)
			}
		}
	}

	const after = 3 // timed borrows
	for i := 0; i < after; i++ {
		borrow(t, p, i)
	}
	fams = gather(t, reg)
	if v := series(t, fams, "staunch_acquires_total", pool, dto.MetricType_COUNTER).GetCounter().GetValue(); v != before+after {
		t.Fatalf("staunch_acquires_total = %g, want %d", v, before+after)
	}
	if n := series(t, fams, "db_client_connection_wait_time_seconds", pool, dto.MetricType_HISTOGRAM).GetHistogram().GetSampleCount(); n != before+after {
		t.Fatalf("wait_time count = %d, want %d", n, before+after)
	}
	use := series(t, fams, "db_client_connection_use_time_seconds", pool, dto.MetricType_HISTOGRAM).GetHistogram()
	if use.GetSampleCount() != after || use.GetSampleSum() <= 0 {
		t.Fatalf("use_time: count %d sum %g, want count %d and a positive sum", use.GetSampleCount(), use.GetSampleSum(), after)
	}
	checkHistogram(t, "use_time", use)
	op := series(t, fams, "db_client_operation_duration_seconds", pool, dto.MetricType_HISTOGRAM).GetHistogram()
	if op.GetSampleCount() != after {
		t.Fatalf("operation_duration count = %d, want %d (one statement per timed borrow)", op.GetSampleCount(), after)
	}
	if n := series(t, fams, "db_client_connection_max", pool, dto.MetricType_GAUGE).GetGauge().GetValue(); n != 2 {
		t.Fatalf("db_client_connection_max = %g, want 2", n)
	}

	// Linting: the names are OpenTelemetry's, decided by the library; the
	// only complaint allowed is the one its convention brings (a gauge
	// named ..._count).
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pr := range problems {
		got = append(got, pr.Metric+": "+pr.Text)
	}
	sort.Strings(got)
	allowed := map[string]bool{
		`db_client_connection_count: non-histogram and non-summary metrics should not have "_count" suffix`: true,
	}
	for _, g := range got {
		if !allowed[g] {
			t.Errorf("lint: %s", g)
		}
	}

	// A closed pool yields nothing, and gathering still works.
	p.Close()
	if fams := gather(t, reg); len(fams) != 0 {
		t.Fatalf("a closed pool gave %d families", len(fams))
	}
}

func Test_collector_two_pools_in_one_registry(t *testing.T) {
	a := openPool(t, "pool_name=orders-a")
	b := openPool(t, "")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(staunchprom.NewCollector(a), staunchprom.NewCollector(b))
	borrow(t, a, 1)
	borrow(t, a, 2)
	borrow(t, b, 3)
	fams := gather(t, reg)
	if v := series(t, fams, "staunch_acquires_total", "orders-a", dto.MetricType_COUNTER).GetCounter().GetValue(); v != 2 {
		t.Fatalf("orders-a acquires = %g, want 2", v)
	}
	if v := series(t, fams, "staunch_acquires_total", b.Name(), dto.MetricType_COUNTER).GetCounter().GetValue(); v != 1 {
		t.Fatalf("%s acquires = %g, want 1", b.Name(), v)
	}
	if !strings.HasPrefix(b.Name(), "staunch-") {
		t.Fatalf("default name %q", b.Name())
	}
	if _, err := strconv.Atoi(strings.TrimPrefix(b.Name(), "staunch-")); err != nil {
		t.Fatalf("default name %q", b.Name())
	}
}
