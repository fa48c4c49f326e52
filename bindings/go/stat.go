package staunch

/*
#include "staunch.h"
*/
import "C"

import (
	"time"
	"unsafe"
)

// Stat is a snapshot of a pool: the fields of database/sql's DBStats, more of
// staunch's own, and the methods of pgxpool's Stat. Gauges (what the pool
// holds now) are read one after the other without stopping the pool, so
// under load they may not add up exactly.
type Stat struct {
	// database/sql's DBStats fields.
	MaxOpenConnections int           // max_size
	OpenConnections    int           // gauge: connections open (in use, idle, or held by a pool thread)
	InUse              int           // gauge: connections borrowed
	Idle               int           // gauge: connections ready to hand out
	WaitCount          int64         // counter: acquires that found no idle connection and waited
	WaitDuration       time.Duration // counter: the time those acquires waited in total
	MaxIdleClosed      int64         // always 0: staunch has no "max idle" limit
	MaxIdleTimeClosed  int64         // counter: closed after idle_timeout
	MaxLifetimeClosed  int64         // counter: closed at max_lifetime

	// staunch's own.
	Waiting           int64 // gauge: goroutines blocked in Acquire
	Connecting        int64 // gauge: connects running now
	PendingCreates    int64 // gauge: connection requests queued or being connected
	Reserved          int64 // gauge: connections held by pool threads (keepalive, retirement)
	Acquired          int64 // counter: successful acquires
	AcquireTimeouts   int64 // counter: acquires that timed out
	AcquiresCancelled int64 // counter: acquires cancelled through their context
	Created           int64 // counter: connections created
	ClosedBroken      int64 // counter: connections closed as broken
	ClosedEvicted     int64 // counter: closed by SoftEvict, or above a lowered SetMaxSize
	ClosedPoolClosed  int64 // counter: closed because the pool closed
	ConnectFailures   int64 // counter: failed connect attempts
	AbandonedConnects int64 // counter: connects cut off at connect_timeout
	Validations       int64 // counter: failed validations (on borrow or keepalive)
	Keepalives        int64 // counter: keepalive checks run
	LeaksReported     int64 // counter: borrowed connections reported as possible leaks
	RollbacksOnReturn int64 // counter: transactions rolled back on release
	ResetsOnReturn    int64 // counter: sessions reset on release because they changed
	StatementsCut     int64 // counter: statements cut off by the client (connection closed)
	Violations        int64 // counter: broken internal invariants (must be 0)
	AcquireP50        time.Duration
	AcquireP99        time.Duration
	AcquireMax        time.Duration
	DroppedEvents     int64 // events OnEvent fell too far behind to receive
}

// pgxpool's Stat methods.

// AcquireCount is the number of successful acquires.
func (s *Stat) AcquireCount() int64 { return s.Acquired }

// AcquireDuration is the total time acquires waited for a connection.
func (s *Stat) AcquireDuration() time.Duration { return s.WaitDuration }

// AcquiredConns is the number of connections borrowed now.
func (s *Stat) AcquiredConns() int32 { return int32(s.InUse) }

// CanceledAcquireCount is the number of acquires cancelled by their context.
func (s *Stat) CanceledAcquireCount() int64 { return s.AcquiresCancelled }

// ConstructingConns is the number of connects running now.
func (s *Stat) ConstructingConns() int32 { return int32(s.Connecting) }

// EmptyAcquireCount is the number of successful acquires that had to wait.
func (s *Stat) EmptyAcquireCount() int64 { return s.WaitCount }

// EmptyAcquireWaitTime is the total time those acquires waited.
func (s *Stat) EmptyAcquireWaitTime() time.Duration { return s.WaitDuration }

// IdleConns is the number of idle connections.
func (s *Stat) IdleConns() int32 { return int32(s.Idle) }

// MaxConns is the most connections the pool opens.
func (s *Stat) MaxConns() int32 { return int32(s.MaxOpenConnections) }

// TotalConns is the number of connections open.
func (s *Stat) TotalConns() int32 { return int32(s.OpenConnections) }

// NewConnsCount is the number of connections created.
func (s *Stat) NewConnsCount() int64 { return s.Created }

// MaxLifetimeDestroyCount is the number of connections closed at max_lifetime.
func (s *Stat) MaxLifetimeDestroyCount() int64 { return s.MaxLifetimeClosed }

// MaxIdleDestroyCount is the number of connections closed after idle_timeout.
func (s *Stat) MaxIdleDestroyCount() int64 { return s.MaxIdleTimeClosed }

// Stat returns a snapshot of the pool's gauges and counters (the last one
// before Close, once closed). Never blocks.
func (p *Pool) Stat() *Stat {
	if p == nil {
		return &Stat{}
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		if p.final != nil {
			s := *p.final
			return &s
		}
		return &Stat{}
	}
	return p.statLocked()
}

func (p *Pool) statLocked() *Stat {
	var cs C.staunch_stats
	cs.size = C.size_t(unsafe.Sizeof(cs))
	if st := C.staunch_pool_stats(p.p, &cs, nil); st != C.STAUNCH_OK {
		return &Stat{}
	}
	us := func(v C.uint64_t) time.Duration { return time.Duration(v) * time.Microsecond }
	s := &Stat{
		MaxOpenConnections: int(cs.max_size),
		OpenConnections:    int(cs.total),
		InUse:              int(cs.active),
		Idle:               int(cs.idle),
		WaitCount:          int64(cs.acquires_waited),
		WaitDuration:       us(cs.acquire_wait_us),
		MaxIdleTimeClosed:  int64(cs.closed_idle_timeout),
		MaxLifetimeClosed:  int64(cs.closed_max_lifetime),
		Waiting:            int64(cs.waiting),
		Connecting:         int64(cs.connecting),
		PendingCreates:     int64(cs.pending_creates),
		Reserved:           int64(cs.reserved),
		Acquired:           int64(cs.acquired),
		AcquireTimeouts:    int64(cs.acquire_timeouts),
		AcquiresCancelled:  int64(cs.acquires_cancelled),
		Created:            int64(cs.created),
		ClosedBroken:       int64(cs.closed_broken),
		ClosedEvicted:      int64(cs.closed_evicted),
		ClosedPoolClosed:   int64(cs.closed_pool_closed),
		ConnectFailures:    int64(cs.connect_failures),
		AbandonedConnects:  int64(cs.abandoned_connects),
		Validations:        int64(cs.validation_failures),
		Keepalives:         int64(cs.keepalives),
		LeaksReported:      int64(cs.leaks_reported),
		RollbacksOnReturn:  int64(cs.rollbacks_on_return),
		ResetsOnReturn:     int64(cs.resets_on_return),
		StatementsCut:      int64(cs.statements_cut),
		Violations:         int64(cs.violations),
		AcquireP50:         us(cs.acquire_p50_us),
		AcquireP99:         us(cs.acquire_p99_us),
		AcquireMax:         us(cs.acquire_max_us),
	}
	if p.sink != nil {
		s.DroppedEvents = int64(p.sink.dropped.Load())
	}
	return s
}
