package staunch_test

// Pool.SetMaxSize, SetMinIdle, Suspend and Resume against the test server,
// through a *sql.DB from OpenDB as an application resizes it.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	until := time.Now().Add(5*time.Second + slack())
	for !cond() {
		if time.Now().After(until) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func Test_resize_bad_sizes_name_the_knob(t *testing.T) {
	p, _ := openDB(t, "max_size=4&max_size_cap=8")
	for n, want := range map[int]string{0: "got 0", 9: "max_size_cap (8), got 9", -1: "max_size is out of range"} {
		err := p.SetMaxSize(n)
		var e *staunch.Error
		if !errors.As(err, &e) || e.Status != staunch.StatusInvalidConfig || !strings.Contains(err.Error(), want) {
			t.Fatalf("SetMaxSize(%d): %v", n, err)
		}
	}
	if err := p.SetMinIdle(5); err == nil || !strings.Contains(err.Error(), "min_idle (5) must not exceed max_size (4)") {
		t.Fatalf("SetMinIdle(5): %v", err)
	}
	if got := p.Stat().MaxOpenConnections; got != 4 {
		t.Fatalf("max size changed to %d", got)
	}
}

func Test_resize_shrink_while_borrowed_grow_while_waiting(t *testing.T) {
	p, db := openDB(t, "max_size=4")
	var held []*staunch.Conn
	for range 4 {
		held = append(held, acquire(t, p))
	}
	if err := p.SetMaxSize(2); err != nil {
		t.Fatal(err)
	}
	for i, c := range held {
		var n int
		if err := c.QueryRow(bg, "SELECT ?", i).Scan(&n); err != nil || n != i {
			t.Fatalf("borrowed connection %d after the shrink: %d %v", i, n, err)
		}
		c.Release()
	}
	if s := p.Stat(); s.OpenConnections != 2 || s.ClosedEvicted != 2 || s.MaxOpenConnections != 2 {
		t.Fatalf("after the returns: %+v", *s)
	}

	// Grow while two database/sql callers wait behind one borrowed connection.
	if err := p.SetMaxSize(1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the idle surplus closes", func() bool { return p.Stat().OpenConnections == 1 })
	blocker := acquire(t, p)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int
			errs <- db.QueryRow("SELECT 7").Scan(&n)
		}()
	}
	eventually(t, "two callers wait", func() bool { return p.Stat().Waiting == 2 })
	if err := p.SetMaxSize(3); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a waiting caller: %v", err)
		}
	}
	// Served while the blocker is held: the pool grew (to 2 or 3: a caller
	// done at once may hand its connection to the other first).
	if s := p.Stat(); s.OpenConnections < 2 || s.OpenConnections > 3 {
		t.Fatalf("after the grow: %+v", *s)
	}
	blocker.Release()
}

func Test_resize_suspend_holds_a_borrow_until_resume(t *testing.T) {
	p, db := openDB(t, "max_size=2")
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	if err := p.Suspend(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, staunch.ErrPoolExhausted) {
		t.Fatalf("a borrow from a suspended pool: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Ping() }()
	select {
	case err := <-done:
		t.Fatalf("served while suspended: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second + slack()):
		t.Fatal("not served after resume")
	}
}
