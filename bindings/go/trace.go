package staunch

/*
#include <stdlib.h>
#include "staunch.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
	"unsafe"
)

// Tracer hears the start and the end of each acquire and each statement of
// a pool, on the calling goroutine and with the caller's context, so that
// it can open a span there (see the staunchotel module for OpenTelemetry's)
// as pgx's QueryTracer and pgxpool's AcquireTracer do. Set it in
// Config.Tracer.
//
// Each Start returns the context the operation then runs with and that its
// End receives (return ctx itself to add nothing). Every Start is followed
// by exactly one End, on the same goroutine except for the end of a
// streamed answer (QueryStream, database/sql's Query), which comes when its
// rows are read to their end or closed. A Tracer is called from many
// goroutines at once; it must be quick and must not use the Conn it is
// given for statements (Conn.Server and Conn.ID are fine).
//
// What is traced: Pool.Acquire and AcquireRead (and so every pool-level
// helper, Begin and database/sql's connect), Conn.Exec, Query, QueryStream
// and QueryRow (and so Tx's and the pool's), database/sql's prepare, and a
// transaction's begin, commit and rollback (SQL "START TRANSACTION",
// "COMMIT", "ROLLBACK"). Ping is not. Without a Tracer each of these costs
// one nil check.
type Tracer interface {
	TraceAcquireStart(ctx context.Context, pool *Pool, data TraceAcquireStartData) context.Context
	TraceAcquireEnd(ctx context.Context, pool *Pool, data TraceAcquireEndData)
	TraceQueryStart(ctx context.Context, conn *Conn, data TraceQueryStartData) context.Context
	TraceQueryEnd(ctx context.Context, conn *Conn, data TraceQueryEndData)
}

// TraceAcquireStartData is what TraceAcquireStart is told.
type TraceAcquireStartData struct {
	// Read: AcquireRead (a replica if the topology has one).
	Read bool
}

// TraceAcquireEndData is what TraceAcquireEnd is told: the connection, or
// the error.
type TraceAcquireEndData struct {
	Conn *Conn
	Err  error
}

// TraceQueryStartData is what TraceQueryStart is told. SQL and Args are
// the application's: they may hold anything it put there (record them only
// where the user opted in).
type TraceQueryStartData struct {
	// Op is "exec", "query", "prepare", "begin", "commit" or "rollback".
	Op   string
	SQL  string
	Args []any
}

// TraceQueryEndData is what TraceQueryEnd is told: the Exec's Result (zero
// for the others) and the error, if the statement (or the reading of a
// streamed answer) failed: a *MySQLError for an error the server sent (its
// Number), else an *Error.
type TraceQueryEndData struct {
	Result Result
	Err    error
}

// traceStart tells the pool's tracer that a statement on c begins; it
// returns the context to run it with and the trace whose end to call (a
// zero queryTrace without a tracer: its end does nothing).
func (c *Conn) traceStart(ctx context.Context, op, sql string, args []any) (context.Context, queryTrace) {
	t := c.tracer()
	if t == nil || ctx == nil {
		return ctx, queryTrace{}
	}
	ctx = t.TraceQueryStart(ctx, c, TraceQueryStartData{Op: op, SQL: sql, Args: args})
	return ctx, queryTrace{t: t, ctx: ctx, c: c}
}

// queryTrace is what a statement's TraceQueryEnd needs, kept by value (in a
// frame or in Rows) where a closure would cost an allocation per statement.
// The zero value is no trace.
type queryTrace struct {
	t   Tracer
	ctx context.Context
	c   *Conn
}

// onHeap is a copy of q for Rows to keep: made here, so that only a
// streamed answer's trace is allocated (taking &q in the caller would move
// every statement's q to the heap).
func (q queryTrace) onHeap() *queryTrace { return &q }

// end tells the tracer the statement ended (nothing for the zero value).
func (q queryTrace) end(r Result, err error) {
	if q.t != nil {
		q.t.TraceQueryEnd(q.ctx, q.c, TraceQueryEndData{Result: r, Err: err})
	}
}

// tracer is the tracer of c's pool, nil if none (or for a nil c).
func (c *Conn) tracer() Tracer {
	if c == nil || c.pool == nil {
		return nil
	}
	return c.pool.tracer
}

// Pool is the pool the connection was borrowed from.
func (c *Conn) Pool() *Pool {
	if c == nil {
		return nil
	}
	return c.pool
}

// ID is the connection's number in its pool, as events and leak reports
// name it (0 once released).
func (c *Conn) ID() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return 0
	}
	return uint64(C.staunch_conn_id(c.c))
}

// Server is the server this connection is to, as "host:port" ("[v6]:port",
// or "unix:/path" for a socket): in a topology pool, the host it was
// borrowed from. With a Tracer it is read as the connection is borrowed
// (so that a tracer may ask at any time); else at the first call, which
// waits for a statement running on c, and gives "" if c was released
// before or is streaming an answer. Once read it is kept.
func (c *Conn) Server() string {
	if c == nil {
		return ""
	}
	if s := c.server.Load(); s != nil {
		return *s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loadServer()
}

// loadServer reads the server of c (c.mu held, or c not yet shared).
func (c *Conn) loadServer() string {
	if c.c == nil {
		return ""
	}
	sc := serverScratches.Get().(*serverScratch)
	defer serverScratches.Put(sc)
	sc.got = C.staunch_conn_server(c.c, &sc.buf[0], C.size_t(len(sc.buf)), &sc.n, nil) == C.STAUNCH_OK
	if !sc.got {
		return "" // busy streaming an answer: no server to give now
	}
	return c.keepServer(sc)
}

// keepServer keeps the server that staunch_conn_server wrote into sc as c's
// (c.mu held, or c not yet shared), reading it again if it was not written
// or did not fit. With a Tracer it runs at every borrow, so it allocates
// nothing in the common case: the text is the pool's last one
// (Pool.internServer) when it is the same.
func (c *Conn) keepServer(sc *serverScratch) string {
	if !sc.got {
		return c.loadServer()
	}
	var s *string
	if n := int(sc.n); n < len(sc.buf) {
		s = c.pool.internServer(unsafe.Slice((*byte)(unsafe.Pointer(&sc.buf[0])), n))
	} else {
		big := make([]C.char, n+1)
		if C.staunch_conn_server(c.c, &big[0], C.size_t(len(big)), &sc.n, nil) != C.STAUNCH_OK {
			return ""
		}
		text := C.GoStringN(&big[0], C.int(sc.n))
		runtime.KeepAlive(big)
		s = &text
	}
	c.server.Store(s)
	return *s
}

// onlyServer gives, for a pool of one host (staunch_pool_host_count 1),
// the server text every connection of it has: the host's endpoint, which
// staunch_conn_server writes for each. A Tracer's borrow then keeps it
// without asking the library, whose answer (a call of some 0.4 µs here)
// was about 5% of a borrow and a SELECT 1. nil for a topology pool of
// several hosts (each borrow reads its own: see keepServer), or if the
// library did not answer.
func onlyServer(pool *C.staunch_pool) *string {
	if C.staunch_pool_host_count(pool) != 1 {
		return nil
	}
	var st C.staunch_stats
	st.size = C.size_t(unsafe.Sizeof(st))
	s, _, err := cText("server", 128, func(buf *C.char, cap C.size_t, n *C.size_t, cerr **C.staunch_error) C.staunch_status {
		return C.staunch_pool_host_stats(pool, 0, &st, buf, cap, n, nil, cerr)
	})
	if err != nil {
		return nil
	}
	return &s
}

// serverScratch is the room for the C call that reads a connection's
// server (loadServer, or a Tracer's borrow: Pool.get). Go memory whose
// address C is given escapes to the heap, so a local buffer would be an
// allocation per borrow; these are reused instead.
type serverScratch struct {
	buf [128]C.char
	n   C.size_t
	got C.bool // the server was written (n its whole length)
}

var serverScratches = sync.Pool{New: func() any { return new(serverScratch) }}

// internServer gives the text of b as the pool's last server text when it
// is the same (no allocation: a pool with one server always is), else as a
// new one that becomes the last. p may be nil.
func (p *Pool) internServer(b []byte) *string {
	if p != nil {
		if last := p.lastServer.Load(); last != nil && *last == string(b) {
			return last
		}
	}
	s := string(b)
	if p != nil {
		p.lastServer.Store(&s)
	}
	return &s
}
