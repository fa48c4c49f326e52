package staunch

/*
#include "staunch.h"
*/
import "C"

import "unsafe"

// The library writes a pool's figures as Prometheus text itself, so every
// binding exports the same names; the Prometheus collector (module
// github.com/staunch-db/staunch/bindings/go/staunchprom) parses that text,
// and this module needs no Prometheus dependency.

// metricsCapStart is the first buffer for MetricsText: one host's text is
// about 8 KiB; the size that fitted last is remembered per pool.
const metricsCapStart = 16 << 10

// textTries bounds the calls of cText: a text that outgrows its buffer is
// asked for again with room to spare, so a second call is almost always the
// last.
const textTries = 4

// MetricsText returns the pool's figures as Prometheus text (exposition
// format 0.0.4): OpenTelemetry's db_client_connection_* and
// db_client_operation_duration_seconds as its Prometheus exporter names
// them, and staunch's own staunch_*, every series labelled with the pool's
// name (db_client_connection_pool_name) and the host (server_address,
// server_port). The first call turns on the timing of borrows and statements
// (the use_time and operation histograms count from then on; timings=on in
// the URL does so from the start). Never blocks. On a closed pool the error
// matches ErrClosed.
func (p *Pool) MetricsText() (string, error) {
	if p == nil {
		return "", closedError("metrics")
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return "", closedError("metrics")
	}
	hint := int(p.metricsCap.Load())
	if hint < metricsCapStart {
		hint = metricsCapStart
	}
	s, used, err := cText("metrics", hint, func(buf *C.char, cap C.size_t, n *C.size_t, cerr **C.staunch_error) C.staunch_status {
		return C.staunch_pool_metrics(p.p, buf, cap, n, cerr)
	})
	if used > hint {
		p.metricsCap.Store(int64(used))
	}
	return s, err
}

// Name is the pool's name: pool_name from the URL (URL-decoded), else
// "staunch-N". It is the db_client_connection_pool_name label of
// MetricsText. Read once, as the pool opens; still there after Close.
func (p *Pool) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// poolName reads the name from the library (as the pool opens).
func poolName(pool *C.staunch_pool) string {
	s, _, err := cText("name", 64, func(buf *C.char, cap C.size_t, n *C.size_t, cerr **C.staunch_error) C.staunch_status {
		return C.staunch_pool_name(pool, buf, cap, n, cerr)
	})
	if err != nil {
		return ""
	}
	return s
}

// cText calls fn, a C function that writes text by snprintf's rules (at most
// cap-1 bytes and a NUL, *n the whole length), into a buffer of capacity
// bytes, and again into a bigger one while the text did not fit, at most
// textTries times. It returns the text and the buffer size that held it.
func cText(op string, capacity int, fn func(*C.char, C.size_t, *C.size_t, **C.staunch_error) C.staunch_status) (string, int, error) {
	for try := 0; try < textTries; try++ {
		buf := make([]byte, capacity)
		var n C.size_t
		var cerr *C.staunch_error
		// buf holds no Go pointers: C may write into it for the call.
		st := fn((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(capacity), &n, &cerr)
		if st != C.STAUNCH_OK {
			return "", capacity, takeError(op, st, cerr)
		}
		if int(n) < capacity {
			return string(buf[:n]), capacity, nil
		}
		// Cut: the figures may grow between two calls, so ask with a
		// quarter more than this length.
		capacity = int(n) + int(n)/4 + 1024
	}
	return "", capacity, &Error{Status: StatusInternal, Op: op, Message: "the text kept outgrowing its buffer"}
}
