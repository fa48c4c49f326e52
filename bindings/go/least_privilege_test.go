package staunch_test

// conf_least_privilege (shared/CONFORMANCE.md, issue #49): the pool over a
// primary + replica and over a Galera cluster as the test kit's `least`
// user (`ALL ON staunch_test.*` and nothing global: no SLAVE MONITOR), at
// the defaults, without a monitor_user. Writes and reads flow; exactly one
// event (EventOther, the core's MonitorPrivilegeMissing) names the missing
// privilege, without the password; a writer kill is followed within the
// bounds the Rust face keeps (tests/topology.rs
// conf_least_privilege_replication_kill_followed, tests/galera.rs
// conf_least_privilege_galera). Each test starts its own servers: the
// replication one ~5-10 s, the Galera one 10-60 s (three nodes).

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
)

// The Rust face's bounds: FOLLOW_BOUND (tests/topology.rs) and DETECT
// (tests/galera.rs) plus their SLACK; slack() comes on top for the race
// detector.
const (
	lpFollowBound = time.Second
	lpDetect      = time.Second
	lpRustSlack   = 1500 * time.Millisecond
)

type lpWrite struct {
	id   int64
	at   time.Time // when the INSERT returned
	port int64     // the server it ran on (@@port), 0 if unknown
	err  error
}

type lpRead struct {
	at   time.Time
	port int64
	err  error
}

// lpLoad writes (Acquire: the writer path) and reads (AcquireRead: the read
// path) through a pool, one at a time each, 20 ms apart, until halted.
type lpLoad struct {
	mu     sync.Mutex
	writes []lpWrite
	reads  []lpRead
	stop   chan struct{}
	wg     sync.WaitGroup
}

func startLPLoad(p *staunch.Pool, table string) *lpLoad {
	l := &lpLoad{stop: make(chan struct{})}
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		for id := int64(1); ; id++ {
			select {
			case <-l.stop:
				return
			default:
			}
			w := lpWrite{id: id}
			// Long enough for a write held through Galera's stall to
			// commit at its end rather than be cancelled.
			ctx, cancel := context.WithTimeout(bg, 10*time.Second)
			c, err := p.Acquire(ctx)
			if err == nil {
				if err = c.QueryRow(ctx, "SELECT @@port").Scan(&w.port); err == nil {
					_, err = c.Exec(ctx, "INSERT INTO "+table+" (id, port) VALUES (?, @@port)", id)
				}
				c.Release()
			}
			cancel()
			w.at, w.err = time.Now(), err
			l.mu.Lock()
			l.writes = append(l.writes, w)
			l.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	go func() {
		defer l.wg.Done()
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			var r lpRead
			var n int64
			ctx, cancel := context.WithTimeout(bg, 2*time.Second)
			c, err := p.AcquireRead(ctx)
			if err == nil {
				err = c.QueryRow(ctx, "SELECT @@port, COUNT(*) FROM "+table).Scan(&r.port, &n)
				c.Release()
			}
			cancel()
			r.at, r.err = time.Now(), err
			l.mu.Lock()
			l.reads = append(l.reads, r)
			l.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return l
}

// halt stops the load (idempotent) and waits for its goroutines.
func (l *lpLoad) halt() {
	l.mu.Lock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// firstAck is the first write acknowledged after t on a server port accepts.
func (l *lpLoad) firstAck(t time.Time, accept func(port int64) bool) (lpWrite, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.writes {
		if w.err == nil && w.at.After(t) && accept(w.port) {
			return w, true
		}
	}
	return lpWrite{}, false
}

func (l *lpLoad) acked(t time.Time, accept func(port int64) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.writes {
		if w.err == nil && w.at.After(t) && accept(w.port) {
			n++
		}
	}
	return n
}

func (l *lpLoad) readsOK(t time.Time, accept func(port int64) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reads {
		if r.err == nil && r.at.After(t) && accept(r.port) {
			n++
		}
	}
	return n
}

// summary counts writes and reads, and reads by port.
func (l *lpLoad) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	wf, rf := 0, 0
	for _, w := range l.writes {
		if w.err != nil {
			wf++
		}
	}
	byPort := map[int64]int{}
	for _, r := range l.reads {
		if r.err != nil {
			rf++
		} else {
			byPort[r.port]++
		}
	}
	var lastErr []string
	if n := len(l.writes); n > 0 && l.writes[n-1].err != nil {
		lastErr = append(lastErr, "last write: "+l.writes[n-1].err.Error())
	}
	if n := len(l.reads); n > 0 && l.reads[n-1].err != nil {
		lastErr = append(lastErr, "last read: "+l.reads[n-1].err.Error())
	}
	return fmt.Sprintf("writes %d (%d failed), reads %d (%d failed; by port %v)%s",
		len(l.writes), wf, len(l.reads), rf, byPort, strings.Join(append([]string{""}, lastErr...), "; "))
}

func anyPort(int64) bool { return true }

func onPort(p int64) func(int64) bool { return func(q int64) bool { return q == p } }

func notOnPort(p int64) func(int64) bool { return func(q int64) bool { return q != p } }

// lpEvents keeps a pool's events.
type lpEvents struct {
	mu   sync.Mutex
	list []staunch.Event
}

func (e *lpEvents) add(ev staunch.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

// privilege is the events that name the missing privilege.
func (e *lpEvents) privilege() []staunch.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []staunch.Event
	for _, ev := range e.list {
		if strings.Contains(ev.Message, "SLAVE MONITOR") {
			out = append(out, ev)
		}
	}
	return out
}

// noSecret fails the test if any event's message holds the password.
func (e *lpEvents) noSecret(t *testing.T, secret string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.list {
		if strings.Contains(ev.Message, secret) {
			t.Errorf("a %v event shows the password", ev.Kind)
		}
	}
}

func lpWaitFor(t *testing.T, what string, bound time.Duration, cond func() bool, show ...func() string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			detail := ""
			for _, f := range show {
				detail += "; " + f()
			}
			t.Fatalf("%s: not within %v%s", what, bound, detail)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lpOpen opens a pool as the ready line's `least` user over url, and
// creates table (id, port) through the writer path once a writer is known.
func lpOpen(t *testing.T, k *testkit.Kit, url, table string) (*staunch.Pool, *lpEvents) {
	t.Helper()
	least, ok := k.Ready.Users["least"]
	if !ok {
		t.Fatal("no `least` user in the test kit's ready line")
	}
	ev := &lpEvents{}
	p, err := staunch.NewWithConfig(bg, &staunch.Config{URL: testkit.AsUser(url, least), OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	var last error
	lpWaitFor(t, "CREATE TABLE as least", 15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(bg, 2*time.Second)
		defer cancel()
		_, last = p.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (id BIGINT PRIMARY KEY, port INT NOT NULL) ENGINE=InnoDB")
		return last == nil
	})
	return p, ev
}

// lpCheckTold checks the one event naming the missing privilege.
func lpCheckTold(t *testing.T, ev *lpEvents, words ...string) {
	t.Helper()
	lpWaitFor(t, "the missing privilege told", 10*time.Second, func() bool { return len(ev.privilege()) > 0 })
	told := ev.privilege()[0]
	t.Logf("EVENT (%v) %s", told.Kind, told.Message)
	if told.Kind != staunch.EventOther {
		t.Errorf("the privilege event is a %v event, not other", told.Kind)
	}
	for _, w := range words {
		if !strings.Contains(told.Message, w) {
			t.Errorf("%q not in the event: %s", w, told.Message)
		}
	}
}

// lpCheckAcked checks that every write acknowledged on one of ports after t
// is in table, read through the writer path.
func lpCheckAcked(t *testing.T, p *staunch.Pool, l *lpLoad, table string, t0 time.Time, accept func(int64) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	rows, err := p.Query(ctx, "SELECT id FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	have := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		have[id] = true
	}
	rows.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	missing := 0
	for _, w := range l.writes {
		if w.err == nil && w.at.After(t0) && accept(w.port) && !have[w.id] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d acknowledged writes missing from %s", missing, table)
	}
}

func Test_conf_least_privilege_replication(t *testing.T) {
	tAll := time.Now()
	k, err := testkit.Start("topology", "--replicas", "1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	up := time.Since(tAll)
	primary, replica := int64(k.Ready.Servers[0].Port), int64(k.Ready.Servers[1].Port)
	const table = "conf_lp_go"
	p, ev := lpOpen(t, k, k.Ready.TopologyURL, table)
	l := startLPLoad(p, table)
	t.Cleanup(l.halt)

	// Writes on the primary, reads through AcquireRead, with the monitor
	// unable to run SHOW SLAVE STATUS. The replica's lag is then unknown,
	// so at the defaults (max_replication_lag=30s) the writer takes the
	// reads (read_fallback; docs/topology.md, "The monitor's user").
	lpWaitFor(t, "writes on the primary, reads", 10*time.Second, func() bool {
		return l.acked(tAll, onPort(primary)) >= 20 && l.readsOK(tAll, anyPort) >= 10
	}, l.summary)
	lpCheckTold(t, ev, "user 'least'@'", "SHOW SLAVE STATUS", "SLAVE MONITOR",
		"GRANT SLAVE MONITOR ON *.* TO 'least'@'", "monitor_user=")

	// kill -9 of the primary, the promotion 1.5 s later (as the Rust face).
	faulted := time.Now()
	k.Must(t, "kill 0")
	time.Sleep(time.Until(faulted.Add(1500 * time.Millisecond)))
	k.Must(t, "promote 1")
	promoted := time.Now()
	lpWaitFor(t, "a write on the promoted replica", 15*time.Second, func() bool {
		_, ok := l.firstAck(promoted, onPort(replica))
		return ok
	}, l.summary)
	first, _ := l.firstAck(promoted, onPort(replica))
	lpWaitFor(t, "reads after the promotion", 5*time.Second, func() bool {
		return l.readsOK(promoted, anyPort) >= 5
	})
	// Still told once, however many probes ran since.
	time.Sleep(500 * time.Millisecond)
	l.halt()
	took := first.at.Sub(promoted)
	t.Logf("TIMELINE least privilege, replication: servers up in %v; promotion %v after the kill; first write on the new primary %v after the promotion; %s; whole test %v",
		up.Round(time.Millisecond), promoted.Sub(faulted).Round(time.Millisecond), took.Round(time.Millisecond), l.summary(), time.Since(tAll).Round(time.Millisecond))
	if bound := lpFollowBound + lpRustSlack + slack(); took > bound {
		t.Errorf("first write %v after the promotion (bound %v)", took, bound)
	}
	if n := l.acked(faulted, onPort(primary)); n != 0 {
		t.Errorf("%d writes acknowledged by the killed primary", n)
	}
	if n := len(ev.privilege()); n != 1 {
		t.Errorf("the missing privilege told %d times, not once", n)
	}
	ev.noSecret(t, k.Ready.Users["least"].Password)
	lpCheckAcked(t, p, l, table, promoted, onPort(replica))
}

func Test_conf_least_privilege_galera(t *testing.T) {
	tAll := time.Now()
	k, err := testkit.Start("galera")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	up := time.Since(tAll)
	const table = "conf_lp_go_galera"
	p, ev := lpOpen(t, k, k.Ready.URL, table)
	if _, err := p.Exec(bg, "CREATE TABLE IF NOT EXISTS conf_lp_go_stall (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	l := startLPLoad(p, table)
	t.Cleanup(l.halt)
	lpWaitFor(t, "writes and reads flowing", 10*time.Second, func() bool {
		return l.acked(tAll, anyPort) >= 20 && l.readsOK(tAll, anyPort) >= 10
	}, l.summary)
	lpCheckTold(t, ev, "SHOW SLAVE STATUS", "SLAVE MONITOR", "monitor_user")

	// The current writer, as the writer path sees it.
	var writer int64
	c, err := p.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	err = c.QueryRow(bg, "SELECT @@port").Scan(&writer)
	c.Release()
	if err != nil {
		t.Fatal(err)
	}
	w, survivor := -1, -1
	for _, s := range k.Ready.Servers {
		if int64(s.Port) == writer {
			w = s.Index
		} else if survivor < 0 {
			survivor = s.Index
		}
	}
	if w < 0 {
		t.Fatalf("the writer's port %d is none of the cluster's", writer)
	}

	// kill -9 of the writer. Galera's own stall: a root insert on a
	// survivor blocks (or fails) until the survivors have evicted it.
	faulted := time.Now()
	k.Must(t, fmt.Sprintf("kill %d", w))
	lpWaitFor(t, "the survivors commit again", 30*time.Second, func() bool {
		_, err := k.Do(fmt.Sprintf("sql %d INSERT INTO conf_lp_go_stall VALUES ()", survivor))
		return err == nil
	})
	stallEnd := time.Now()
	lpWaitFor(t, "a write on a survivor", 30*time.Second, func() bool {
		_, ok := l.firstAck(faulted, notOnPort(writer))
		return ok
	}, l.summary)
	first, _ := l.firstAck(faulted, notOnPort(writer))
	lpWaitFor(t, "reads after the kill", 5*time.Second, func() bool {
		return l.readsOK(first.at, anyPort) >= 5
	})
	time.Sleep(500 * time.Millisecond)
	l.halt()
	t.Logf("TIMELINE least privilege, Galera: cluster up in %v; writer (node %d) killed at 0: Galera's stall ends %v, first write on a survivor %v (%v after the stall); %s; whole test %v",
		up.Round(time.Millisecond), w, stallEnd.Sub(faulted).Round(time.Millisecond), first.at.Sub(faulted).Round(time.Millisecond),
		first.at.Sub(stallEnd).Round(time.Millisecond), l.summary(), time.Since(tAll).Round(time.Millisecond))
	if bound := lpDetect + lpRustSlack + slack(); first.at.Sub(stallEnd) > bound {
		t.Errorf("first write %v after the stall (bound %v)", first.at.Sub(stallEnd), bound)
	}
	if n := len(ev.privilege()); n != 1 {
		t.Errorf("the missing privilege told %d times, not once", n)
	}
	ev.noSecret(t, k.Ready.Users["least"].Password)
	lpCheckAcked(t, p, l, table, faulted, notOnPort(writer))
}
