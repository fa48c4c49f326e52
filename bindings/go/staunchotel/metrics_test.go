package staunchotel_test

import (
	"testing"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
	"github.com/staunch-db/staunch/bindings/go/staunchotel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// collect reads everything the reader has now, by metric name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(bg, &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != staunchotel.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func sumPoint(t *testing.T, m metricdata.Metrics, state string) int64 {
	t.Helper()
	var points []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		points = d.DataPoints
	default:
		t.Fatalf("%s: %T", m.Name, m.Data)
	}
	for _, p := range points {
		if s, ok := p.Attributes.Value("db.client.connection.state"); state == "" || (ok && s.AsString() == state) {
			return p.Value
		}
	}
	t.Fatalf("%s: no point for state %q in %v", m.Name, state, points)
	return 0
}

func TestMetricsThroughTheAPIAndTheProducer(t *testing.T) {
	cfg, err := staunch.ParseConfig(testkit.WithKnobs(url, "pool_name=otelmetrics&max_size=3&min_idle=1"))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := staunch.NewWithConfig(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(staunchotel.NewHistogramProducer(pool)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(bg) }()
	reg, err := staunchotel.RegisterMetrics(pool, staunchotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reg.Unregister() }()
	collect(t, reader) // the first read turns the timings on

	for i := 0; i < 4; i++ {
		var v int
		if err := pool.QueryRow(bg, "SELECT 1").Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	c, err := pool.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	m := collect(t, reader)
	if got := sumPoint(t, m["db.client.connection.count"], "used"); got != 1 {
		t.Errorf("used: %d", got)
	}
	if got := sumPoint(t, m["db.client.connection.max"], ""); got != 3 {
		t.Errorf("max: %d", got)
	}
	if got := sumPoint(t, m["db.client.connection.idle.min"], ""); got != 1 {
		t.Errorf("idle.min: %d", got)
	}
	if got := sumPoint(t, m["db.client.connection.timeouts"], ""); got != 0 {
		t.Errorf("timeouts: %d", got)
	}
	c.Release()

	hist := func(name string) metricdata.HistogramDataPoint[float64] {
		t.Helper()
		d, ok := m[name].Data.(metricdata.Histogram[float64])
		if !ok || len(d.DataPoints) != 1 {
			t.Fatalf("%s: %#v", name, m[name].Data)
		}
		if m[name].Unit != "s" || d.Temporality != metricdata.CumulativeTemporality {
			t.Errorf("%s: unit %q, temporality %v", name, m[name].Unit, d.Temporality)
		}
		p := d.DataPoints[0]
		var n uint64
		for _, c := range p.BucketCounts {
			n += c
		}
		if n != p.Count || len(p.BucketCounts) != len(p.Bounds)+1 {
			t.Errorf("%s: %d counts in %d buckets for %d bounds, count %d", name, n, len(p.BucketCounts), len(p.Bounds), p.Count)
		}
		if v, ok := p.Attributes.Value(attribute.Key("db.client.connection.pool.name")); !ok || v.AsString() != "otelmetrics" {
			t.Errorf("%s: attributes %v", name, p.Attributes)
		}
		if v, ok := p.Attributes.Value(attribute.Key("server.port")); !ok || v.AsInt64() != int64(serverPort) {
			t.Errorf("%s: attributes %v", name, p.Attributes)
		}
		return p
	}
	// Four QueryRows and one Acquire since the timings came on: five waits
	// at least (the first read's own), four statements, four borrows ended.
	if p := hist("db.client.connection.wait_time"); p.Count < 5 {
		t.Errorf("wait_time count %d", p.Count)
	}
	if p := hist("db.client.operation.duration"); p.Count != 4 || p.Sum <= 0 {
		t.Errorf("operation.duration count %d sum %v", p.Count, p.Sum)
	}
	if p := hist("db.client.connection.use_time"); p.Count != 4 {
		t.Errorf("use_time count %d", p.Count)
	}
	if p := hist("db.client.connection.create_time"); p.Count < 1 {
		t.Errorf("create_time count %d", p.Count)
	}

	pool.Close()
	if m := collect(t, reader); len(m) != 0 {
		t.Errorf("a closed pool reported %d metrics", len(m))
	}
}
