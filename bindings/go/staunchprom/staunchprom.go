// Package staunchprom exports a staunch pool's figures to Prometheus through
// client_golang:
//
//	prometheus.MustRegister(staunchprom.NewCollector(pool))
//
// Each scrape reads the pool's Prometheus text (Pool.MetricsText, written by
// the library, so every binding exports the same names: OpenTelemetry's
// db_client_connection_* and db_client_operation_duration_seconds, and
// staunch's own staunch_*), parses it with expfmt's text parser and hands
// its families to the registry as constant metrics. Nothing is kept between
// scrapes and nothing runs between them. The first scrape turns on the
// timing of borrows and statements (see Pool.MetricsText).
//
// A module of its own, so that the binding's module needs no Prometheus
// dependency: only programs that import this package get client_golang.
package staunchprom

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	staunch "github.com/staunch-db/staunch/bindings/go"
)

// collector is an unchecked collector (Describe sends nothing): the series
// are known only from the text, and a topology pool's hosts may change.
type collector struct {
	text func() (string, error)
}

// NewCollector returns a collector of pool's figures, to register in a
// prometheus.Registerer. Every series carries the pool's name
// (db_client_connection_pool_name): give each pool of a process its own
// pool_name (URL knob) when several are registered in one registry. A closed
// pool yields nothing. The collector is unchecked (its Describe sends no
// descriptor), as client_golang allows for collectors whose series are known
// only when they are collected.
func NewCollector(pool *staunch.Pool) prometheus.Collector {
	return &collector{text: pool.MetricsText}
}

// Describe sends nothing: registering costs no scrape, and the registry
// treats the collector as unchecked.
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect sends the pool's figures as they are now. A text that cannot be
// read or converted is sent as an invalid metric, so the registry's Gather
// reports the error (and still gathers the rest).
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	text, err := c.text()
	if errors.Is(err, staunch.ErrClosed) {
		return
	}
	if err != nil {
		ch <- invalid(fmt.Errorf("staunchprom: %w", err))
		return
	}
	collectText(text, ch)
}

func invalid(err error) prometheus.Metric {
	return prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
}

// collectText parses text (exposition format 0.0.4) and sends each sample as
// a constant metric.
func collectText(text string, ch chan<- prometheus.Metric) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		ch <- invalid(fmt.Errorf("staunchprom: parsing the pool's text: %w", err))
		return
	}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			ch <- constMetric(mf, m)
		}
	}
}

// constMetric turns one parsed sample of mf into a constant metric with its
// labels, or an invalid metric saying why it cannot.
func constMetric(mf *dto.MetricFamily, m *dto.Metric) prometheus.Metric {
	names := make([]string, 0, len(m.GetLabel()))
	values := make([]string, 0, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		names = append(names, lp.GetName())
		values = append(values, lp.GetValue())
	}
	desc := prometheus.NewDesc(mf.GetName(), mf.GetHelp(), names, nil)
	var out prometheus.Metric
	var err error
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		out, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, m.GetCounter().GetValue(), values...)
	case dto.MetricType_GAUGE:
		out, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, m.GetGauge().GetValue(), values...)
	case dto.MetricType_UNTYPED:
		out, err = prometheus.NewConstMetric(desc, prometheus.UntypedValue, m.GetUntyped().GetValue(), values...)
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		// Upper bounds to cumulative counts; +Inf is implicit (the count).
		buckets := make(map[float64]uint64, len(h.GetBucket()))
		for _, b := range h.GetBucket() {
			if !math.IsInf(b.GetUpperBound(), +1) {
				buckets[b.GetUpperBound()] = b.GetCumulativeCount()
			}
		}
		out, err = prometheus.NewConstHistogram(desc, h.GetSampleCount(), h.GetSampleSum(), buckets, values...)
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		quantiles := make(map[float64]float64, len(s.GetQuantile()))
		for _, q := range s.GetQuantile() {
			quantiles[q.GetQuantile()] = q.GetValue()
		}
		out, err = prometheus.NewConstSummary(desc, s.GetSampleCount(), s.GetSampleSum(), quantiles, values...)
	default:
		err = fmt.Errorf("metric type %v is not supported", mf.GetType())
	}
	if err != nil {
		return invalid(fmt.Errorf("staunchprom: %s: %w", mf.GetName(), err))
	}
	if m.TimestampMs != nil {
		out = prometheus.NewMetricWithTimestamp(time.UnixMilli(m.GetTimestampMs()), out)
	}
	return out
}
