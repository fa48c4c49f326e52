package staunch

import (
	"context"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// poller lets a goroutine wait for a statement's answer in Go's netpoller
// instead of in a thread blocked inside the library. A thread blocked in a
// cgo call keeps its P until sysmon takes it back (20 µs at the soonest),
// so with GOMAXPROCS=2 and 8 goroutines each statement's round trip held a
// P idle and cost a thread switch; go-sql-driver parks its goroutines in the
// netpoller.
//
// A statement is sent apart (staunch_conn_query_send gives the socket its
// answer arrives on), its goroutine parks in the netpoller on an epoll
// instance of that connection's own, which holds the socket
// (level-triggered) and is itself registered in the netpoller once, when
// the connection is first seen; the netpoller wakes the goroutine when the
// answer begins to arrive, and staunch_conn_query_recv reads it. The epoll
// instances are kept by connection (the library's pool-wide connection
// number, never reused). A number keeps its socket for its whole life: the
// library opens a connection's socket once, closes it only with the
// connection, and numbers every new connection anew, a topology pool's
// hosts from one counter (staunch_rows_wait_fd's conn_id is documented as
// that key). So a kept instance is taken without a system call; one is made
// again only when a number comes with another fd. An epoll instance holds
// no reference to the socket: the library closing the connection removes
// it, so a kept instance never keeps a connection open; instances of
// connections that are gone are closed when the cache outgrows its limit.
//
// The library bounds the wait as it bounds any statement: its time limit,
// the liveness check and a cancel each cut the socket or make the server
// answer, which makes the socket readable.
type poller struct {
	mu     sync.Mutex
	conns  map[uint64]*connPoll
	limit  int
	tick   uint64
	closed bool

	// inflight counts the pool's text statements running now (waiting
	// either way); up to blockMax of them wait in their threads.
	inflight atomic.Int64
	blockMax int64
}

// connPoll is one connection's epoll instance, in the netpoller.
type connPoll struct {
	f       *os.File
	raw     syscall.RawConn
	busy    bool
	lastUse uint64
	evs     [1]syscall.EpollEvent
	fd      int // the connection's socket it was made with
	efd     int // the epoll instance (f's descriptor)
	// ready is park's callback for RawRead, made once with the instance
	// (a closure made per park was an allocation per statement); checked
	// says whether it has looked at the socket during this park.
	ready   func(efd uintptr) bool
	checked bool
}

// newPoller makes a pool's poller; maxConns is the pool's max_size (0:
// the default), which sizes the cache.
func newPoller(maxConns int) *poller {
	if maxConns <= 0 {
		maxConns = 10
	}
	pl := &poller{conns: make(map[uint64]*connPoll), limit: max(64, 4*maxConns)}
	// A statement may block its thread (and so its P) while at least one
	// P stays free for the other goroutines: a blocked read answers sooner
	// than a wake-up through the netpoller (1.4x go-sql-driver's rate at
	// one goroutine, against 1.0x waiting apart), but each one past that
	// leaves runnable goroutines without a P until sysmon takes it back.
	pl.blockMax = max(1, int64(runtime.GOMAXPROCS(0))-1)
	return pl
}

// enter counts a statement in; it may wait in its thread (true) when few
// others run. Pair with leave.
func (pl *poller) enter() (block bool) { return pl.inflight.Add(1) <= pl.blockMax }

// leave counts a statement out.
func (pl *poller) leave() { pl.inflight.Add(-1) }

// wait parks the goroutine until the socket fd of connection id (sent a
// statement apart) is readable. False when it could not wait (the poller is
// closed, or an epoll instance could not be made): the answer's receive
// then waits in its thread.
func (pl *poller) wait(id uint64, fd int) bool { return pl.waitCtx(nil, id, fd, 0) }

// waitCtx is wait that also ends after bound and when ctx ends (for a
// socket whose wait no staunch call bounds: a streamed row's); true only
// when the socket became readable. bound 0 (ctx then unused): no bound.
func (pl *poller) waitCtx(ctx context.Context, id uint64, fd int, bound time.Duration) bool {
	cp := pl.take(id, fd)
	if cp == nil {
		return false
	}
	defer pl.put(cp)
	pollerWaits.Add(1)
	if bound == 0 {
		return cp.park() == nil
	}
	if cp.f.SetReadDeadline(time.Now().Add(bound)) != nil {
		return false
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		cp.f.SetReadDeadline(time.Unix(1, 0)) // the past: the park ends now
	})
	err := cp.park()
	if !stop() {
		<-fired
	}
	// The instance is the connection's: its next wait starts unbounded
	// (setting a deadline fails only on a closed file).
	if cp.f.SetReadDeadline(time.Time{}) != nil {
		return false
	}
	return err == nil && ctx.Err() == nil
}

// park parks the goroutine until the connection's socket is readable (or
// the instance's read deadline passes: an error). The socket is checked
// before the park: RawRead resets the netpoller's readiness first, so an
// answer that arrived before it left no edge to wait for. It is not checked
// again after the wake-up: that would be a system call on every statement
// for a wake-up that is seldom spurious, and one that is costs only a wait
// in the receive's thread, bounded as every statement is.
func (cp *connPoll) park() error {
	cp.checked = false
	return cp.raw.Read(cp.ready)
}

// isReady is RawRead's callback (connPoll.ready): true after a wake-up,
// else whether the socket is readable now.
func (cp *connPoll) isReady(efd uintptr) bool {
	if cp.checked {
		return true
	}
	cp.checked = true
	n, err := syscall.EpollWait(int(efd), cp.evs[:], 0)
	return n > 0 || (err != nil && err != syscall.EINTR)
}

// take gives connection id's epoll instance, made (with fd in it) the
// first time, marked busy.
func (pl *poller) take(id uint64, fd int) *connPoll {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return nil
	}
	pl.tick++
	cp := pl.conns[id]
	if cp != nil && !cp.busy && cp.fd != fd {
		// Another fd under this number (see poller): the instance would
		// wait on a socket that is not this one's.
		cp.f.Close()
		delete(pl.conns, id)
		cp = nil
	}
	if cp == nil {
		if len(pl.conns) >= pl.limit {
			pl.pruneLocked()
		}
		if cp = newConnPoll(fd); cp == nil {
			return nil
		}
	} else if cp.busy {
		return nil // cannot be: one statement per connection at a time
	}
	cp.busy, cp.lastUse = true, pl.tick
	pl.conns[id] = cp
	return cp
}

func (pl *poller) put(cp *connPoll) {
	pl.mu.Lock()
	cp.busy = false
	drop := pl.closed
	pl.mu.Unlock()
	if drop {
		cp.f.Close()
	}
}

// pruneLocked closes the least recently used half of the idle instances
// (their connections mostly gone; a live one is made again when next used).
func (pl *poller) pruneLocked() {
	var idle []uint64
	for id, cp := range pl.conns {
		if !cp.busy {
			idle = append(idle, id)
		}
	}
	slices.SortFunc(idle, func(a, b uint64) int {
		return int(int64(pl.conns[a].lastUse) - int64(pl.conns[b].lastUse))
	})
	for _, id := range idle[:len(idle)/2+1] {
		pl.conns[id].f.Close()
		delete(pl.conns, id)
	}
}

func newConnPoll(fd int) *connPoll {
	efd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP}
	if syscall.EpollCtl(efd, syscall.EPOLL_CTL_ADD, fd, &ev) != nil || syscall.SetNonblock(efd, true) != nil {
		syscall.Close(efd)
		return nil
	}
	f := os.NewFile(uintptr(efd), "staunch-conn-epoll")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	cp := &connPoll{f: f, raw: raw, fd: fd, efd: efd}
	cp.ready = cp.isReady
	return cp
}

// close closes the idle instances; busy ones close when put back.
func (pl *poller) close() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.closed = true
	for id, cp := range pl.conns {
		if !cp.busy {
			cp.f.Close()
		}
		delete(pl.conns, id)
	}
}

// pollerWaits counts the statements whose answer a goroutine awaited in the
// netpoller (for the tests: export_test.go).
var pollerWaits atomic.Uint64

// noPoller (STAUNCH_GO_NOPOLLER=1 when a pool opens) makes its statements
// wait in their threads, to compare the two.
func noPoller() bool { return os.Getenv("STAUNCH_GO_NOPOLLER") == "1" }
