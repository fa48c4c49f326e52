package staunchotel

// OpenTelemetry metrics of a pool, from the one Prometheus text the library
// writes (Pool.MetricsText), so that every face exports the same figures
// under the same names.
//
// Two parts, because the metrics API cannot carry a histogram that was
// aggregated elsewhere (its histograms take one value at a time, on the
// path that measured it) while the pool keeps its latencies as bucket
// counts inside the library:
//
//   - RegisterMetrics: the gauges and counters through the API
//     (go.opentelemetry.io/otel/metric), as asynchronous instruments read
//     at each collection, for any MeterProvider;
//   - NewHistogramProducer: the four histograms (wait, create and use
//     time, operation duration), with the pool's own bucket edges and
//     counts, for the SDK's readers (sdk/metric.WithProducer), the bridge
//     OpenTelemetry provides for data aggregated outside the SDK (as its
//     OpenCensus and Prometheus bridges are).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// MetricsOption configures RegisterMetrics.
type MetricsOption func(*metricsConfig)

type metricsConfig struct {
	mp metric.MeterProvider
}

// WithMeterProvider takes the meter from mp instead of the global
// provider (otel.GetMeterProvider(), read once, by RegisterMetrics).
func WithMeterProvider(mp metric.MeterProvider) MetricsOption {
	return func(c *metricsConfig) { c.mp = mp }
}

// gauges: each figure RegisterMetrics reports, by its name in the pool's
// text, with the OpenTelemetry instrument it becomes.
var gauges = []struct {
	text, name, unit, help string
	counter                bool // a monotonic counter, else an up-down counter
}{
	{"db_client_connection_count", "db.client.connection.count", "{connection}", "Connections open now, by state: idle or used", false},
	{"db_client_connection_max", "db.client.connection.max", "{connection}", "The most connections the pool opens (max_size)", false},
	{"db_client_connection_idle_max", "db.client.connection.idle.max", "{connection}", "The most idle connections the pool keeps", false},
	{"db_client_connection_idle_min", "db.client.connection.idle.min", "{connection}", "The fewest idle connections the pool keeps (min_idle)", false},
	{"db_client_connection_pending_requests", "db.client.connection.pending_requests", "{request}", "Callers waiting for a connection now", false},
	{"db_client_connection_timeouts_total", "db.client.connection.timeouts", "{timeout}", "Borrows that timed out waiting for a connection", true},
}

// RegisterMetrics reports pool's gauges and counters through the metrics
// API, read from the pool at each collection (nothing runs between
// collections): db.client.connection.count (attribute
// db.client.connection.state: idle or used), .max, .idle.max, .idle.min,
// .pending_requests and .timeouts, each with db.client.connection.pool.name,
// server.address and server.port (a topology pool: one series per host).
// For the histograms, see NewHistogramProducer. Unregister the returned
// registration when the pool closes (a closed pool reports nothing).
func RegisterMetrics(pool *staunch.Pool, opts ...MetricsOption) (metric.Registration, error) {
	if pool == nil {
		return nil, errors.New("staunchotel: RegisterMetrics needs a pool")
	}
	c := metricsConfig{}
	for _, o := range opts {
		o(&c)
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	meter := c.mp.Meter(ScopeName)
	instruments := make([]metric.Observable, len(gauges))
	for i, g := range gauges {
		var err error
		if g.counter {
			instruments[i], err = meter.Int64ObservableCounter(g.name, metric.WithUnit(g.unit), metric.WithDescription(g.help))
		} else {
			instruments[i], err = meter.Int64ObservableUpDownCounter(g.name, metric.WithUnit(g.unit), metric.WithDescription(g.help))
		}
		if err != nil {
			return nil, fmt.Errorf("staunchotel: %s: %w", g.name, err)
		}
	}
	return meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		text, err := pool.MetricsText()
		if errors.Is(err, staunch.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		samples, err := parseText(text)
		if err != nil {
			return err
		}
		for i, g := range gauges {
			for _, s := range samples {
				if s.name != g.text {
					continue
				}
				v := int64(s.value)
				set := metric.WithAttributeSet(s.attributes())
				if g.counter {
					o.ObserveInt64(instruments[i].(metric.Int64ObservableCounter), v, set)
				} else {
					o.ObserveInt64(instruments[i].(metric.Int64ObservableUpDownCounter), v, set)
				}
			}
		}
		return nil
	}, instruments...)
}

// histograms: the four the producer makes, by their name in the text.
var histograms = []struct{ text, name, help string }{
	{"db_client_connection_wait_time_seconds", "db.client.connection.wait_time", "Time a borrow waited for a connection"},
	{"db_client_connection_create_time_seconds", "db.client.connection.create_time", "Time a successful connect took"},
	{"db_client_connection_use_time_seconds", "db.client.connection.use_time", "Time a connection stayed borrowed"},
	{"db_client_operation_duration_seconds", "db.client.operation.duration", "Time a statement took"},
}

// HistogramProducer hands an SDK reader the pool's four histograms (see
// NewHistogramProducer).
type HistogramProducer struct {
	pool  *staunch.Pool
	start time.Time
}

var _ sdkmetric.Producer = (*HistogramProducer)(nil)

// NewHistogramProducer makes pool's histograms available to an SDK
// reader:
//
//	reader := sdkmetric.NewPeriodicReader(exporter,
//		sdkmetric.WithProducer(staunchotel.NewHistogramProducer(pool)))
//
// db.client.connection.wait_time, .create_time, .use_time and
// db.client.operation.duration, in seconds, cumulative since the pool
// opened, with the pool's own bucket edges (powers of four microseconds, 1
// µs to 19 h) and exact counts and sums, and the attributes of
// RegisterMetrics. The first collection turns on the timing of borrows and
// statements (see Pool.MetricsText), which use_time and operation.duration
// count from then on.
func NewHistogramProducer(pool *staunch.Pool) *HistogramProducer {
	return &HistogramProducer{pool: pool, start: time.Now()}
}

// Produce returns the histograms as they are now (none for a closed
// pool).
func (p *HistogramProducer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	text, err := p.pool.MetricsText()
	if errors.Is(err, staunch.ErrClosed) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	samples, err := parseText(text)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []metricdata.Metrics
	for _, h := range histograms {
		points := map[attribute.Distinct]*metricdata.HistogramDataPoint[float64]{}
		var order []attribute.Distinct
		for _, s := range samples {
			var suffix string
			switch {
			case s.name == h.text+"_bucket":
				suffix = "bucket"
			case s.name == h.text+"_sum":
				suffix = "sum"
			case s.name == h.text+"_count":
				suffix = "count"
			default:
				continue
			}
			set := s.attributes()
			dp, ok := points[set.Equivalent()]
			if !ok {
				dp = &metricdata.HistogramDataPoint[float64]{Attributes: set, StartTime: p.start, Time: now}
				points[set.Equivalent()] = dp
				order = append(order, set.Equivalent())
			}
			switch suffix {
			case "sum":
				dp.Sum = s.value
			case "count":
				dp.Count = uint64(s.value)
			case "bucket":
				if s.le == "+Inf" {
					continue
				}
				le, err := strconv.ParseFloat(s.le, 64)
				if err != nil {
					return nil, fmt.Errorf("staunchotel: %s: bucket edge %q", s.name, s.le)
				}
				dp.Bounds = append(dp.Bounds, le)
				dp.BucketCounts = append(dp.BucketCounts, uint64(s.value)) // cumulative for now
			}
		}
		data := metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality}
		for _, k := range order {
			dp := points[k]
			// The text's buckets are cumulative (le); OpenTelemetry's are
			// per bucket, with one more for the values above the last
			// edge.
			var below uint64
			for i, c := range dp.BucketCounts {
				dp.BucketCounts[i] = c - below
				below = c
			}
			dp.BucketCounts = append(dp.BucketCounts, dp.Count-below)
			data.DataPoints = append(data.DataPoints, *dp)
		}
		if len(data.DataPoints) > 0 {
			out = append(out, metricdata.Metrics{Name: h.name, Description: h.help, Unit: "s", Data: data})
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{Scope: instrumentation.Scope{Name: ScopeName}, Metrics: out}}, nil
}

// sample is one line of the pool's text: a name, its labels, a value.
type sample struct {
	name   string
	labels [][2]string
	le     string
	value  float64
}

// labelKeys maps the text's label names to OpenTelemetry's attribute keys.
var labelKeys = map[string]attribute.Key{
	"db_client_connection_pool_name": keyPool,
	"db_client_connection_state":     "db.client.connection.state",
	"server_address":                 keyAddress,
	"server_port":                    keyPort,
}

func (s sample) attributes() attribute.Set {
	kv := make([]attribute.KeyValue, 0, len(s.labels))
	for _, l := range s.labels {
		k, ok := labelKeys[l[0]]
		if !ok {
			continue
		}
		if k == keyPort {
			if n, err := strconv.Atoi(l[1]); err == nil {
				kv = append(kv, k.Int(n))
				continue
			}
		}
		kv = append(kv, k.String(l[1]))
	}
	return attribute.NewSet(kv...)
}

// parseText reads the pool's Prometheus text: comments skipped, each other
// line `name{label="value",...} number`. Only what the library writes is
// read (its label values escape \ " and newline as the format says); a
// line that is not that is an error naming it.
func parseText(text string) ([]sample, error) {
	var out []sample
	for n, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("staunchotel: the pool's metrics text, line %d: %w", n+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseLine(line string) (sample, error) {
	var s sample
	open := strings.IndexByte(line, '{')
	sp := strings.LastIndexByte(line, ' ')
	if sp < 0 {
		return s, errors.New("no value")
	}
	v, err := strconv.ParseFloat(line[sp+1:], 64)
	if err != nil && line[sp+1:] != "+Inf" && line[sp+1:] != "NaN" {
		return s, fmt.Errorf("value %q", line[sp+1:])
	}
	switch line[sp+1:] {
	case "+Inf":
		v = math.Inf(1)
	case "NaN":
		v = math.NaN()
	}
	s.value = v
	if open < 0 || open > sp {
		s.name = line[:sp]
		return s, nil
	}
	s.name = line[:open]
	rest := line[open+1 : sp]
	if !strings.HasSuffix(rest, "}") {
		return s, errors.New("labels without their end")
	}
	rest = rest[:len(rest)-1]
	for rest != "" {
		eq := strings.Index(rest, "=\"")
		if eq < 0 {
			return s, errors.New("a label without a value")
		}
		name := rest[:eq]
		var val strings.Builder
		i := eq + 2
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
				switch rest[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(rest[i])
				}
				continue
			}
			val.WriteByte(rest[i])
		}
		if i >= len(rest) {
			return s, errors.New("a label value without its end")
		}
		if name == "le" {
			s.le = val.String()
		} else {
			s.labels = append(s.labels, [2]string{name, val.String()})
		}
		rest = strings.TrimPrefix(rest[i+1:], ",")
	}
	return s, nil
}
