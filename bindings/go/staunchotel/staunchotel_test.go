package staunchotel_test

// The spans against a real MariaDB from staunch-testkit (started by
// TestMain through the binding's internal/testkit, as staunchprom's tests
// do), recorded in memory by the SDK's tracetest.SpanRecorder.

import (
	"context"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
	"github.com/staunch-db/staunch/bindings/go/staunchotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var (
	url        string
	password   string // the test server's, to check that no span holds it
	serverHost string
	serverPort int
)

func TestMain(m *testing.M) {
	kit, err := testkit.Start("server")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		os.Exit(1)
	}
	url = kit.Ready.URL
	u, err := neturl.Parse(url)
	var port string
	if err == nil {
		password, _ = u.User.Password()
		serverHost, port, err = net.SplitHostPort(u.Host)
	}
	if err == nil {
		serverPort, err = strconv.Atoi(port)
	}
	if err != nil || password == "" {
		fmt.Fprintln(os.Stderr, "TestMain: the testkit's URL has no host:port or no password") // the URL holds a password: not printed
		kit.Stop()
		os.Exit(1)
	}
	code := m.Run()
	kit.Stop()
	os.Exit(code)
}

var bg = context.Background()

// setup opens a pool traced into a fresh recorder, and gives a tracer of
// the same provider for the test's own request span.
func setup(t *testing.T, knobs string, opts ...staunchotel.Option) (*staunch.Pool, *tracetest.SpanRecorder, trace.Tracer) {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(bg) })
	cfg, err := staunch.ParseConfig(testkit.WithKnobs(url, knobs))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = staunchotel.NewTracer(append([]staunchotel.Option{staunchotel.WithTracerProvider(tp)}, opts...)...)
	p, err := staunch.NewWithConfig(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, sr, tp.Tracer("test")
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// children checks that spans are, in order, the named children of parent
// in its trace, and returns them.
func children(t *testing.T, sr *tracetest.SpanRecorder, parent trace.Span, names ...string) []sdktrace.ReadOnlySpan {
	t.Helper()
	psc := parent.SpanContext()
	var got []sdktrace.ReadOnlySpan
	var gotNames []string
	for _, s := range sr.Ended() {
		if s.SpanContext().SpanID() == psc.SpanID() {
			continue
		}
		got = append(got, s)
		gotNames = append(gotNames, s.Name())
	}
	if strings.Join(gotNames, ",") != strings.Join(names, ",") {
		t.Fatalf("ended spans %q, want %q", gotNames, names)
	}
	for _, s := range got {
		if s.Parent().SpanID() != psc.SpanID() || s.SpanContext().TraceID() != psc.TraceID() {
			t.Errorf("span %s: parent %v in trace %v, want the request span %v in %v",
				s.Name(), s.Parent().SpanID(), s.SpanContext().TraceID(), psc.SpanID(), psc.TraceID())
		}
	}
	return got
}

// common checks the attributes every span of pool p on the test server has.
func common(t *testing.T, s sdktrace.ReadOnlySpan, p *staunch.Pool) {
	t.Helper()
	a := attrs(s)
	for k, want := range map[attribute.Key]attribute.Value{
		"db.system.name":                 attribute.StringValue("mysql"),
		"db.client.connection.pool.name": attribute.StringValue(p.Name()),
		"server.address":                 attribute.StringValue(serverHost),
		"server.port":                    attribute.IntValue(serverPort),
	} {
		if a[k] != want {
			t.Errorf("span %s: %s = %v, want %v", s.Name(), k, a[k].Emit(), want.Emit())
		}
	}
}

func ok(t *testing.T, s sdktrace.ReadOnlySpan) {
	t.Helper()
	a := attrs(s)
	if s.Status().Code != codes.Unset || a["error.type"].Type() != attribute.INVALID || len(s.Events()) != 0 {
		t.Errorf("span %s: status %v, error.type %q, %d events: want a span that did not fail", s.Name(), s.Status(), a["error.type"].Emit(), len(s.Events()))
	}
}

// noSecret checks that no span recorded holds the password.
func noSecret(t *testing.T, sr *tracetest.SpanRecorder, secret string) {
	t.Helper()
	for _, s := range sr.Ended() {
		text := fmt.Sprintf("%s %v %v %v", s.Name(), s.Attributes(), s.Status(), s.Events())
		if strings.Contains(text, secret) {
			t.Errorf("span %s holds the password", s.Name())
		}
	}
}

func TestSpansOfARequest(t *testing.T) {
	p, sr, tr := setup(t, "pool_name=otel-orders")
	ctx, req := tr.Start(bg, "request")
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
	_, qerr := c.Query(ctx, "SELECT * FROM no_such_table")
	if qerr == nil {
		t.Fatal("SELECT * FROM no_such_table: no error")
	}
	c.Release()
	req.End()

	spans := children(t, sr, req, "staunch.acquire", "staunch.statement", "staunch.statement")
	for _, s := range spans {
		var kv []string
		for _, a := range s.Attributes() {
			kv = append(kv, string(a.Key)+"="+a.Value.Emit())
		}
		t.Logf("%s (%v, child of %v): %s; status %v %q", s.Name(), s.SpanKind(), s.Parent().SpanID(), strings.Join(kv, " "), s.Status().Code, s.Status().Description)
	}
	if p.Name() != "otel-orders" {
		t.Fatalf("pool name %q", p.Name())
	}
	for i, s := range spans {
		common(t, s, p)
		if _, has := attrs(s)["db.query.text"]; has {
			t.Errorf("span %d (%s) has db.query.text without WithQueryText", i, s.Name())
		}
	}
	if k := spans[0].SpanKind(); k != trace.SpanKindInternal {
		t.Errorf("acquire span kind %v", k)
	}
	ok(t, spans[0])
	ok(t, spans[1])
	if k := spans[1].SpanKind(); k != trace.SpanKindClient {
		t.Errorf("statement span kind %v", k)
	}

	failed := spans[2]
	a := attrs(failed)
	if a["db.response.status_code"] != attribute.StringValue("1146") || a["error.type"] != attribute.StringValue("1146") {
		t.Errorf("failed statement: db.response.status_code %q, error.type %q, want 1146", a["db.response.status_code"].Emit(), a["error.type"].Emit())
	}
	if st := failed.Status(); st.Code != codes.Error || st.Description != qerr.Error() || !strings.Contains(st.Description, "no_such_table") {
		t.Errorf("failed statement: status %v, want Error %q", st, qerr.Error())
	}
	if ev := failed.Events(); len(ev) != 1 || ev[0].Name != "exception" {
		t.Errorf("failed statement: events %v, want the recorded error", ev)
	}
	noSecret(t, sr, password)
}

func TestQueryTextIsOptIn(t *testing.T) {
	p, sr, tr := setup(t, "", staunchotel.WithQueryText())
	ctx, req := tr.Start(bg, "request")
	var one int
	if err := p.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
	req.End()
	spans := children(t, sr, req, "staunch.acquire", "staunch.statement")
	if _, has := attrs(spans[0])["db.query.text"]; has {
		t.Error("the acquire span has db.query.text")
	}
	if got := attrs(spans[1])["db.query.text"]; got != attribute.StringValue("SELECT 1") {
		t.Errorf("db.query.text %q, want SELECT 1", got.Emit())
	}
	common(t, spans[1], p)
}

func TestSpansThroughOpenDB(t *testing.T) {
	p, sr, tr := setup(t, "")
	db := staunch.OpenDB(p)
	defer db.Close()
	ctx, req := tr.Start(bg, "request")
	rows, err := db.QueryContext(ctx, "SELECT 1 UNION ALL SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Close(); err != nil || n != 2 {
		t.Fatalf("%d rows, %v", n, err)
	}
	_, err = db.ExecContext(ctx, "INSERT INTO no_such_table VALUES (1)")
	if err == nil {
		t.Fatal("INSERT INTO no_such_table: no error")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	req.End()
	spans := children(t, sr, req,
		"staunch.acquire", "staunch.statement", // QueryContext
		"staunch.acquire", "staunch.statement", // ExecContext
		"staunch.acquire", "staunch.statement", "staunch.statement") // BeginTx, Commit
	for _, s := range spans {
		common(t, s, p)
	}
	ok(t, spans[1])
	if a := attrs(spans[3]); a["db.response.status_code"] != attribute.StringValue("1146") || spans[3].Status().Code != codes.Error {
		t.Errorf("failed INSERT: db.response.status_code %q, status %v", a["db.response.status_code"].Emit(), spans[3].Status())
	}
	for i, op := range map[int]string{5: "BEGIN", 6: "COMMIT"} {
		if got := attrs(spans[i])["db.operation.name"]; got != attribute.StringValue(op) {
			t.Errorf("span %d: db.operation.name %q, want %s", i, got.Emit(), op)
		}
	}
}

func TestFailedAcquireHoldsNoPassword(t *testing.T) {
	const wrong = "n0t-the-Passw0rd-4217"
	u, _ := neturl.Parse(url)
	u.User = neturl.UserPassword(u.User.Username(), wrong)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { _ = tp.Shutdown(bg) }()
	cfg, err := staunch.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = staunchotel.NewTracer(staunchotel.WithTracerProvider(tp))
	p, err := staunch.NewWithConfig(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, req := tp.Tracer("test").Start(bg, "request")
	if _, err := p.Acquire(ctx); err == nil {
		t.Fatal("Acquire with a wrong password: no error")
	}
	req.End()
	spans := children(t, sr, req, "staunch.acquire")
	a := attrs(spans[0])
	if a["error.type"] != attribute.StringValue("STAUNCH_CONNECT_REJECTED") || spans[0].Status().Code != codes.Error {
		t.Errorf("failed acquire: error.type %q, status %v", a["error.type"].Emit(), spans[0].Status())
	}
	if _, has := a["server.address"]; has {
		t.Error("a failed acquire has a server.address")
	}
	noSecret(t, sr, wrong)
}
