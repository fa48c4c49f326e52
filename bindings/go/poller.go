package staunch

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
)

// poller lets a goroutine wait for a statement's answer in Go's netpoller
// instead of in a thread blocked inside the library. A thread blocked in a
// cgo call keeps its P until sysmon takes it back (20 µs at the soonest),
// so with GOMAXPROCS=2 and 8 goroutines each statement's round trip held a
// P idle and cost a thread switch; go-sql-driver parks its goroutines in the
// netpoller. With the poller a statement is sent (staunch_conn_query_send,
// which arms the answer's socket in the pool's epoll instance, one-shot,
// with a key of the statement's own), the goroutine parks on a channel, the
// pool's dispatcher goroutine, itself parked in the netpoller on the epoll
// fd, wakes it when the answer begins to arrive, and the answer is read
// (staunch_conn_query_recv), which then waits for nothing or little.
//
// The library bounds the wait as it bounds any statement: its time limit,
// the liveness check and a cancel each cut the socket or make the server
// answer, which makes the socket readable. A closed poller wakes every
// waiter (the statement's recv then waits in its thread).
type poller struct {
	f     *os.File // the epoll fd, non-blocking, in the netpoller
	epfd  int
	raw   syscall.RawConn
	mu    sync.Mutex
	waits map[uint64]chan struct{}
	shut  bool
	next  atomic.Uint64
	done  chan struct{}
	// inflight counts the pool's text statements running now (waiting
	// either way); up to blockMax of them wait in their threads.
	inflight atomic.Int64
	blockMax int64
}

// newPoller makes the epoll instance and starts its dispatcher; nil where
// it cannot (the statements then wait in their threads).
func newPoller() *poller {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "staunch-epoll")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	pl := &poller{f: f, epfd: fd, raw: raw, waits: make(map[uint64]chan struct{}), done: make(chan struct{})}
	// A statement may block its thread (and so its P) while at least one
	// P stays free for the other goroutines: a blocked read answers sooner
	// than a wake-up through the netpoller (1.4x go-sql-driver's rate at
	// one goroutine, against 1.0x waiting apart), but each one past that
	// leaves runnable goroutines without a P until sysmon takes it back.
	pl.blockMax = max(1, int64(runtime.GOMAXPROCS(0))-1)
	go pl.run()
	return pl
}

// register gives a key for a statement about to be sent and the channel
// its wake-up comes on; ok false once the poller is closed.
func (pl *poller) register() (key uint64, ch chan struct{}, ok bool) {
	key = pl.next.Add(1)
	ch = make(chan struct{}, 1)
	pl.mu.Lock()
	if pl.shut {
		pl.mu.Unlock()
		return 0, nil, false
	}
	pl.waits[key] = ch
	pl.mu.Unlock()
	return key, ch, true
}

// enter counts a statement in; it may wait in its thread (true) when few
// others run. Pair with leave.
func (pl *poller) enter() (block bool) { return pl.inflight.Add(1) <= pl.blockMax }

// leave counts a statement out.
func (pl *poller) leave() { pl.inflight.Add(-1) }

// forget drops a key whose statement was not armed.
func (pl *poller) forget(key uint64) {
	pl.mu.Lock()
	delete(pl.waits, key)
	pl.mu.Unlock()
}

func (pl *poller) wake(key uint64) {
	pl.mu.Lock()
	ch := pl.waits[key]
	delete(pl.waits, key)
	pl.mu.Unlock()
	if ch != nil {
		ch <- struct{}{}
	}
}

// run is the dispatcher: parked in the netpoller until the epoll fd is
// readable, then takes every ready key (edge-triggered there: it drains).
func (pl *poller) run() {
	defer close(pl.done)
	evs := make([]syscall.EpollEvent, 64)
	_ = pl.raw.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.EpollWait(int(fd), evs, 0)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				return false
			}
			for i := 0; i < n; i++ {
				pl.wake(uint64(uint32(evs[i].Fd)) | uint64(uint32(evs[i].Pad))<<32)
			}
			if n < len(evs) {
				return false
			}
		}
	})
	// Closed: wake every waiter; recv then waits in its thread.
	pl.mu.Lock()
	pl.shut = true
	for key, ch := range pl.waits {
		delete(pl.waits, key)
		ch <- struct{}{}
	}
	pl.mu.Unlock()
}

func (pl *poller) close() {
	pl.f.Close()
	<-pl.done
}

// pollerWaits counts the statements whose answer a goroutine awaited in the
// netpoller (for the tests: export_test.go).
var pollerWaits atomic.Uint64

// noPoller (STAUNCH_GO_NOPOLLER=1 when a pool opens) makes its statements
// wait in their threads, to compare the two.
func noPoller() bool { return os.Getenv("STAUNCH_GO_NOPOLLER") == "1" }
