package staunch

/*
#include <stdlib.h>
#include "staunch.h"
staunch_status go_query_send(staunch_conn *conn, const char *sql,
                             const staunch_param *params, size_t n_params,
                             int *fd, uint64_t *id, staunch_error **err);
staunch_status go_exec_recv(staunch_conn *conn, uint64_t *affected,
                            uint64_t *last_id, staunch_error **err);
*/
import "C"

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Conn is a connection borrowed from a Pool (Acquire). Release it when done;
// it then goes back to the pool (a transaction left open is rolled back and a
// changed session reset first). A Conn is for one goroutine at a time: calls
// from several goroutines at once are serialized. Every call takes a context:
// when it ends during a statement, the statement is cancelled on the server
// (KILL QUERY), the call returns an error matching ctx.Err(), and the
// connection stays usable.
type Conn struct {
	// mu is held for the length of every call on c, so that Release (which
	// frees c) never runs while another goroutine is inside a call on it.
	mu sync.Mutex
	c  *C.staunch_conn
	// pool is never read: it keeps the Pool reachable while c is
	// borrowed, so the Pool's finalizer cannot close it under a Conn in use.
	pool *Pool
	// server is Server's answer once read (at the borrow with a Tracer).
	server atomic.Pointer[string]

	// Streaming answers given up (Rows.giveUp) and still being ended in
	// the background: the handle is freed only after the last (orphans
	// 0); released meanwhile, it waits in handedOff. Guarded by om, not
	// mu (which a statement holds for its length).
	om        sync.Mutex
	orphans   int
	handedOff *C.staunch_conn
	discardAt bool // a given-up answer left the session mid-answer: close, never return
}

// Result is what a statement run by Exec did.
type Result struct {
	RowsAffected uint64 // rows affected (summed over the result sets of a multi-statement)
	LastInsertID uint64 // the last AUTO_INCREMENT id generated, or 0
}

func releasedError(op string) error {
	return &Error{Status: StatusUseAfterRelease, Op: op, Message: "the connection was released", bad: true}
}

// begin locks c for a call and checks it can be made.
func (c *Conn) begin(op string, ctx context.Context) error {
	if c == nil {
		return invalid(op, "nil *Conn")
	}
	if ctx == nil {
		return invalid(op, "nil context")
	}
	c.mu.Lock()
	if c.c == nil {
		c.mu.Unlock()
		return releasedError(op)
	}
	if ctx.Err() != nil {
		c.mu.Unlock()
		return ctxError(op, ctx)
	}
	return nil
}

// watch runs call, a blocking C call on c (c locked by begin), and if ctx
// ends first cancels the statement from another goroutine through
// staunch_conn_cancel (KILL QUERY over a connection of its own); the call
// then returns STAUNCH_CANCELLED. watch returns only once that canceller has
// finished (or was never started), so no goroutine outlives the call and
// none touches c after it. A context that can never end costs nothing. A
// failure comes back as the Go error of op (statementError).
func (c *Conn) watch(op string, ctx context.Context, call func(cerr **C.staunch_error) C.staunch_status) error {
	var cerr *C.staunch_error
	var st C.staunch_status
	if ctx.Done() == nil {
		st = call(&cerr)
	} else {
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(fired)
			C.staunch_conn_cancel(c.c, nil, nil) // bounded: connect_timeout + 1 s
		})
		st = call(&cerr)
		if !stop() {
			<-fired
		}
	}
	runtime.KeepAlive(c)
	if st != C.STAUNCH_OK {
		return c.statementError(op, st, cerr, ctx)
	}
	return nil
}

// commitText and rollbackText are what staunch_conn_commit and
// staunch_conn_rollback send, for a transaction's end sent apart.
var commitText, rollbackText = sqlText{[]byte("COMMIT\x00")}, sqlText{[]byte("ROLLBACK\x00")}

// beginText is what staunch_conn_begin sends.
var beginText = sqlText{[]byte("START TRANSACTION\x00")}

// sqlText is sql as the NUL-terminated string the C calls take, in Go
// memory: no malloc and free (two cgo calls each statement) as C.CString
// would need. C reads it only during the call it is passed to (keep b
// alive until then: runtime.KeepAlive).
type sqlText struct{ b []byte }

func cSQL(op, sql string) (sqlText, error) {
	if strings.IndexByte(sql, 0) >= 0 {
		return sqlText{}, invalid(op, "the SQL text contains a NUL byte")
	}
	b := make([]byte, len(sql)+1)
	copy(b, sql)
	return sqlText{b}, nil
}

func (t sqlText) ptr() *C.char { return (*C.char)(unsafe.Pointer(&t.b[0])) }

// Exec runs a statement that returns no rows (rows it does return are read
// and discarded). With args, the statement is prepared and args bound to its
// ? placeholders; without, it is sent as text (several statements separated
// by ; work then).
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (Result, error) {
	if c.tracer() != nil && ctx != nil {
		ctx, tr := c.traceStart(ctx, "exec", sql, args)
		r, err := c.exec(ctx, sql, args)
		tr.end(r, err)
		return r, err
	}
	return c.exec(ctx, sql, args)
}

func (c *Conn) exec(ctx context.Context, sql string, args []any) (Result, error) {
	var aff, lid C.uint64_t
	err := c.statement("exec", ctx, sql, args, func(csql *C.char, p cparams, cerr **C.staunch_error) C.staunch_status {
		if pl := c.pool.poller(); pl != nil {
			defer pl.leave()
			if !pl.enter() {
				if st := c.send(pl, csql, p, cerr); st != C.STAUNCH_OK {
					return st
				}
				return C.go_exec_recv(c.c, &aff, &lid, cerr)
			}
		}
		return C.staunch_conn_execute(c.c, csql, p.ptr, p.n, &aff, &lid, cerr)
	})
	if err != nil {
		return Result{}, err
	}
	return Result{RowsAffected: uint64(aff), LastInsertID: uint64(lid)}, nil
}

// prepare prepares sql on the server (into the connection's statement
// cache) without running it and gives its count of placeholders.
func (c *Conn) prepare(ctx context.Context, sql string) (int, error) {
	if c.tracer() != nil && ctx != nil {
		ctx, tr := c.traceStart(ctx, "prepare", sql, nil)
		n, err := c.prepareUntraced(ctx, sql)
		tr.end(Result{}, err)
		return n, err
	}
	return c.prepareUntraced(ctx, sql)
}

func (c *Conn) prepareUntraced(ctx context.Context, sql string) (int, error) {
	var n C.uint32_t
	err := c.statement("prepare", ctx, sql, nil, func(csql *C.char, _ cparams, cerr **C.staunch_error) C.staunch_status {
		// STAUNCH_PREPARE_TEXT_OK: a statement the server cannot prepare
		// (1295) is accepted, with the library's count of its
		// placeholders; it runs as text, as the library runs it anyway.
		return C.staunch_conn_prepare_ex(c.c, csql, C.STAUNCH_PREPARE_TEXT_OK, &n, cerr)
	})
	return int(n), err
}

// statement runs one SQL statement with args: it locks c, binds args, makes
// the C string of sql and runs call through watch. Exec and Query differ
// only in call.
func (c *Conn) statement(op string, ctx context.Context, sql string, args []any,
	call func(csql *C.char, p cparams, cerr **C.staunch_error) C.staunch_status) error {
	if err := c.begin(op, ctx); err != nil {
		return err
	}
	defer c.mu.Unlock()
	params, err := bindParams(op, args)
	if err != nil {
		return err
	}
	defer params.free()
	text, err := cSQL(op, sql)
	if err != nil {
		return err
	}
	err = c.watch(op, ctx, func(cerr **C.staunch_error) C.staunch_status { return call(text.ptr(), params, cerr) })
	runtime.KeepAlive(text.b)
	return err
}

// statementError makes the Go error of a failed statement. A statement
// refused at once because an earlier one broke the connection cannot have
// run: database/sql may retry it elsewhere (driver.ErrBadConn).
func (c *Conn) statementError(op string, st C.staunch_status, cerr *C.staunch_error, ctx context.Context) error {
	err := takeError(op, st, cerr)
	if e, ok := err.(*Error); ok {
		switch e.Status {
		case StatusBroken, StatusUseAfterRelease, StatusConnBusy:
			e.bad = true
		}
	}
	return withContext(err, ctx)
}

// Query runs a query and returns its rows, read whole into memory first (so
// they stay valid after the connection is released). With args the
// statement is prepared (values bound to ? placeholders); without, it is
// sent as text; values come typed by their columns either way. Close the
// Rows (or read them to the end).
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	return c.query(ctx, sql, args, 0)
}

// QueryStream is Query reading the rows as they arrive
// (STAUNCH_QUERY_STREAM): memory for one batch of rows, not the whole
// answer, and rows decoded while the server still sends them. The rows
// hold the connection until they are read to the end or closed (another
// statement on it meanwhile fails with StatusConnBusy). database/sql's
// Query uses it: its rows hold the connection anyway.
func (c *Conn) QueryStream(ctx context.Context, sql string, args ...any) (*Rows, error) {
	return c.query(ctx, sql, args, C.STAUNCH_QUERY_STREAM)
}

func (c *Conn) query(ctx context.Context, sql string, args []any, flags C.uint32_t) (*Rows, error) {
	if c.tracer() != nil && ctx != nil {
		ctx, tr := c.traceStart(ctx, "query", sql, args)
		rows, err := c.queryUntraced(ctx, sql, args, flags)
		if err != nil || !rows.stream {
			tr.end(Result{}, err)
		} else {
			rows.trace = tr.onHeap() // ended when the answer is read or closed
		}
		return rows, err
	}
	return c.queryUntraced(ctx, sql, args, flags)
}

func (c *Conn) queryUntraced(ctx context.Context, sql string, args []any, flags C.uint32_t) (*Rows, error) {
	var out *C.staunch_rows
	err := c.statement("query", ctx, sql, args, func(csql *C.char, p cparams, cerr **C.staunch_error) C.staunch_status {
		if pl := c.pool.poller(); pl != nil {
			defer pl.leave()
			if !pl.enter() {
				return c.sendAndReceive(pl, csql, p, flags, &out, cerr)
			}
		}
		return C.staunch_conn_query_ex(c.c, csql, p.ptr, p.n, flags, &out, cerr)
	})
	if err != nil {
		return nil, err
	}
	rows := newRows(out)
	rows.stream = flags&C.STAUNCH_QUERY_STREAM != 0
	if rows.stream && ctx.Done() != nil {
		// Its fetches may wait for the server: they answer to ctx.
		rows.ctx, rows.conn = ctx, c
	}
	return rows, nil
}

// sendAndReceive runs a statement whose answer the goroutine awaits in the
// netpoller (see poller): send, park, receive.
func (c *Conn) sendAndReceive(pl *poller, csql *C.char, p cparams, flags C.uint32_t, out **C.staunch_rows, cerr **C.staunch_error) C.staunch_status {
	if st := c.send(pl, csql, p, cerr); st != C.STAUNCH_OK {
		return st
	}
	return C.staunch_conn_query_recv(c.c, flags&C.STAUNCH_QUERY_STREAM, out, cerr)
}

// send sends a statement apart (text without args; with args as the pool's
// defaults say: prepared, the prepare itself waited for in the cgo call the
// first time on a connection) and waits in the netpoller until its answer
// begins to arrive (see poller); the answer is then to be received
// (staunch_conn_query_recv) when it returns STAUNCH_OK.
func (c *Conn) send(pl *poller, csql *C.char, p cparams, cerr **C.staunch_error) C.staunch_status {
	var fd C.int
	var id C.uint64_t
	st := C.go_query_send(c.c, csql, p.ptr, p.n, &fd, &id, cerr)
	if st == C.STAUNCH_OK && fd >= 0 {
		pl.wait(uint64(id), int(fd))
	}
	return st
}

// QueryRow runs a query for at most one row; errors wait for Row.Scan.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	rows, err := c.Query(ctx, sql, args...)
	return &Row{rows: rows, err: err}
}

// Ping checks the connection is alive (COM_PING).
func (c *Conn) Ping(ctx context.Context) error {
	if err := c.begin("ping", ctx); err != nil {
		return err
	}
	defer c.mu.Unlock()
	return c.watch("ping", ctx, func(cerr **C.staunch_error) C.staunch_status { return C.staunch_conn_ping(c.c, cerr) })
}

// SetStatementTimeout sets this connection's statement time limit until it
// is released: the server ends a statement past it (ErrStatementTimeout,
// the connection stays usable); one whose server has not answered 1 s later
// is cut off (the connection is then broken). 0: no limit. A negative
// duration is an error.
func (c *Conn) SetStatementTimeout(d time.Duration) error {
	if d < 0 {
		return invalid("set statement timeout", "negative duration %v", d)
	}
	if err := c.begin("set statement timeout", context.Background()); err != nil {
		return err
	}
	defer c.mu.Unlock()
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms >= C.STAUNCH_TIMEOUT_DEFAULT {
		return invalid("set statement timeout", "duration %v too long", d)
	}
	var cerr *C.staunch_error
	if st := C.staunch_conn_set_timeout(c.c, C.uint32_t(ms), &cerr); st != C.STAUNCH_OK {
		return takeError("set statement timeout", st, cerr)
	}
	runtime.KeepAlive(c)
	return nil
}

// ServerID is the server's id of this session (CONNECTION_ID(), the number
// KILL and the process list use).
func (c *Conn) ServerID() (uint64, error) {
	if err := c.begin("server id", context.Background()); err != nil {
		return 0, err
	}
	defer c.mu.Unlock()
	var id C.uint64_t
	var cerr *C.staunch_error
	if st := C.staunch_conn_server_id(c.c, &id, &cerr); st != C.STAUNCH_OK {
		return 0, takeError("server id", st, cerr)
	}
	runtime.KeepAlive(c)
	return uint64(id), nil
}

// IsBroken says whether an earlier statement broke the connection (it then
// refuses every statement with ErrBroken; release it). Never blocks.
func (c *Conn) IsBroken() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c != nil && bool(C.staunch_conn_is_broken(c.c))
}

// Release gives the connection back to the pool (rolling back a transaction
// left open and resetting a changed session first, each bounded by the
// pool's validation_timeout). Idempotent; calls on a released Conn return
// ErrReleased. If another goroutine is inside a call on c, Release waits
// for it.
func (c *Conn) Release() { c.free(false) }

// Discard closes the connection instead of returning it to the pool (use it
// when the session is in a state nobody should inherit). Idempotent.
func (c *Conn) Discard() { c.free(true) }

// finalize is the fallback for a Conn never released: it must not block,
// so the connection is closed, not returned. (Its lock is free: nothing
// else can reach c any more.)
func (c *Conn) finalize() { c.free(true) }

func (c *Conn) free(discard bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != nil {
		c.om.Lock()
		discard = discard || c.discardAt
		if c.orphans > 0 {
			// The last given-up answer's goroutine discards and frees it.
			c.handedOff, c.c = c.c, nil
			c.om.Unlock()
			runtime.SetFinalizer(c, nil)
			return
		}
		c.om.Unlock()
		if discard {
			C.staunch_conn_discard(c.c, nil)
		}
		C.staunch_conn_free(c.c)
		c.c = nil
		runtime.SetFinalizer(c, nil)
	}
}

// adopt runs end (the rest of a given-up streaming answer, see
// Rows.giveUp) on a goroutine with the connection's handle (nil if it was
// released already), and marks the connection to be closed, never
// returned: now if it was released meanwhile, else at its release.
func (c *Conn) adopt(end func(h *C.staunch_conn)) {
	c.mu.Lock()
	h := c.c
	c.om.Lock()
	c.orphans++
	c.discardAt = true
	c.om.Unlock()
	c.mu.Unlock()
	go func() {
		end(h)
		c.om.Lock()
		c.orphans--
		var last *C.staunch_conn
		if c.orphans == 0 {
			last, c.handedOff = c.handedOff, nil
		}
		c.om.Unlock()
		if last != nil {
			C.staunch_conn_discard(last, nil)
			C.staunch_conn_free(last)
		}
	}()
}

// IsolationLevel of a transaction.
type IsolationLevel uint32

// Isolation levels (TxOptions.Isolation).
const (
	IsolationDefault         IsolationLevel = C.STAUNCH_ISOLATION_DEFAULT
	IsolationReadUncommitted IsolationLevel = C.STAUNCH_ISOLATION_READ_UNCOMMITTED
	IsolationReadCommitted   IsolationLevel = C.STAUNCH_ISOLATION_READ_COMMITTED
	IsolationRepeatableRead  IsolationLevel = C.STAUNCH_ISOLATION_REPEATABLE_READ
	IsolationSerializable    IsolationLevel = C.STAUNCH_ISOLATION_SERIALIZABLE
)

// TxOptions says how BeginTx starts a transaction. The level applies to the
// transaction only, never to the session.
type TxOptions struct {
	Isolation IsolationLevel
	ReadOnly  bool
}

// Tx is a transaction on one connection. End it with Commit or Rollback.
type Tx struct {
	conn    *Conn
	done    bool
	release bool // started by Pool.Begin: the end releases the connection
	mu      sync.Mutex
}

// Begin starts a transaction (START TRANSACTION).
func (c *Conn) Begin(ctx context.Context) (*Tx, error) { return c.BeginTx(ctx, TxOptions{}) }

// BeginTx starts a transaction with an isolation level and/or read only.
func (c *Conn) BeginTx(ctx context.Context, opts TxOptions) (*Tx, error) {
	if opts.Isolation > IsolationSerializable {
		return nil, invalid("begin", "unknown isolation level %d", opts.Isolation)
	}
	if c.tracer() != nil && ctx != nil {
		sql := "START TRANSACTION"
		if opts.ReadOnly {
			sql = "START TRANSACTION READ ONLY"
		}
		ctx, tr := c.traceStart(ctx, "begin", sql, nil)
		tx, err := c.beginTx(ctx, opts)
		tr.end(Result{}, err)
		return tx, err
	}
	return c.beginTx(ctx, opts)
}

func (c *Conn) beginTx(ctx context.Context, opts TxOptions) (*Tx, error) {
	if err := c.begin("begin", ctx); err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	var to C.staunch_txn_options
	to.size = C.size_t(unsafe.Sizeof(to))
	to.isolation = C.staunch_isolation(opts.Isolation)
	to.read_only = C.bool(opts.ReadOnly)
	err := c.watch("begin", ctx, func(cerr **C.staunch_error) C.staunch_status {
		// START TRANSACTION as any statement, as staunch_conn_begin sends it
		// (see Tx.end). A level or read only is the library's to build: that
		// begin waits in its call.
		if pl := c.pool.poller(); pl != nil && opts.Isolation == IsolationDefault && !opts.ReadOnly {
			defer pl.leave()
			if !pl.enter() {
				if st := c.send(pl, beginText.ptr(), cparams{}, cerr); st != C.STAUNCH_OK {
					return st
				}
				var aff, lid C.uint64_t
				return C.go_exec_recv(c.c, &aff, &lid, cerr)
			}
		}
		return C.staunch_conn_begin_ex(c.c, &to, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &Tx{conn: c}, nil
}

// Conn is the transaction's connection.
func (tx *Tx) Conn() *Conn { return tx.conn }

// Exec runs a statement in the transaction (see Conn.Exec).
func (tx *Tx) Exec(ctx context.Context, sql string, args ...any) (Result, error) {
	return tx.conn.Exec(ctx, sql, args...)
}

// Query runs a query in the transaction (see Conn.Query).
func (tx *Tx) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	return tx.conn.Query(ctx, sql, args...)
}

// QueryRow runs a query for one row in the transaction.
func (tx *Tx) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	return tx.conn.QueryRow(ctx, sql, args...)
}

// Commit commits the transaction (ErrTxDone if it already ended).
func (tx *Tx) Commit(ctx context.Context) error { return tx.end(ctx, true) }

// Rollback rolls the transaction back (ErrTxDone if it already ended).
func (tx *Tx) Rollback(ctx context.Context) error { return tx.end(ctx, false) }

func (tx *Tx) end(ctx context.Context, commit bool) error {
	if tx == nil {
		return invalid("commit", "nil *Tx")
	}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return ErrTxDone
	}
	op, sql := "rollback", "ROLLBACK"
	if commit {
		op, sql = "commit", "COMMIT"
	}
	c := tx.conn
	var tr queryTrace
	if c.tracer() != nil && ctx != nil {
		ctx, tr = c.traceStart(ctx, op, sql, nil)
	}
	if err := c.begin(op, ctx); err != nil {
		tr.end(Result{}, err)
		return err
	}
	err := c.watch(op, ctx, func(cerr **C.staunch_error) C.staunch_status {
		// As any statement: its answer awaited in the netpoller when
		// others already wait in their threads (see poller).
		if pl := c.pool.poller(); pl != nil {
			defer pl.leave()
			if !pl.enter() {
				text := rollbackText
				if commit {
					text = commitText
				}
				if st := c.send(pl, text.ptr(), cparams{}, cerr); st != C.STAUNCH_OK {
					return st
				}
				var aff, lid C.uint64_t
				return C.go_exec_recv(c.c, &aff, &lid, cerr)
			}
		}
		if commit {
			return C.staunch_conn_commit(c.c, cerr)
		}
		return C.staunch_conn_rollback(c.c, cerr)
	})
	c.mu.Unlock()
	tr.end(Result{}, err)
	tx.done = true
	if tx.release {
		c.Release() // rolls back whatever a failed commit left open
	}
	return err
}
