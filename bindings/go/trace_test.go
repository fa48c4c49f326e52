package staunch_test

// Config.Tracer: a custom Tracer hears each acquire and statement, in
// order, with the caller's context (and its own Start's context at the
// End), through the native API and through OpenDB.

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
)

type ctxKey string

// recTracer writes one line per call: what, the caller's "req" value, and
// at an End whether the context is the one its Start returned.
type recTracer struct {
	mu    sync.Mutex
	lines []string
}

func (r *recTracer) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *recTracer) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lines
	r.lines = nil
	return l
}

func (r *recTracer) TraceAcquireStart(ctx context.Context, p *staunch.Pool, d staunch.TraceAcquireStartData) context.Context {
	r.add("acquire-start req=%v read=%v", ctx.Value(ctxKey("req")), d.Read)
	return context.WithValue(ctx, ctxKey("span"), "acquire")
}

func (r *recTracer) TraceAcquireEnd(ctx context.Context, p *staunch.Pool, d staunch.TraceAcquireEndData) {
	r.add("acquire-end req=%v span=%v conn=%v err=%v", ctx.Value(ctxKey("req")), ctx.Value(ctxKey("span")), d.Conn != nil, d.Err)
}

func (r *recTracer) TraceQueryStart(ctx context.Context, c *staunch.Conn, d staunch.TraceQueryStartData) context.Context {
	r.add("query-start req=%v op=%s sql=%q args=%v", ctx.Value(ctxKey("req")), d.Op, d.SQL, d.Args)
	return context.WithValue(ctx, ctxKey("span"), d.Op)
}

func (r *recTracer) TraceQueryEnd(ctx context.Context, c *staunch.Conn, d staunch.TraceQueryEndData) {
	code := 0
	var me *staunch.MySQLError
	if errors.As(d.Err, &me) {
		code = int(me.Number)
	}
	r.add("query-end req=%v span=%v affected=%d err=%v code=%d", ctx.Value(ctxKey("req")), ctx.Value(ctxKey("span")), d.Result.RowsAffected, d.Err != nil, code)
}

func wantLines(t *testing.T, step string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: the tracer heard\n\t%s\nwant\n\t%s", step, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func Test_tracer_hears_each_call_in_order_with_the_callers_context(t *testing.T) {
	rec := &recTracer{}
	cfg, err := staunch.ParseConfig(directURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = rec
	if s := cfg.String(); !strings.Contains(s, "Tracer: set") {
		t.Errorf("Config.String: %s", s)
	}
	p, err := staunch.NewWithConfig(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// A context that can end: the pool's helpers take the Acquire path
	// anyway; the Background case below checks its one-call path too.
	ctx, cancel := context.WithCancel(context.WithValue(bg, ctxKey("req"), "r1"))
	defer cancel()

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := neturl.Parse(directURL)
	if got := c.Server(); got != u.Host {
		t.Errorf("Conn.Server() = %q, want the URL's %q", got, u.Host)
	}
	if host, port, err := net.SplitHostPort(c.Server()); err != nil || host == "" || port == "" {
		t.Errorf("Conn.Server() = %q: not host:port (%v)", c.Server(), err)
	}
	if c.ID() == 0 {
		t.Error("Conn.ID() = 0 for a borrowed connection")
	}
	if _, err := c.Exec(ctx, "DO ?", 7); err != nil {
		t.Fatal(err)
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
	if _, err := c.Query(ctx, "SELECT * FROM no_such_table"); err == nil {
		t.Fatal("SELECT * FROM no_such_table: no error")
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "native API", rec.take(), []string{
		"acquire-start req=r1 read=false",
		"acquire-end req=r1 span=acquire conn=true err=<nil>",
		"query-start req=r1 op=exec sql=\"DO ?\" args=[7]",
		"query-end req=r1 span=exec affected=0 err=false code=0",
		"query-start req=r1 op=query sql=\"SELECT 1\" args=[]",
		"query-end req=r1 span=query affected=0 err=false code=0",
		"query-start req=r1 op=query sql=\"SELECT * FROM no_such_table\" args=[]",
		"query-end req=r1 span=query affected=0 err=true code=1146",
		"query-start req=r1 op=begin sql=\"START TRANSACTION\" args=[]",
		"query-end req=r1 span=begin affected=0 err=false code=0",
		"query-start req=r1 op=commit sql=\"COMMIT\" args=[]",
		"query-end req=r1 span=commit affected=0 err=false code=0",
	})

	// A streamed answer ends when its rows are read to the end.
	rows, err := c.QueryStream(ctx, "SELECT 1 UNION ALL SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, "QueryStream before its rows", rec.take(), []string{
		"query-start req=r1 op=query sql=\"SELECT 1 UNION ALL SELECT 2\" args=[]",
	})
	for rows.Next() {
	}
	rows.Close()
	wantLines(t, "QueryStream after its rows", rec.take(), []string{
		"query-end req=r1 span=query affected=0 err=false code=0",
	})
	c.Release()

	// The pool's helpers, with a context that cannot end (their one-call
	// path when no tracer is set).
	bctx := context.WithValue(bg, ctxKey("req"), "r2")
	if r, err := p.Exec(bctx, "DO 1"); err != nil || r.RowsAffected != 0 {
		t.Fatalf("Pool.Exec: %+v, %v", r, err)
	}
	wantLines(t, "Pool.Exec", rec.take(), []string{
		"acquire-start req=r2 read=false",
		"acquire-end req=r2 span=acquire conn=true err=<nil>",
		"query-start req=r2 op=exec sql=\"DO 1\" args=[]",
		"query-end req=r2 span=exec affected=0 err=false code=0",
	})

	// database/sql through OpenDB: its connect is an acquire, its Query a
	// streamed statement, its Commit is heard under BeginTx's context.
	db := staunch.OpenDB(p)
	defer db.Close()
	ctx3 := context.WithValue(bg, ctxKey("req"), "r3")
	var n int
	if err := db.QueryRowContext(ctx3, "SELECT ?", 5).Scan(&n); err != nil || n != 5 {
		t.Fatalf("db.QueryRowContext: %d, %v", n, err)
	}
	sqlTx, err := db.BeginTx(ctx3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlTx.Commit(); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "database/sql", rec.take(), []string{
		"acquire-start req=r3 read=false",
		"acquire-end req=r3 span=acquire conn=true err=<nil>",
		"query-start req=r3 op=query sql=\"SELECT ?\" args=[5]",
		"query-end req=r3 span=query affected=0 err=false code=0",
		"acquire-start req=r3 read=false",
		"acquire-end req=r3 span=acquire conn=true err=<nil>",
		"query-start req=r3 op=begin sql=\"START TRANSACTION\" args=[]",
		"query-end req=r3 span=begin affected=0 err=false code=0",
		"query-start req=r3 op=commit sql=\"COMMIT\" args=[]",
		"query-end req=r3 span=commit affected=0 err=false code=0",
	})

	// A failed acquire ends with its error.
	p.Close()
	if _, err := p.Acquire(ctx); !errors.Is(err, staunch.ErrClosed) {
		t.Fatalf("Acquire on a closed pool: %v", err)
	}
	got := rec.take()
	if len(got) != 2 || got[0] != "acquire-start req=r1 read=false" || !strings.HasPrefix(got[1], "acquire-end req=r1 span=acquire conn=false err=staunch: acquire: ") {
		t.Fatalf("failed acquire: the tracer heard %q", got)
	}
}

// serverTracer keeps the Server of each Conn as TraceAcquireEnd sees it.
type serverTracer struct {
	mu   sync.Mutex
	seen []string
}

func (s *serverTracer) TraceAcquireStart(ctx context.Context, _ *staunch.Pool, _ staunch.TraceAcquireStartData) context.Context {
	return ctx
}

func (s *serverTracer) TraceAcquireEnd(_ context.Context, _ *staunch.Pool, d staunch.TraceAcquireEndData) {
	if d.Conn != nil {
		s.mu.Lock()
		s.seen = append(s.seen, d.Conn.Server())
		s.mu.Unlock()
	}
}

func (s *serverTracer) TraceQueryStart(ctx context.Context, _ *staunch.Conn, _ staunch.TraceQueryStartData) context.Context {
	return ctx
}

func (s *serverTracer) TraceQueryEnd(context.Context, *staunch.Conn, staunch.TraceQueryEndData) {}

// In a topology pool each borrow reads its own connection's server (in the
// borrow's call; a pool of one host reads its one server at open): with
// borrows alternating between the primary and a replica, each Conn's
// Server, at TraceAcquireEnd and after, names the server its session is on
// (@@port).
func Test_tracer_server_of_each_borrow_in_a_topology_pool(t *testing.T) {
	k, err := testkit.Start("topology", "--replicas", "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	// AcquireRead goes to the replica once the monitor knows its lag (the
	// writer takes the reads before): both hosts serve borrows.
	cfg, err := staunch.ParseConfig(k.Ready.TopologyURL)
	if err != nil {
		t.Fatal(err)
	}
	st := &serverTracer{}
	cfg.Tracer = st
	p, err := staunch.NewWithConfig(bg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ports := map[int]bool{}
	for i := 0; i < 40; i++ {
		acquire := p.Acquire
		if i%2 == 1 {
			acquire = p.AcquireRead
		}
		c, err := acquire(bg)
		if err != nil {
			t.Fatal(err)
		}
		var port int
		err = c.QueryRow(bg, "SELECT @@port").Scan(&port)
		server := c.Server()
		c.Release()
		if err != nil {
			t.Fatal(err)
		}
		ports[port] = true
		_, sp, err := net.SplitHostPort(server)
		if err != nil || sp != fmt.Sprint(port) {
			t.Fatalf("borrow %d: Conn.Server() = %q, but the session is on port %d (%v)", i, server, port, err)
		}
		st.mu.Lock()
		last := st.seen[len(st.seen)-1]
		st.mu.Unlock()
		if last != server {
			t.Fatalf("borrow %d: TraceAcquireEnd saw Server() %q, later %q", i, last, server)
		}
		if i == 19 && len(ports) < 2 {
			time.Sleep(2 * time.Second) // the monitor's first look at the replica's lag
		}
	}
	if len(ports) < 2 {
		t.Logf("every borrow went to one server (%v): the replica never took reads", ports)
	}
}
