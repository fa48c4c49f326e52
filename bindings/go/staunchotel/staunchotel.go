// Package staunchotel makes OpenTelemetry spans of a staunch pool's
// acquires and statements: set a Tracer in staunch.Config.Tracer, and each
// Acquire and each statement (native API and database/sql through
// staunch.OpenDB) becomes a span, a child of the span in the caller's
// context.
//
//	cfg, _ := staunch.ParseConfig(url)
//	cfg.Tracer = staunchotel.NewTracer() // otel.GetTracerProvider()
//	pool, err := staunch.NewWithConfig(ctx, cfg)
//
// The spans (names fixed, so that they group well; the statement's text
// is not in the name):
//
//   - "staunch.acquire" (kind internal): a borrow, its wait and any
//     connect it waited for.
//   - "staunch.statement" (kind client): one statement, from its send to
//     its answer read whole (for a streamed answer, QueryStream or
//     database/sql's Query, until its rows end or close); a transaction's
//     begin, commit and rollback too (db.operation.name BEGIN, COMMIT,
//     ROLLBACK).
//
// Their attributes, by OpenTelemetry's database semantic conventions:
// db.system.name "mysql", db.client.connection.pool.name, server.address
// and server.port (of the connection: in a topology pool, the host it came
// from; on an acquire span once it has one), db.query.text only with
// WithQueryText (a statement's text may hold what the application put in
// it), and on a failure db.response.status_code (the server's error
// number, e.g. "1146") and error.type (that number, or staunch's status
// name such as STAUNCH_POOL_EXHAUSTED), with the span's status Error and
// its message, and the error recorded as an event. Arguments are never
// recorded.
package staunchotel

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/staunch-db/staunch/bindings/go/staunchotel"

// The span names.
const (
	AcquireSpanName   = "staunch.acquire"
	StatementSpanName = "staunch.statement"
)

// The attribute keys (OpenTelemetry semantic conventions, database spans).
const (
	keySystem     = attribute.Key("db.system.name")
	keyPool       = attribute.Key("db.client.connection.pool.name")
	keyAddress    = attribute.Key("server.address")
	keyPort       = attribute.Key("server.port")
	keyQueryText  = attribute.Key("db.query.text")
	keyOperation  = attribute.Key("db.operation.name")
	keyStatusCode = attribute.Key("db.response.status_code")
	keyErrorType  = attribute.Key("error.type")
)

var systemMySQL = keySystem.String("mysql")

// Option configures NewTracer.
type Option func(*Tracer)

// WithTracerProvider takes the spans' tracer from tp instead of the global
// provider (otel.GetTracerProvider(), read once, by NewTracer).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(t *Tracer) { t.tp = tp }
}

// WithQueryText records each statement's text as db.query.text. Off by
// default: a text with its values written in (rather than bound to ?) may
// carry personal data or secrets into the traces. Arguments are never
// recorded.
func WithQueryText() Option {
	return func(t *Tracer) { t.queryText = true }
}

// WithAttributes adds attrs to every span.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(t *Tracer) { t.attrs = append(t.attrs, attrs...) }
}

// Tracer is a staunch.Tracer making OpenTelemetry spans. Safe for
// concurrent use; one may serve several pools.
type Tracer struct {
	tp        trace.TracerProvider
	tracer    trace.Tracer
	queryText bool
	attrs     []attribute.KeyValue

	// spans: the attributes and start options of each kind of span met,
	// made once, so that a span costs no allocation of this package's
	// (see startOf). Copied on write: read without a lock.
	spans   atomic.Pointer[map[spanKey]*spanStart]
	spansMu sync.Mutex
}

// spanKey names what a span's attributes depend on: the pool, the server
// (of a statement; "" for an acquire) and which span.
type spanKey struct {
	pool    *staunch.Pool
	server  string
	acquire bool
}

// spanStart is a kind of span's attributes, ready: opts for Start, server
// the server.address (and server.port) alone.
type spanStart struct {
	attrs  []attribute.KeyValue
	opts   []trace.SpanStartOption
	server []attribute.KeyValue
}

// maxSpanStarts bounds the cache (each entry keeps its pool reachable): past
// it, it starts again empty.
const maxSpanStarts = 64

// startOf gives the attributes of an acquire span (server "") or of a
// statement span on server, for pool.
func (t *Tracer) startOf(pool *staunch.Pool, server string, acquire bool) *spanStart {
	k := spanKey{pool, server, acquire}
	if m := t.spans.Load(); m != nil {
		if s, ok := (*m)[k]; ok {
			return s
		}
	}
	s := &spanStart{server: serverAttrs(server)}
	kind := trace.SpanKindClient
	if acquire {
		kind = trace.SpanKindInternal
		s.attrs = t.base(pool, 0)
	} else {
		s.attrs = append(t.base(pool, len(s.server)), s.server...)
	}
	s.opts = []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithAttributes(s.attrs...)}
	t.spansMu.Lock()
	defer t.spansMu.Unlock()
	m := map[spanKey]*spanStart{}
	if old := t.spans.Load(); old != nil && len(*old) < maxSpanStarts {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[k] = s
	t.spans.Store(&m)
	return s
}

var _ staunch.Tracer = (*Tracer)(nil)

// NewTracer returns a Tracer for staunch.Config.Tracer.
func NewTracer(opts ...Option) *Tracer {
	t := &Tracer{}
	for _, o := range opts {
		o(t)
	}
	if t.tp == nil {
		t.tp = otel.GetTracerProvider()
	}
	t.tracer = t.tp.Tracer(ScopeName)
	return t
}

func (t *Tracer) base(pool *staunch.Pool, extra int) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 2+len(t.attrs)+extra)
	a = append(a, systemMySQL)
	if pool != nil {
		a = append(a, keyPool.String(pool.Name()))
	}
	return append(a, t.attrs...)
}

// TraceAcquireStart opens the acquire span.
func (t *Tracer) TraceAcquireStart(ctx context.Context, pool *staunch.Pool, _ staunch.TraceAcquireStartData) context.Context {
	ctx, _ = t.tracer.Start(ctx, AcquireSpanName, t.startOf(pool, "", true).opts...)
	return ctx
}

// TraceAcquireEnd closes it, with the connection's server or the error.
func (t *Tracer) TraceAcquireEnd(ctx context.Context, _ *staunch.Pool, data staunch.TraceAcquireEndData) {
	span := trace.SpanFromContext(ctx)
	if data.Err != nil {
		fail(span, data.Err)
	} else if data.Conn != nil {
		span.SetAttributes(t.startOf(data.Conn.Pool(), data.Conn.Server(), false).server...)
	}
	span.End()
}

// TraceQueryStart opens the statement span.
func (t *Tracer) TraceQueryStart(ctx context.Context, conn *staunch.Conn, data staunch.TraceQueryStartData) context.Context {
	s := t.startOf(conn.Pool(), conn.Server(), false)
	var op string
	switch data.Op {
	case "begin":
		op = "BEGIN"
	case "commit":
		op = "COMMIT"
	case "rollback":
		op = "ROLLBACK"
	}
	if op == "" && !t.queryText {
		ctx, _ = t.tracer.Start(ctx, StatementSpanName, s.opts...)
		return ctx
	}
	a := make([]attribute.KeyValue, len(s.attrs), len(s.attrs)+2)
	copy(a, s.attrs)
	if op != "" {
		a = append(a, keyOperation.String(op))
	}
	if t.queryText {
		a = append(a, keyQueryText.String(data.SQL))
	}
	ctx, _ = t.tracer.Start(ctx, StatementSpanName,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(a...))
	return ctx
}

// TraceQueryEnd closes it, with the error if the statement failed.
func (t *Tracer) TraceQueryEnd(ctx context.Context, _ *staunch.Conn, data staunch.TraceQueryEndData) {
	span := trace.SpanFromContext(ctx)
	if data.Err != nil {
		fail(span, data.Err)
	}
	span.End()
}

// serverAttrs: "host:port", "[v6]:port" or "unix:/path" as server.address
// (and server.port).
func serverAttrs(server string) []attribute.KeyValue {
	if server == "" {
		return nil
	}
	if path, ok := strings.CutPrefix(server, "unix:"); ok {
		return []attribute.KeyValue{keyAddress.String(path)}
	}
	host, port, err := net.SplitHostPort(server)
	if err != nil {
		return []attribute.KeyValue{keyAddress.String(server)}
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return []attribute.KeyValue{keyAddress.String(host)}
	}
	return []attribute.KeyValue{keyAddress.String(host), keyPort.Int(n)}
}

// fail marks span as failed by err: the server's error number as
// db.response.status_code and error.type, else staunch's status name as
// error.type; status Error with the message; the error as an event.
// staunch's messages never hold a password.
func fail(span trace.Span, err error) {
	var me *staunch.MySQLError
	var se *staunch.Error
	switch {
	case errors.As(err, &me):
		code := strconv.Itoa(int(me.Number))
		span.SetAttributes(keyStatusCode.String(code), keyErrorType.String(code))
	case errors.As(err, &se):
		span.SetAttributes(keyErrorType.String(se.Status.String()))
	default:
		span.SetAttributes(keyErrorType.String("_OTHER"))
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
