package staunch

import (
	"syscall"
	"testing"
	"time"
)

func socketPair(t *testing.T) (int, int) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
	})
	return fds[0], fds[1]
}

// A goroutine parked by wait is woken when its socket becomes readable (and
// not before); after close, wait declines (the receive then waits in its
// thread).
func TestPollerWaitsForReadable(t *testing.T) {
	pl := newPoller(2)
	a, b := socketPair(t)
	for round := range 3 {
		start := time.Now()
		go func() {
			time.Sleep(50 * time.Millisecond)
			syscall.Write(b, []byte{byte(round)})
		}()
		if !pl.wait(7, a) {
			t.Fatal("wait declined")
		}
		if took := time.Since(start); took < 40*time.Millisecond {
			t.Fatalf("round %d: woken after %v, before the socket was readable", round, took)
		}
		buf := make([]byte, 8)
		if n, err := syscall.Read(a, buf); n != 1 || err != nil || buf[0] != byte(round) {
			t.Fatalf("round %d: read %d %v %v", round, n, err, buf[:n])
		}
	}
	if len(pl.conns) != 1 {
		t.Fatalf("%d epoll instances for one connection", len(pl.conns))
	}
	pl.close()
	if pl.wait(7, a) {
		t.Fatal("a closed poller waited")
	}
}

// The cache of epoll instances stays within its limit, dropping the least
// recently used (connections gone), and keeps the ones in use.
func TestPollerCacheIsBounded(t *testing.T) {
	pl := newPoller(1) // limit 64
	a, _ := socketPair(t)
	held := pl.take(1000, a)
	for id := uint64(1); id <= 300; id++ {
		cp := pl.take(id, a)
		if cp == nil {
			t.Fatal("take failed")
		}
		pl.put(cp)
		if len(pl.conns) > pl.limit {
			t.Fatalf("%d instances cached, limit %d", len(pl.conns), pl.limit)
		}
	}
	if pl.conns[300] == nil || pl.conns[1000] != held {
		t.Fatal("the newest or the busy instance was dropped")
	}
	if pl.conns[1] != nil {
		t.Fatal("the oldest instance was kept")
	}
	pl.put(held)
	pl.close()
	if len(pl.conns) != 0 {
		t.Fatalf("%d instances left after close", len(pl.conns))
	}
}

// A connection number the cache knows that comes with another fd gets an
// instance of its own: the wait follows the fd it is given, never the one
// the kept instance was made for. (The library never gives one number two
// sockets, so the same number with the same fd is the same socket: see
// poller.)
func TestPollerFollowsTheFdItIsGiven(t *testing.T) {
	pl := newPoller(2)
	defer pl.close()
	waitWoken := func(what string, fd, peer int) {
		t.Helper()
		go func() {
			time.Sleep(50 * time.Millisecond)
			syscall.Write(peer, []byte{1})
		}()
		done := make(chan bool, 1)
		go func() { done <- pl.wait(7, fd) }()
		select {
		case ok := <-done:
			if !ok {
				t.Fatalf("%s: wait declined", what)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: not woken within 5 s by its own socket", what)
		}
		buf := make([]byte, 8)
		if n, err := syscall.Read(fd, buf); n != 1 || err != nil {
			t.Fatalf("%s: read %d %v", what, n, err)
		}
	}
	first, firstPeer := socketPair(t)
	waitWoken("the first socket", first, firstPeer)

	// The same number on another, open socket.
	other, otherPeer := socketPair(t)
	waitWoken("another fd", other, otherPeer)

	// And back: the first socket again.
	waitWoken("the first socket again", first, firstPeer)
	if len(pl.conns) != 1 {
		t.Fatalf("%d epoll instances for one number", len(pl.conns))
	}
}
