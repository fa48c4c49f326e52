package staunch

/*
#include <stdlib.h>
#include "staunch.h"

// shim.c
staunch_status go_pool_send(staunch_pool *pool, uint32_t timeout_ms,
                            const char *sql, int signal_fd,
                            staunch_conn **conn, staunch_pending_get **pending,
                            int *fd, uint64_t *id, staunch_error **err);
staunch_status go_pending_finish(staunch_pending_get *pending,
                                 staunch_conn **out, staunch_error **err);
staunch_status go_query_send(staunch_conn *conn, const char *sql,
                             const staunch_param *params, size_t n_params,
                             int *fd, uint64_t *id, staunch_error **err);
staunch_status go_recv_free(staunch_conn *conn, staunch_rows **out,
                            staunch_error **err);
staunch_status go_set_event_callback(staunch_options *opts, uintptr_t handle,
                                     staunch_error **err);
staunch_status go_pool_get_server(staunch_pool *pool, uint32_t timeout_ms,
                                  bool read, staunch_conn **conn, char *buf,
                                  size_t cap, size_t *n, bool *got,
                                  staunch_error **err);
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/cgo"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Config says how to open a pool. Build it with ParseConfig (or as a literal)
// and pass it to NewWithConfig. Fields left zero keep the URL's value or
// staunch's default.
type Config struct {
	// URL is mysql://user:pass@host:port/db?knob=value&... (every knob of
	// docs/knobs.md can be a URL parameter).
	URL string
	// MaxConns is the knob max_size: most connections, idle and in use
	// (1-4096). Defaults to 10.
	MaxConns int
	// MinIdleConns is the knob min_idle: idle connections kept open.
	// Defaults to 0.
	MinIdleConns int
	// AcquireTimeout is the knob connection_timeout: the longest Acquire
	// waits when its context has no deadline (1ms-1h). Defaults to 10s.
	AcquireTimeout time.Duration
	// ConnectTimeout is the knob connect_timeout: hard deadline of one whole
	// connect (1ms-1h). Defaults to 3s.
	ConnectTimeout time.Duration
	// QueryTimeout is the knob query_timeout: every statement's time limit
	// (ended by the server; cut off by the client 1 s later). Defaults to
	// none (a context deadline still bounds each call).
	QueryTimeout time.Duration
	// Knobs sets any knob by name, in its text form ("idle_timeout": "5m"),
	// after the URL and the fields above. An unknown knob is an error.
	Knobs map[string]string
	// OnEvent, if set, receives the pool's events (connects, connect
	// failures, recoveries, closes, leak reports, ...). It runs on one
	// goroutine of the pool, one event at a time, in the order staunch
	// reported them, so it may take its time and may call the pool; if it
	// falls more than 1024 events behind, later events are dropped (and
	// counted in Stat().DroppedEvents). The last call has returned when
	// Pool.Close returns; OnEvent must not call Close itself.
	OnEvent func(Event)
	// Tracer, if set, hears the start and end of each acquire and
	// statement with the caller's context (see Tracer; the staunchotel
	// module makes OpenTelemetry spans of them).
	Tracer Tracer

	// claimed are URL parameters the database/sql face reads itself
	// (parseTime, loc, ...): the library skips them in URL.
	claimed []string
}

// ParseConfig checks the URL's form and returns a Config holding it. Knobs
// in the URL are checked when the pool opens (NewWithConfig).
func ParseConfig(url string) (*Config, error) {
	if !strings.HasPrefix(url, "mysql://") {
		return nil, &Error{Status: StatusInvalidConfig, Op: "parse config", Message: "URL does not start with mysql:// (mysql://user:password@host:3306/db?knob=value)"}
	}
	if strings.IndexByte(url, 0) >= 0 {
		return nil, &Error{Status: StatusInvalidConfig, Op: "parse config", Message: "URL contains a NUL byte"}
	}
	return &Config{URL: url}, nil
}

// redactURL is url for printing, as the library's own messages quote it
// (staunch_url_redact): the user-info's password and the value of every
// parameter whose name holds "password" replaced. A URL the library cannot
// read (a NUL byte, bad UTF-8) is not shown at all.
func redactURL(url string) string {
	const hidden = "<redacted>"
	if strings.IndexByte(url, 0) >= 0 {
		return hidden
	}
	curl := C.CString(url)
	defer C.free(unsafe.Pointer(curl))
	s, _, err := cText("redact URL", len(url)+64, func(buf *C.char, cap C.size_t, n *C.size_t, cerr **C.staunch_error) C.staunch_status {
		return C.staunch_url_redact(curl, buf, cap, n, cerr)
	})
	if err != nil {
		return hidden
	}
	return s
}

// String shows the configuration with its URL's user-info and every
// password knob redacted (value receivers: a Config and a *Config alike).
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "staunch.Config{URL: %q", redactURL(c.URL))
	if c.MaxConns != 0 {
		fmt.Fprintf(&b, ", MaxConns: %d", c.MaxConns)
	}
	if c.MinIdleConns != 0 {
		fmt.Fprintf(&b, ", MinIdleConns: %d", c.MinIdleConns)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"AcquireTimeout", c.AcquireTimeout}, {"ConnectTimeout", c.ConnectTimeout}, {"QueryTimeout", c.QueryTimeout}} {
		if d.v != 0 {
			fmt.Fprintf(&b, ", %s: %v", d.name, d.v)
		}
	}
	if len(c.Knobs) > 0 {
		keys := make([]string, 0, len(c.Knobs))
		for k := range c.Knobs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(", Knobs: {")
		for i, k := range keys {
			v := c.Knobs[k]
			if strings.Contains(strings.ToLower(k), "password") {
				v = "<redacted>"
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q: %q", k, v)
		}
		b.WriteString("}")
	}
	if c.OnEvent != nil {
		b.WriteString(", OnEvent: set")
	}
	if c.Tracer != nil {
		b.WriteString(", Tracer: set")
	}
	b.WriteString("}")
	return b.String()
}

// GoString is String: %#v shows no password either.
func (c Config) GoString() string { return c.String() }

// Format prints String for every verb (%v, %+v, %#v, %s, %q...), so no
// verb prints the fields one by one.
func (c Config) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", c.String())
		return
	}
	_, _ = f.Write([]byte(c.String()))
}

// Pool is a staunch pool. Safe for concurrent use by any number of
// goroutines. Close it when done (a finalizer closes a forgotten one, late).
type Pool struct {
	// mu guards p against staunch_pool_free: every call on p holds it for
	// reading; Close frees p holding it for writing.
	mu        sync.RWMutex
	p         *C.staunch_pool
	closeOnce sync.Once
	final     *Stat // the last Stat, taken as the pool closes
	sink      *eventSink
	pl        *poller // nil: statements wait in their threads
	// gate admits GOMAXPROCS goroutines at once into the call that starts
	// a borrow (with pl). Thousands starting together otherwise each took
	// a thread: a cgo call that waits a moment for the queue's lock has
	// its P handed to a new thread, and 10,000 goroutines borrowing from 8
	// connections peaked at 84 threads (161 with the debug library); with
	// the gate, 13. A goroutine waiting at the gate is parked.
	gate chan struct{}
	name string // pool_name or staunch-N, read as the pool opens
	// leakStacks: leak_detection_threshold is set, so each borrow gives the
	// library its goroutine's stack for the leak report (see giveStack).
	leakStacks bool
	tracer     Tracer // Config.Tracer
	// server is the server of every connection of a pool of one host with
	// a Tracer (see onlyServer), else nil.
	server *string
	// lastServer is the server text a borrow last read (Conn.keepServer),
	// shared by the Conns that have the same (see internServer).
	lastServer atomic.Pointer[string]
	// metricsCap is the buffer size that last held MetricsText's text.
	metricsCap atomic.Int64
}

// poller is where the pool's statements wait apart (see poller); nil: in
// their threads.
func (p *Pool) poller() *poller { return p.pl }

// New opens a pool from a URL. It does not connect (unless the URL sets
// initialization_fail_timeout); ctx only bounds that.
func New(ctx context.Context, url string) (*Pool, error) {
	cfg, err := ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(ctx, cfg)
}

func durationKnob(name string, d time.Duration) (string, error) {
	if d < 0 {
		return "", &Error{Status: StatusInvalidConfig, Op: "open", Message: fmt.Sprintf("%s: negative duration %v", name, d)}
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return fmt.Sprintf("%dms", ms), nil
}

// NewWithConfig opens a pool from a Config. A bad URL, an unknown knob or a
// value out of range is an error naming it (errors.Is(err, ErrInvalid)).
func NewWithConfig(ctx context.Context, cfg *Config) (*Pool, error) {
	if abiErr != nil {
		return nil, abiErr
	}
	if ctx == nil {
		return nil, invalid("open", "nil context")
	}
	if cfg == nil {
		return nil, invalid("open", "nil *Config")
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError("open", ctx)
	}
	if _, err := ParseConfig(cfg.URL); err != nil {
		return nil, err
	}
	knobs := [][2]string{}
	if cfg.MaxConns != 0 {
		if cfg.MaxConns < 0 {
			return nil, &Error{Status: StatusInvalidConfig, Op: "open", Message: fmt.Sprintf("MaxConns (max_size): negative value %d", cfg.MaxConns)}
		}
		knobs = append(knobs, [2]string{"max_size", fmt.Sprint(cfg.MaxConns)})
	}
	if cfg.MinIdleConns != 0 {
		if cfg.MinIdleConns < 0 {
			return nil, &Error{Status: StatusInvalidConfig, Op: "open", Message: fmt.Sprintf("MinIdleConns (min_idle): negative value %d", cfg.MinIdleConns)}
		}
		knobs = append(knobs, [2]string{"min_idle", fmt.Sprint(cfg.MinIdleConns)})
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"connection_timeout", cfg.AcquireTimeout}, {"connect_timeout", cfg.ConnectTimeout}, {"query_timeout", cfg.QueryTimeout}} {
		if d.v != 0 {
			v, err := durationKnob(d.name, d.v)
			if err != nil {
				return nil, err
			}
			knobs = append(knobs, [2]string{d.name, v})
		}
	}
	for k, v := range cfg.Knobs {
		knobs = append(knobs, [2]string{k, v})
	}

	var opts *C.staunch_options
	var cerr *C.staunch_error
	if st := C.staunch_options_new(&opts, &cerr); st != C.STAUNCH_OK {
		return nil, takeError("open", st, cerr)
	}
	defer C.staunch_options_free(opts)
	// As go-sql-driver: a statement without args goes as text (one round
	// trip, never prepared). A default: the URL's text_without_params wins.
	ck, cv := C.CString("text_without_params"), C.CString("true")
	st0 := C.staunch_options_set_default(opts, ck, cv, &cerr)
	C.free(unsafe.Pointer(ck))
	C.free(unsafe.Pointer(cv))
	if st0 != C.STAUNCH_OK {
		return nil, takeError("open", st0, cerr)
	}
	for _, name := range cfg.claimed {
		cname := C.CString(name)
		st := C.staunch_options_claim_param(opts, cname, &cerr)
		C.free(unsafe.Pointer(cname))
		if st != C.STAUNCH_OK {
			return nil, takeError("open", st, cerr)
		}
	}
	curl := C.CString(cfg.URL)
	st := C.staunch_options_set_url(opts, curl, &cerr)
	C.free(unsafe.Pointer(curl))
	if st != C.STAUNCH_OK {
		return nil, takeError("open", st, cerr)
	}
	for _, kv := range knobs {
		if strings.IndexByte(kv[0], 0) >= 0 || strings.IndexByte(kv[1], 0) >= 0 {
			return nil, &Error{Status: StatusInvalidConfig, Op: "open", Message: fmt.Sprintf("knob %q: contains a NUL byte", kv[0])}
		}
		ck, cv := C.CString(kv[0]), C.CString(kv[1])
		st := C.staunch_options_set(opts, ck, cv, &cerr)
		C.free(unsafe.Pointer(ck))
		C.free(unsafe.Pointer(cv))
		if st != C.STAUNCH_OK {
			return nil, takeError("open", st, cerr)
		}
	}
	pool := &Pool{tracer: cfg.Tracer}
	if cfg.OnEvent != nil {
		pool.sink = newEventSink(cfg.OnEvent)
		h := cgo.NewHandle(pool.sink)
		if st := C.go_set_event_callback(opts, C.uintptr_t(h), &cerr); st != C.STAUNCH_OK {
			h.Delete()
			pool.sink.close()
			return nil, takeError("open", st, cerr)
		}
		// From here the finalizer (staunchGoFinalize) deletes the handle,
		// after the last event: when the options and the pool are freed.
	}
	if st := C.staunch_pool_open_options(opts, &pool.p, &cerr); st != C.STAUNCH_OK {
		return nil, takeError("open", st, cerr)
	}
	pool.name = poolName(pool.p)
	pool.leakStacks = C.staunch_pool_leak_threshold_ms(pool.p) > 0
	if pool.tracer != nil {
		pool.server = onlyServer(pool.p)
	}
	if !noPoller() {
		pool.pl = newPoller(cfg.MaxConns)
		pool.gate = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	runtime.SetFinalizer(pool, (*Pool).finalize)
	return pool, nil
}

// finalize is the fallback for a pool nobody closed: it must not block.
func (p *Pool) finalize() {
	if p.p != nil {
		C.staunch_pool_free_nowait(p.p)
		p.p = nil
	}
	if p.pl != nil {
		p.pl.close()
	}
}

// Close closes the pool: goroutines waiting in Acquire fail with ErrClosed,
// idle connections are closed, borrowed ones when released (using them
// meanwhile gives ErrClosed). Idempotent; Stat still works afterwards.
// Returns once staunch's threads for the pool are gone and OnEvent has
// received the last event (so OnEvent must not call Close).
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.closeOnce.Do(func() {
		p.mu.RLock()
		if p.p != nil {
			C.staunch_pool_close(p.p, nil) // wakes every waiter: they release mu
		}
		p.mu.RUnlock()
		p.mu.Lock()
		if p.p != nil {
			p.final = p.statLocked()
			C.staunch_pool_free(p.p) // after it, staunch calls no callback for this pool
			p.p = nil
		}
		p.mu.Unlock()
		runtime.SetFinalizer(p, nil)
		if p.pl != nil {
			p.pl.close()
		}
		if p.sink != nil {
			<-p.sink.done // the events already queued are delivered first
		}
	})
}

// closedError is what calls on a closed (or nil) pool return.
func closedError(op string) error {
	return &Error{Status: StatusClosed, Op: op, Message: "the pool is closed"}
}

// timeoutMs gives the C timeout for a context: its deadline if it has one,
// else the pool's connection_timeout.
func timeoutMs(ctx context.Context) C.uint32_t {
	dl, ok := ctx.Deadline()
	if !ok {
		return C.STAUNCH_TIMEOUT_DEFAULT
	}
	left := time.Until(dl)
	if left <= 0 {
		return 0
	}
	ms := (left + time.Millisecond - 1) / time.Millisecond
	if ms >= math.MaxUint32 {
		return math.MaxUint32 - 1
	}
	return C.uint32_t(ms)
}

// Acquire borrows a connection, waiting until one is free, ctx is done, or
// (without a deadline on ctx) the pool's AcquireTimeout passes. Release it
// when done. A cancelled ctx makes a waiting Acquire return at once with an
// error matching both ErrCancelled and ctx.Err(); a deadline is the wait's
// bound (the error then matches ErrPoolExhausted or ErrUnreachable, and
// context.DeadlineExceeded).
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) { return p.acquire(ctx, false) }

// AcquireRead borrows a connection for reading: from a healthy replica in a
// topology pool (topology=replication), else from the writer. As Acquire
// otherwise.
func (p *Pool) AcquireRead(ctx context.Context) (*Conn, error) { return p.acquire(ctx, true) }

func (p *Pool) acquire(ctx context.Context, read bool) (*Conn, error) {
	if p == nil {
		return nil, invalid("acquire", "nil *Pool")
	}
	if ctx == nil {
		return nil, invalid("acquire", "nil context")
	}
	if t := p.tracer; t != nil {
		ctx = t.TraceAcquireStart(ctx, p, TraceAcquireStartData{Read: read})
		// The server is known before the Conn is shared, so that Server
		// never waits: the pool's one, or read by the borrow's own call.
		var sc *serverScratch
		if p.server == nil {
			sc = serverScratches.Get().(*serverScratch)
		}
		c, err := p.get(ctx, read, sc)
		if c != nil {
			if p.server != nil {
				c.server.Store(p.server)
			} else {
				c.keepServer(sc)
			}
		}
		if sc != nil {
			serverScratches.Put(sc)
		}
		t.TraceAcquireEnd(ctx, p, TraceAcquireEndData{Conn: c, Err: err})
		return c, err
	}
	return p.get(ctx, read, nil)
}

// get is acquire's borrow (ctx not nil). With sc (a Tracer's borrow), the
// connection's server is read into it by the same call where it can be
// (sc.got; see Conn.keepServer).
func (p *Pool) get(ctx context.Context, read bool, sc *serverScratch) (*Conn, error) {
	if ctx.Err() != nil {
		return nil, ctxError("acquire", ctx)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return nil, closedError("acquire")
	}
	var out *C.staunch_conn
	var cerr *C.staunch_error
	var st C.staunch_status
	timeout := timeoutMs(ctx)
	if sc != nil {
		sc.got = false
	}
	var gaveUp error
	if p.pl != nil {
		st, gaveUp = p.getApart(ctx, read, &out, &cerr)
	} else if ctx.Done() == nil {
		switch {
		case sc != nil:
			st = C.go_pool_get_server(p.p, timeout, C.bool(read), &out, &sc.buf[0], C.size_t(len(sc.buf)), &sc.n, &sc.got, &cerr)
		case read:
			st = C.staunch_pool_get_read(p.p, timeout, &out, &cerr)
		default:
			st = C.staunch_pool_get(p.p, timeout, &out, &cerr)
		}
	} else {
		var tok *C.staunch_cancel_token
		if st = C.staunch_cancel_token_new(&tok, &cerr); st != C.STAUNCH_OK {
			return nil, takeError("acquire", st, cerr)
		}
		// The cancel runs on a goroutine of the context's only once ctx is
		// done; stop() unregisters it, and if it already started we wait
		// for it, so it never touches the token after the free below.
		// A deadline is the C call's own timeout (timeoutMs): left to it,
		// the error says why the wait failed (pool exhausted, unreachable
		// and why); only a cancel goes through the token.
		_, hasDeadline := ctx.Deadline()
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(fired)
			if hasDeadline && ctx.Err() == context.DeadlineExceeded {
				return
			}
			C.staunch_cancel_token_cancel(tok, nil)
		})
		if read {
			st = C.staunch_pool_get_read_cancellable(p.p, timeout, tok, &out, &cerr)
		} else {
			st = C.staunch_pool_get_cancellable(p.p, timeout, tok, &out, &cerr)
		}
		if !stop() {
			<-fired
		}
		C.staunch_cancel_token_free(tok)
	}
	runtime.KeepAlive(p)
	if gaveUp != nil {
		return nil, gaveUp
	}
	if st != C.STAUNCH_OK {
		return nil, withContext(takeError("acquire", st, cerr), ctx)
	}
	if p.leakStacks {
		giveStack(out)
	}
	c := &Conn{c: out, pool: p}
	runtime.SetFinalizer(c, (*Conn).finalize)
	return c, nil
}

// getApart borrows without holding a thread while it waits: the borrow
// starts (staunch_pool_get_start: one cgo call, done at once when a
// connection is idle), and otherwise waits in the pool's queue while its
// goroutine parks in the netpoller on an eventfd of the binding's (kept
// registered and reused, see signal) until a connection is handed to it,
// the bound passes or ctx is cancelled (the borrow is then given up: the
// pool is left as if it had never waited). The bound is the C call's own
// (ctx's deadline, else connection_timeout), so the error says why the
// wait failed, as the blocking borrow's does. A cancelled ctx gives the
// error to return instead of a status.
func (p *Pool) getApart(ctx context.Context, read bool, out **C.staunch_conn, cerr **C.staunch_error) (C.staunch_status, error) {
	var pend *C.staunch_pending_get
	start := time.Now()
	sig := takeSignal()
	p.gate <- struct{}{}
	st := C.staunch_pool_get_start(p.p, timeoutMs(ctx), C.bool(read), sig.cfd(), out, &pend, cerr)
	<-p.gate
	if st != C.STAUNCH_OK || pend == nil {
		sig.put()
		return st, nil
	}
	return awaitPending(ctx, pend, sig, start, out, cerr)
}

// awaitPending waits in the netpoller for the pending borrow pend (started
// at start, signalling sig) until it finishes: a connection in *out, or its
// error; a cancelled ctx gives up with the error to return. pend is freed
// either way; sig goes back to its pool.
func awaitPending(ctx context.Context, pend *C.staunch_pending_get, sig *signal, start time.Time, out **C.staunch_conn, cerr **C.staunch_error) (C.staunch_status, error) {
	defer sig.put()
	for {
		left := time.Duration(C.staunch_pending_get_remaining_ms(pend)) * time.Millisecond
		if left > 0 {
			wctx := ctx
			if ctx.Err() != nil {
				// A deadline that passed a moment before the C bound
				// (rounded up to the millisecond): wait that moment out.
				wctx = context.Background()
			}
			if sig.f == nil {
				waitSignal(wctx, int(C.staunch_pending_get_fd(pend)), left)
			} else {
				// The finish is what waits for the signal: it reads the
				// eventfd itself once a connection was handed over, so
				// reading it here too would cost two system calls a wait
				// (one finding nothing before the park, one after the
				// library's own read).
				// The finish's outcome is kept in sig (already on the
				// heap), not in variables the callback would move there.
				sig.done = false
				sig.waitFor(wctx, left, func() bool {
					sig.st = C.go_pending_finish(pend, out, cerr)
					sig.done = sig.st != C.STAUNCH_OK || *out != nil
					return sig.done
				})
				if sig.done {
					if sig.st == C.STAUNCH_OK {
						apartWaits.Add(1)
					}
					return sig.st, nil
				}
			}
		}
		if ctx.Err() == context.Canceled {
			C.staunch_pending_get_free(pend)
			apartCancels.Add(1)
			return C.STAUNCH_CANCELLED, &Error{Status: StatusCancelled, Op: "acquire", ctx: ctx.Err(),
				Message: fmt.Sprintf("the wait for a connection was cancelled after %v", time.Since(start).Round(time.Millisecond))}
		}
		// Frees pend once it is over.
		if st := C.go_pending_finish(pend, out, cerr); st != C.STAUNCH_OK || *out != nil {
			if st == C.STAUNCH_OK {
				apartWaits.Add(1)
			}
			return st, nil
		}
	}
}

// apartWaits and apartCancels count the borrows that waited in the
// netpoller and those given up there (for the tests: export_test.go).
var apartWaits, apartCancels atomic.Uint64

// signal is an eventfd of the binding's own, registered in the netpoller
// once and reused by borrow after borrow (staunch_pool_get_start's
// signal_fd): a waiting borrow then costs the library's write and this
// read, where one made and closed per borrow cost seven more system calls
// (eventfd, dup, fcntl, epoll_ctl twice, close twice). A signal left over
// from an earlier borrow only makes a finish find nothing yet. The zero
// signal (none could be made) lets each borrow make its own.
type signal struct {
	f   *os.File
	raw syscall.RawConn
	fd  int
	buf [8]byte
	// A waiting borrow's finish, as its RawConn.Read callback left it.
	st   C.staunch_status
	done bool
}

var signals sync.Pool

func takeSignal() *signal {
	if s, ok := signals.Get().(*signal); ok {
		return s
	}
	fd, _, e := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		return &signal{fd: -1}
	}
	// An os.File in the netpoller (a non-blocking descriptor); its
	// finalizer closes it if the sync.Pool drops it.
	f := os.NewFile(fd, "staunch-borrow-signal")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return &signal{fd: -1}
	}
	return &signal{f: f, raw: raw, fd: int(fd)}
}

// cfd is the signal_fd to give: -1 for a borrow's own eventfd.
func (s *signal) cfd() C.int { return C.int(s.fd) }

func (s *signal) put() {
	if s.f != nil {
		signals.Put(s)
	}
}

// wait parks the goroutine until the borrow's descriptor fd (this signal's,
// or the borrow's own) is signalled, bound passes or ctx ends.
func (s *signal) wait(ctx context.Context, fd int, bound time.Duration) {
	if s.f == nil {
		waitSignal(ctx, fd, bound)
		return
	}
	// Reading the counter clears it; the library's finish looks at what
	// was handed over, which is set before the signal.
	s.waitFor(ctx, bound, func() bool {
		_, e := syscall.Read(s.fd, s.buf[:])
		return e != syscall.EAGAIN
	})
}

// waitFor calls try, and while it returns false parks the goroutine until
// this signal's eventfd turns readable and calls it again, until bound
// passes or ctx ends. try must clear the counter when it returns true (a
// read, or a finish that found its connection), so that the next signal is
// a new edge for the netpoller.
func (s *signal) waitFor(ctx context.Context, bound time.Duration, try func() bool) {
	if s.f.SetReadDeadline(time.Now().Add(bound)) != nil {
		time.Sleep(min(bound, time.Millisecond))
		return
	}
	var stop func() bool
	fired := make(chan struct{})
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			defer close(fired)
			s.f.SetReadDeadline(time.Unix(1, 0)) // the past: the park ends now
		})
	}
	_ = s.raw.Read(func(uintptr) bool { return try() })
	if stop != nil && !stop() {
		<-fired
	}
}

// waitSignal is wait for a borrow's own eventfd fd (owned by the library:
// a duplicate is waited on). When no duplicate can be made it waits a
// millisecond instead, and the caller looks again.
func waitSignal(ctx context.Context, fd int, bound time.Duration) {
	nfd, err := syscall.Dup(fd)
	if err != nil {
		time.Sleep(min(bound, time.Millisecond))
		return
	}
	syscall.CloseOnExec(nfd)
	if syscall.SetNonblock(nfd, true) != nil {
		syscall.Close(nfd)
		time.Sleep(min(bound, time.Millisecond))
		return
	}
	f := os.NewFile(uintptr(nfd), "staunch-pending-get")
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		time.Sleep(min(bound, time.Millisecond))
		return
	}
	s := &signal{f: f, raw: raw, fd: nfd}
	s.wait(ctx, nfd, bound)
}

// bindingPrefix is the package path of this binding's own functions, left
// out of a borrower's stack.
const bindingPrefix = "github.com/staunch-db/staunch/bindings/go."

// giveStack gives the library the borrowing goroutine's stack, as a Go
// panic prints one (function, then file:line), without this binding's own
// frames: the leak report of this borrow names the code that borrowed.
func giveStack(conn *C.staunch_conn) {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var b strings.Builder
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, bindingPrefix) {
			fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		}
		if !more {
			break
		}
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if text == "" {
		return
	}
	cs := C.CString(text)
	defer C.free(unsafe.Pointer(cs))
	// Only a NULL argument fails, and none is passed: nothing to report.
	C.staunch_conn_set_borrower_stack(conn, cs, C.size_t(len(text)), nil)
}

// Exec acquires a connection, runs sql with args and releases it.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (Result, error) {
	if ctx != nil && ctx.Done() == nil && (p == nil || p.tracer == nil) {
		r, err := p.once("exec", sql, args, 0)
		if err != nil {
			return Result{}, err
		}
		res := Result{RowsAffected: uint64(C.staunch_rows_affected_rows(r)), LastInsertID: uint64(C.staunch_rows_last_insert_id(r))}
		C.staunch_rows_free(r)
		return res, nil
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		return Result{}, err
	}
	defer c.Release()
	return c.Exec(ctx, sql, args...)
}

// Query acquires a connection, runs sql with args and releases it; the rows
// are read whole first (they stay valid after the release). Close the Rows.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	if ctx != nil && ctx.Done() == nil && (p == nil || p.tracer == nil) {
		r, err := p.once("query", sql, args, 0)
		if err != nil {
			return nil, err
		}
		return newRows(r), nil
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return c.Query(ctx, sql, args...)
}

// QueryStream is Query reading the rows as they arrive (see
// Conn.QueryStream): memory for one batch of rows, not the whole answer,
// and rows decoded while the server still sends them. The rows hold a
// connection of the pool until they are read to the end or closed, as
// database/sql's and pgx's rows do: close them.
func (p *Pool) QueryStream(ctx context.Context, sql string, args ...any) (*Rows, error) {
	if ctx != nil && ctx.Done() == nil && (p == nil || p.tracer == nil) {
		// One call: the row set holds the connection, and the library
		// gives it back when the rows end or are freed.
		r, err := p.once("query", sql, args, C.STAUNCH_QUERY_STREAM)
		if err != nil {
			return nil, err
		}
		rows := newRows(r)
		rows.stream = true
		return rows, nil
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.QueryStream(ctx, sql, args...)
	if err != nil {
		c.Release()
		return nil, err
	}
	rows.owner = c
	return rows, nil
}

// QueryRow is Query for at most one row: errors wait for Row.Scan, which
// returns ErrNoRows (sql.ErrNoRows) if there is none.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	if ctx != nil && ctx.Done() == nil && (p == nil || p.tracer == nil) {
		rows, err := p.Query(ctx, sql, args...)
		return &Row{rows: rows, err: err}
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		return &Row{err: err}
	}
	defer c.Release()
	return c.QueryRow(ctx, sql, args...)
}

// once runs one statement on a connection of the pool in one call into the
// library (staunch_pool_query: borrow, run, give back; with stream
// STAUNCH_QUERY_STREAM the rows give the connection back), where Acquire,
// Query and Release make three and a connection handle. For a context that
// can never end only (Done() == nil: nothing to cancel, the wait's bound
// is the pool's AcquireTimeout); the others go through Acquire, whose Conn
// answers a cancel. Without args the statement goes as text (several
// statements separated by ; work), as Conn.Exec and Conn.Query send it.
func (p *Pool) once(op, sql string, args []any, stream C.uint32_t) (*C.staunch_rows, error) {
	if p == nil {
		return nil, invalid(op, "nil *Pool")
	}
	params, err := bindParams(op, args)
	if err != nil {
		return nil, err
	}
	defer params.free()
	text, err := cSQL(op, sql)
	if err != nil {
		return nil, err
	}
	flags := stream
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return nil, closedError("acquire")
	}
	var out *C.staunch_rows
	var cerr *C.staunch_error
	var st C.staunch_status
	if pl := p.poller(); pl != nil && params.n == 0 && stream == 0 {
		defer pl.leave()
		if !pl.enter() {
			st = p.onceApart(pl, text, &out, &cerr)
		} else {
			st = C.staunch_pool_query(p.p, C.STAUNCH_TIMEOUT_DEFAULT, text.ptr(), nil, 0, flags, &out, &cerr)
		}
	} else {
		st = C.staunch_pool_query(p.p, C.STAUNCH_TIMEOUT_DEFAULT, text.ptr(), params.ptr, params.n, flags, &out, &cerr)
	}
	runtime.KeepAlive(text.b)
	runtime.KeepAlive(p)
	if st != C.STAUNCH_OK {
		switch Status(st) {
		case StatusPoolExhausted, StatusUnreachable, StatusConnectRejected, StatusConnectFailed, StatusClosed, StatusNoWriter:
			op = "acquire" // the borrow failed: as Acquire reports it
		}
		return nil, takeError(op, st, cerr)
	}
	return out, nil
}

// onceApart is once's call for a text statement whose answer waits in the
// netpoller (see poller): borrow and send, park, receive and give back.
// p.mu is held (read) by the caller.
func (p *Pool) onceApart(pl *poller, text sqlText, out **C.staunch_rows, cerr **C.staunch_error) C.staunch_status {
	var conn *C.staunch_conn
	var pend *C.staunch_pending_get
	var fd C.int
	var id C.uint64_t
	start := time.Now()
	sig := takeSignal()
	p.gate <- struct{}{}
	st := C.go_pool_send(p.p, C.STAUNCH_TIMEOUT_DEFAULT, text.ptr(), sig.cfd(), &conn, &pend, &fd, &id, cerr)
	<-p.gate
	if pend == nil {
		sig.put()
	} else {
		// The pool was full: the borrow waits in the netpoller too, then
		// the statement is sent as above.
		st, _ = awaitPending(context.Background(), pend, sig, start, &conn, cerr)
		if st != C.STAUNCH_OK {
			return st
		}
		st = C.go_query_send(conn, text.ptr(), nil, 0, &fd, &id, cerr)
		if st != C.STAUNCH_OK {
			C.staunch_conn_free(conn)
			return st
		}
	}
	if st != C.STAUNCH_OK {
		return st
	}
	if fd >= 0 {
		pl.wait(uint64(id), int(fd))
	}
	return C.go_recv_free(conn, out, cerr)
}

// Begin acquires a connection and starts a transaction on it; Commit or
// Rollback releases the connection.
func (p *Pool) Begin(ctx context.Context) (*Tx, error) {
	return p.BeginTx(ctx, TxOptions{})
}

// BeginTx is Begin with options.
func (p *Pool) BeginTx(ctx context.Context, opts TxOptions) (*Tx, error) {
	c, err := p.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := c.BeginTx(ctx, opts)
	if err != nil {
		c.Release()
		return nil, err
	}
	tx.release = true
	return tx, nil
}

// Ping acquires a connection, checks it with COM_PING and releases it.
func (p *Pool) Ping(ctx context.Context) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return c.Ping(ctx)
}

// SoftEvict retires every current connection: idle ones now, borrowed ones
// when released (after a failover or a credentials change).
func (p *Pool) SoftEvict() error {
	if p == nil {
		return invalid("soft evict", "nil *Pool")
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return closedError("soft evict")
	}
	var cerr *C.staunch_error
	if st := C.staunch_pool_soft_evict(p.p, &cerr); st != C.STAUNCH_OK {
		return takeError("soft evict", st, cerr)
	}
	return nil
}

// SetMaxSize changes the pool's max_size while it runs: database/sql's
// SetMaxOpenConns, HikariCP's setMaximumPoolSize. n goes from 1 up to the
// max_size_cap knob (fixed at open; by default twice max_size, at least
// 64), and not below the current min_idle; otherwise an *Error with
// StatusInvalidConfig naming the knob, and nothing changes. Lowering it
// takes no borrowed connection away: connections above n are closed as they
// are released (idle ones at once), counted in Stat().ClosedEvicted.
// Raising it makes connections for the callers waiting now.
// Stat().MaxOpenConnections is the size in force. Never blocks.
//
// For a *sql.DB from OpenDB, this is the call that resizes: database/sql
// keeps no connection of its own there, so its SetMaxOpenConns can only
// limit how many it borrows at once (callers beyond that wait in
// database/sql's queue, bounded by their context alone); leave it unset
// (0, unlimited) and set the size here.
func (p *Pool) SetMaxSize(n int) error {
	return p.sizeCall("set max size", "max_size", n, func(pp *C.staunch_pool, v C.uint32_t, e **C.staunch_error) C.staunch_status {
		return C.staunch_pool_set_max_size(pp, v, e)
	})
}

// SetMinIdle changes the pool's min_idle while it runs (HikariCP's
// setMinimumIdle): from 0 up to the current max_size, otherwise an *Error
// with StatusInvalidConfig. Connections up to a raised min_idle are made in
// the background; those above a lowered one retire after idle_timeout.
// Never blocks.
func (p *Pool) SetMinIdle(n int) error {
	return p.sizeCall("set min idle", "min_idle", n, func(pp *C.staunch_pool, v C.uint32_t, e **C.staunch_error) C.staunch_status {
		return C.staunch_pool_set_min_idle(pp, v, e)
	})
}

func (p *Pool) sizeCall(op, knob string, n int, f func(*C.staunch_pool, C.uint32_t, **C.staunch_error) C.staunch_status) error {
	if p == nil {
		return invalid(op, "nil *Pool")
	}
	if n < 0 || uint64(n) > math.MaxUint32 {
		return &Error{Status: StatusInvalidConfig, Op: op, Message: fmt.Sprintf("%s is out of range, got %d", knob, n)}
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return closedError(op)
	}
	var cerr *C.staunch_error
	if st := f(p.p, C.uint32_t(n), &cerr); st != C.STAUNCH_OK {
		return takeError(op, st, cerr)
	}
	return nil
}

// Suspend stops the pool lending connections until Resume (HikariCP's
// suspendPool): Acquire, and everything that borrows (a *sql.DB from
// OpenDB too), waits within its context's deadline or the pool's
// connection_timeout, and a cancelled context still ends the wait.
// Borrowed connections are unaffected. Idempotent; never blocks.
func (p *Pool) Suspend() error { return p.simpleCall("suspend", suspendFn) }

// Resume ends a Suspend: waiting callers proceed. Idempotent.
func (p *Pool) Resume() error { return p.simpleCall("resume", resumeFn) }

func suspendFn(pp *C.staunch_pool, e **C.staunch_error) C.staunch_status {
	return C.staunch_pool_suspend(pp, e)
}

func resumeFn(pp *C.staunch_pool, e **C.staunch_error) C.staunch_status {
	return C.staunch_pool_resume(pp, e)
}

func (p *Pool) simpleCall(op string, f func(*C.staunch_pool, **C.staunch_error) C.staunch_status) error {
	if p == nil {
		return invalid(op, "nil *Pool")
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return closedError(op)
	}
	var cerr *C.staunch_error
	if st := f(p.p, &cerr); st != C.STAUNCH_OK {
		return takeError(op, st, cerr)
	}
	return nil
}
