package staunch

/*
#include <stdlib.h>
#include "staunch.h"
*/
import "C"

import (
	"context"
	"runtime"
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
// returns the context to run it with and the end to call (nil without a
// tracer).
func (c *Conn) traceStart(ctx context.Context, op, sql string, args []any) (context.Context, func(Result, error)) {
	t := c.tracer()
	if t == nil || ctx == nil {
		return ctx, nil
	}
	ctx = t.TraceQueryStart(ctx, c, TraceQueryStartData{Op: op, SQL: sql, Args: args})
	return ctx, func(r Result, err error) { t.TraceQueryEnd(ctx, c, TraceQueryEndData{Result: r, Err: err}) }
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
	var buf [128]C.char
	var n C.size_t
	if C.staunch_conn_server(c.c, &buf[0], C.size_t(len(buf)), &n, nil) != C.STAUNCH_OK {
		return "" // busy streaming an answer: no server to give now
	}
	var s string
	if int(n) < len(buf) {
		s = C.GoStringN(&buf[0], C.int(n))
	} else {
		big := make([]C.char, int(n)+1)
		if C.staunch_conn_server(c.c, &big[0], C.size_t(len(big)), &n, nil) != C.STAUNCH_OK {
			return ""
		}
		s = C.GoStringN(&big[0], C.int(n))
		runtime.KeepAlive(big)
	}
	c.server.Store(&s)
	return s
}
