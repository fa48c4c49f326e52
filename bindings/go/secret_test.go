package staunch_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	staunch "github.com/staunch-db/staunch/bindings/go"
)

// Test_conf_secret_never_printed: passwords holding each of / ? # @ : % +
// and a space, raw and percent-encoded, in URLs well-formed and broken in
// each part. Every Config (as a value and a pointer, every verb), error,
// pool and event is printed, and neither half of the password may show.
func Test_conf_secret_never_printed(t *testing.T) {
	halves := [2]string{"Qv3lft", "Zr8rgt"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now: connects are refused at once
	encode := func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
		return b.String()
	}
	q := "connect_timeout=200ms&connection_timeout=300ms"
	var mu sync.Mutex
	var seen []string
	record := func(what string, texts ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range texts {
			seen = append(seen, what+": "+s)
		}
	}
	for _, c := range []string{"/", "?", "#", "@", ":", "%", "+", " "} {
		pw := halves[0] + c + halves[1]
		for _, form := range []string{pw, encode(pw)} {
			for _, u := range []struct{ part, url string }{
				{"none", fmt.Sprintf("mysql://app:%s@127.0.0.1:%d/db?%s", form, port, q)},
				{"scheme", fmt.Sprintf("mysq://app:%s@127.0.0.1:%d/db?%s", form, port, q)},
				{"scheme", fmt.Sprintf("app:%s@127.0.0.1:%d/db?%s", form, port, q)},
				{"host", fmt.Sprintf("mysql://app:%s@[127.0.0.1:%d/db?%s", form, port, q)},
				{"port", fmt.Sprintf("mysql://app:%s@127.0.0.1:99999/db?%s", form, q)},
				{"path", fmt.Sprintf("mysql://app:%s@127.0.0.1:%d/d%%zz?%s", form, port, q)},
				{"query knob", fmt.Sprintf("mysql://app:%s@127.0.0.1:%d/db?%s&max_size=x", form, port, q)},
				{"unknown knob", fmt.Sprintf("mysql://app:%s@127.0.0.1:%d/db?%s&bogus=1", form, port, q)},
			} {
				what := fmt.Sprintf("%q %s", c, u.part)
				cfg, err := staunch.ParseConfig(u.url)
				if err != nil {
					record(what, err.Error(), fmt.Sprintf("%v %+v %#v", err, err, err))
					continue
				}
				cfg.Knobs = map[string]string{"monitor_password": form}
				cfg.OnEvent = func(e staunch.Event) { record(what+" event", fmt.Sprintf("%v %+v", e, e)) }
				record(what, fmt.Sprintf("%v %+v %#v %s %q", cfg, cfg, cfg, cfg, cfg),
					fmt.Sprintf("%v %+v %#v", *cfg, *cfg, *cfg), cfg.String(), cfg.GoString())
				pool, err := staunch.NewWithConfig(context.Background(), cfg)
				if err != nil {
					record(what, err.Error(), fmt.Sprintf("%v %+v %#v", err, err, err))
					if u.part == "none" && (c != "%" || form != pw) {
						t.Errorf("%s: a well-formed URL must open: %v", what, err)
					}
					continue
				}
				if u.part != "none" {
					t.Errorf("%s: %s must not open", what, u.url)
				}
				_, err = pool.Acquire(context.Background()) // connection_timeout bounds it
				if err == nil {
					t.Fatalf("%s: nothing listens on %d", what, port)
				}
				record(what, err.Error(), fmt.Sprintf("%v %+v %#v", err, err, err), fmt.Sprintf("%v %+v", pool, pool.Stat()))
				pool.Close()
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("nothing was printed")
	}
	for _, s := range seen {
		for _, h := range halves {
			if strings.Contains(s, h) {
				t.Errorf("the password shows: %s", s)
			}
		}
	}
}
