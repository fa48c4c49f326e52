package staunch

/*
#include "staunch.h"
*/
import "C"

import (
	"runtime/cgo"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// EventKind says what an Event reports.
type EventKind uint32

// The event kinds (STAUNCH_EVENT_* in the header). A library newer than this
// package may report kinds it has no name for: EventOther, or a number not
// listed here; log the Message.
const (
	EventOther                EventKind = C.STAUNCH_EVENT_OTHER
	EventConnected            EventKind = C.STAUNCH_EVENT_CONNECTED
	EventConnectFailed        EventKind = C.STAUNCH_EVENT_CONNECT_FAILED
	EventRecovered            EventKind = C.STAUNCH_EVENT_RECOVERED
	EventClosed               EventKind = C.STAUNCH_EVENT_CLOSED
	EventValidationFailed     EventKind = C.STAUNCH_EVENT_VALIDATION_FAILED
	EventLeakSuspected        EventKind = C.STAUNCH_EVENT_LEAK_SUSPECTED
	EventAcquireTimeout       EventKind = C.STAUNCH_EVENT_ACQUIRE_TIMEOUT
	EventPoolClosed           EventKind = C.STAUNCH_EVENT_POOL_CLOSED
	EventStalePrimaryWritable EventKind = C.STAUNCH_EVENT_STALE_PRIMARY_WRITABLE
	EventUnreplicatedWrites   EventKind = C.STAUNCH_EVENT_UNREPLICATED_WRITES
)

var eventNames = map[EventKind]string{
	EventOther: "other", EventConnected: "connected", EventConnectFailed: "connect_failed",
	EventRecovered: "recovered", EventClosed: "closed", EventValidationFailed: "validation_failed",
	EventLeakSuspected: "leak_suspected", EventAcquireTimeout: "acquire_timeout",
	EventPoolClosed: "pool_closed", EventStalePrimaryWritable: "stale_primary_writable",
	EventUnreplicatedWrites: "unreplicated_writes",
}

func (k EventKind) String() string {
	if n, ok := eventNames[k]; ok {
		return n
	}
	return "event(" + strconv.FormatUint(uint64(k), 10) + ")"
}

// Event is one pool event, as Config.OnEvent receives it.
type Event struct {
	Kind         EventKind
	Status       Status        // for failures: the status the error maps to
	ConnectionID uint64        // the pool-wide number of the connection, 0 if none
	Count        uint64        // consecutive failures (connect_failed, recovered), ...
	Duration     time.Duration // connect time, outage length, borrow time, ...
	Message      string
	PoolID       uint64
	At           time.Time // when the Go side received it
}

// eventSink takes events from staunch's threads (the C callback must not
// block) and hands them to the user's function on one goroutine of its own.
type eventSink struct {
	fn      func(Event)
	ch      chan Event
	mu      sync.Mutex // protects closed against the close of ch
	closed  bool
	dropped atomic.Uint64
	done    chan struct{} // closed when the dispatching goroutine has returned
}

func newEventSink(fn func(Event)) *eventSink {
	s := &eventSink{fn: fn, ch: make(chan Event, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for e := range s.ch {
			s.fn(e)
		}
	}()
	return s
}

func (s *eventSink) push(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.ch <- e:
	default:
		s.dropped.Add(1)
	}
}

func (s *eventSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

//export staunchGoEvent
func staunchGoEvent(ev *C.struct_staunch_event, userData unsafe.Pointer) {
	s, ok := cgo.Handle(uintptr(userData)).Value().(*eventSink)
	if !ok || ev == nil {
		return
	}
	s.push(Event{
		Kind:         EventKind(ev.kind),
		Status:       Status(ev.status),
		ConnectionID: uint64(ev.connection_id),
		Count:        uint64(ev.count),
		Duration:     time.Duration(ev.duration_us) * time.Microsecond,
		Message:      C.GoString(ev.message),
		PoolID:       uint64(ev.pool_id),
		At:           time.Now(),
	})
}

//export staunchGoFinalize
func staunchGoFinalize(userData unsafe.Pointer) {
	h := cgo.Handle(uintptr(userData))
	if s, ok := h.Value().(*eventSink); ok {
		s.close()
	}
	h.Delete()
}
