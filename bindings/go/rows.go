package staunch

/*
#include <stdlib.h>
#include "staunch.h"
staunch_status go_fetch_ready(staunch_rows *rows, staunch_value *values,
                              size_t capacity, size_t *n_rows, bool *waits,
                              int *fd, uint64_t *id, staunch_error **err);
*/
import "C"

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"time"
	"unsafe"
)

// ErrNoRows is what Row.Scan returns when the query gave no row: the same
// value as database/sql's, so errors.Is(err, sql.ErrNoRows) works too.
var ErrNoRows = sql.ErrNoRows

// Column types (ColumnType.Kind): which Go type a column's values come as.
const (
	KindNull     = C.STAUNCH_COLUMN_NULL     // always NULL
	KindInt      = C.STAUNCH_COLUMN_INT      // int64
	KindUint     = C.STAUNCH_COLUMN_UINT     // uint64
	KindDouble   = C.STAUNCH_COLUMN_DOUBLE   // float64
	KindDecimal  = C.STAUNCH_COLUMN_DECIMAL  // string ("12.50")
	KindText     = C.STAUNCH_COLUMN_TEXT     // string
	KindBytes    = C.STAUNCH_COLUMN_BYTES    // []byte
	KindDate     = C.STAUNCH_COLUMN_DATE     // time.Time (UTC, midnight)
	KindDateTime = C.STAUNCH_COLUMN_DATETIME // time.Time (UTC)
	KindTime     = C.STAUNCH_COLUMN_TIME     // time.Duration
)

// cValue names the C value type for the files without cgo.
type cValue = C.staunch_value

// rowsPerFetch bounds how many rows one staunch_rows_fetch copies out;
// a streaming answer's first fetch takes firstStreamBatch, each full one
// after it four times more, up to rowsPerFetch.
const (
	rowsPerFetch     = 256
	firstStreamBatch = 4
)

// Rows is the answer to a query, read whole into memory by staunch; Next
// moves through it in batches (staunch_rows_fetch, one C call per 256 rows).
// Close it (reading to the end closes it too). Not for concurrent use.
type Rows struct {
	r    *C.staunch_rows
	ncol int
	// The fetch buffer, batch * ncol values, in Go memory (no malloc and
	// free, two cgo calls each answer): staunch_rows_fetch fills it during
	// the call and keeps nothing of it; the values' pointers point into the
	// row set's C memory, never into Go's.
	vals  []C.staunch_value
	batch int // rows the buffer holds
	n     int // rows in the buffer now
	cur   int // current row in the buffer, -1 before the first
	err   error
	cols  []string
	types []ColumnType
	// A streaming answer read under a context that can end: the context,
	// and the Conn whose statement it is (see call and giveUp). Nil
	// otherwise: a buffered row set never blocks.
	ctx  context.Context
	conn *Conn
	// A streaming answer (STAUNCH_QUERY_STREAM): its row count is not
	// known until its rows are read.
	stream bool
	// Pool.QueryStream's connection, released when the rows close.
	owner *Conn
	// A streamed answer's trace, ended as the rows close (nil: none). A
	// pointer, so that the Rows of every other answer stay small.
	trace *queryTrace
}

func newRows(r *C.staunch_rows) *Rows {
	rs := &Rows{r: r, ncol: int(C.staunch_rows_column_count(r)), cur: -1}
	runtime.SetFinalizer(rs, (*Rows).Close)
	return rs
}

// Close frees the rows. Idempotent; never fails. The rest of a streaming
// answer is read off first (as go-sql-driver does), unless its context has
// ended: then it is given up (see giveUp).
func (rs *Rows) Close() {
	if rs == nil {
		return
	}
	if rs.r != nil && rs.ctx != nil && rs.ctx.Err() != nil {
		rs.giveUp(nil)
	} else {
		if rs.r != nil {
			C.staunch_rows_free(rs.r)
			rs.r = nil
		}
		rs.vals = nil
		rs.n, rs.cur = 0, -1
		runtime.SetFinalizer(rs, nil)
	}
	if tr := rs.trace; tr != nil {
		rs.trace = nil
		tr.end(Result{}, rs.err)
	}
	if c := rs.owner; c != nil {
		rs.owner = nil
		c.Release() // after a give-up, the connection is closed (see giveUp)
	}
}

// Err is the error met while reading, if any.
func (rs *Rows) Err() error {
	if rs == nil {
		return invalid("rows", "nil *Rows")
	}
	return rs.err
}

// endErr is what a reader that found no more rows (or result sets) reports:
// the error that ended them, if any, else atEnd.
func (rs *Rows) endErr(atEnd error) error {
	if rs.err != nil {
		return rs.err
	}
	return atEnd
}

// Next moves to the next row; false at the end (the rows are then closed)
// or on an error (see Err).
func (rs *Rows) Next() bool {
	if rs == nil || rs.r == nil {
		return false
	}
	if rs.cur+1 < rs.n {
		rs.cur++
		return true
	}
	if rs.ncol == 0 {
		rs.Close()
		return false
	}
	if rs.vals == nil {
		rs.batch = rowsPerFetch
		var total C.uint64_t
		if rs.stream || C.staunch_rows_row_count(rs.r, &total, nil) != C.STAUNCH_OK {
			// Streaming: the count is not known yet. A small buffer
			// first (most answers are a few rows), larger as they come.
			rs.batch = firstStreamBatch
		} else if uint64(total) < rowsPerFetch {
			rs.batch = max(int(total), 1)
		}
		rs.vals = valueBuffer(rs.batch * rs.ncol)
	} else if rs.n == rs.batch && rs.batch < rowsPerFetch {
		// The last fetch filled the buffer: more rows are likely.
		rs.batch = min(rs.batch*4, rowsPerFetch)
		rs.vals = valueBuffer(rs.batch * rs.ncol)
	}
	var got C.size_t
	r, buf, capacity := rs.r, &rs.vals[0], C.size_t(rs.batch*rs.ncol)
	var st C.staunch_status
	var cerr *C.staunch_error
	var err error
	waits := C.bool(true)
	if rs.ctx != nil && rs.ctx.Err() == nil {
		// What has arrived is read here; a wait for more parks in the
		// netpoller on the rows' socket (see waitReady); only a wait that
		// cannot, or that lasts, goes to call's goroutine.
		var fd C.int
		var id C.uint64_t
		for {
			st = C.go_fetch_ready(r, buf, capacity, &got, &waits, &fd, &id, &cerr)
			if st != C.STAUNCH_OK || got > 0 || !bool(waits) || fd < 0 || !rs.waitReady(uint64(id), int(fd)) {
				break
			}
		}
		// A context that ended meanwhile: call gives the rows up.
	}
	if waits && got == 0 && st == C.STAUNCH_OK {
		if rs.ctx == nil {
			// A buffered answer, or one no context can end: the call
			// itself, without the closure (and its allocation) that a
			// fetch a context can cut short needs.
			st = C.staunch_rows_fetch(r, buf, capacity, &got, &cerr)
		} else {
			st, got, cerr, err = rs.fetchCancellable(r, buf, capacity)
		}
	}
	if err != nil {
		rs.err = err
		return false
	}
	if st != C.STAUNCH_OK {
		rs.err = takeError("next", st, cerr)
		rs.Close()
		return false
	}
	if got == 0 {
		rs.Close()
		return false
	}
	rs.n, rs.cur = int(got), 0
	return true
}

// fetchCancellable is staunch_rows_fetch through call (the context can end
// the wait); got is read only once the call is over.
func (rs *Rows) fetchCancellable(r *C.staunch_rows, buf *C.staunch_value, capacity C.size_t) (C.staunch_status, C.size_t, *C.staunch_error, error) {
	var got C.size_t
	st, cerr, err := rs.call("next", func(cerr **C.staunch_error) C.staunch_status {
		return C.staunch_rows_fetch(r, buf, capacity, &got, cerr)
	})
	if err != nil {
		return st, 0, cerr, err
	}
	return st, got, cerr, nil
}

// readyWait bounds a wait for a streamed row in the netpoller: a wait on
// the socket is not one the library bounds (its statement clock runs only
// inside its calls), so past this the wait goes on in staunch_rows_fetch,
// which cuts off a server that stopped answering.
const readyWait = time.Second

// waitReady parks the goroutine in the netpoller until the rows' socket fd
// (of connection id) is readable, the context ends, or readyWait passes;
// true only for the first. False also when there is no poller to wait in.
func (rs *Rows) waitReady(id uint64, fd int) bool {
	if rs.conn == nil || rs.conn.pool == nil {
		return false
	}
	pl := rs.conn.pool.poller()
	return pl != nil && pl.waitCtx(rs.ctx, id, fd, readyWait)
}

// valueBuffer makes a fetch buffer of n values in memory the garbage
// collector knows holds no Go pointer (it is allocated as words): cgo's
// pointer check of each fetch call then stops at once, where for a
// []C.staunch_value, whose ptr field is a pointer, it walked the whole
// buffer (96 bytes a value, 1,024 values a fetch) looking for Go pointers.
// The values' pointers are C's (into the row set), which the collector
// must not follow anyway.
func valueBuffer(n int) []C.staunch_value {
	const words = unsafe.Sizeof(C.staunch_value{}) / 8
	// Whole words, aligned as words (does not compile otherwise).
	_ = [1]struct{}{}[unsafe.Sizeof(C.staunch_value{})%8+unsafe.Alignof(C.staunch_value{})/16]
	b := make([]uint64, n*int(words))
	return unsafe.Slice((*C.staunch_value)(unsafe.Pointer(&b[0])), n)
}

// assignPtr assigns v to *d: nil for NULL, else a new T holding it.
func assignPtr[T any](d **T, v *C.staunch_value) error {
	if v._type == C.STAUNCH_COLUMN_NULL {
		*d = nil
		return nil
	}
	x := new(T)
	if err := assign(x, v); err != nil {
		return err
	}
	*d = x
	return nil
}

// callResult is what a blocking call on a row set returned.
type callResult struct {
	st   C.staunch_status
	cerr *C.staunch_error
}

// call runs f, a call on the row set that may block (a streaming answer
// waits for its rows; Next first reads what has arrived without it, see
// staunch_rows_fetch_ready). Without a context that can end, here. With one, on
// a goroutine of its own, so that when the context ends first the caller
// gets the context's error at once, whatever the server does (slow, or
// frozen): the rows are then given up (giveUp) and f finishes in the
// background. err is that error; otherwise f's status and error object.
func (rs *Rows) call(op string, f func(cerr **C.staunch_error) C.staunch_status) (C.staunch_status, *C.staunch_error, error) {
	if rs.ctx == nil {
		var cerr *C.staunch_error
		st := f(&cerr)
		return st, cerr, nil
	}
	ctx := rs.ctx
	if ctx.Err() != nil {
		rs.giveUp(nil)
		return 0, nil, givenUpError(op, ctx)
	}
	done := make(chan callResult, 1)
	go func() {
		var cerr *C.staunch_error
		st := f(&cerr)
		done <- callResult{st, cerr}
	}()
	select {
	case r := <-done:
		return r.st, r.cerr, nil
	case <-ctx.Done():
		rs.giveUp(done)
		return 0, nil, givenUpError(op, ctx)
	}
}

func givenUpError(op string, ctx context.Context) error {
	return &Error{Status: StatusCancelled, Op: op, ctx: ctx.Err(),
		Message: "the context ended while the rows were awaited: the rest of the answer is given up, the statement cancelled, and the connection will be closed"}
}

// giveUp abandons a streaming answer whose context ended: the rows are
// emptied now, and a goroutine of their Conn's (Conn.adopt) ends the rest:
// it cancels the statement on the server (KILL QUERY, which stops a slow
// server's rows, so the call in flight returns; a frozen server cannot
// answer it, and the statement's liveness bound then cuts the connection),
// waits for the call in flight (done, if any), frees the row set, and has
// the connection closed instead of returned to the pool: its session was
// left mid-answer. Everything it waits for is bounded (connect_timeout + 1
// s for the kill; the statement's bounds for the rest).
func (rs *Rows) giveUp(done <-chan callResult) {
	r := rs.r
	rs.r, rs.vals = nil, nil
	rs.n, rs.cur = 0, -1
	rs.ctx = nil
	runtime.SetFinalizer(rs, nil)
	rs.conn.adopt(func(h *C.staunch_conn) {
		if h != nil {
			C.staunch_conn_cancel(h, nil, nil)
		}
		if done != nil {
			if res := <-done; res.cerr != nil {
				C.staunch_error_free(res.cerr)
			}
		}
		C.staunch_rows_free(r)
	})
}

// NextResultSet moves to the next result set of a statement that returned
// several (a CALL, multi-statement text); false after the last.
func (rs *Rows) NextResultSet() bool {
	if rs == nil || rs.r == nil {
		return false
	}
	var has C.bool
	r := rs.r
	st, cerr, err := rs.call("next result set", func(cerr **C.staunch_error) C.staunch_status {
		return C.staunch_rows_next_result(r, &has, cerr)
	})
	if err != nil {
		rs.err = err
		return false
	}
	if st != C.STAUNCH_OK {
		rs.err = takeError("next result set", st, cerr)
		return false
	}
	if !has {
		return false
	}
	rs.vals = nil
	rs.ncol = int(C.staunch_rows_column_count(rs.r))
	rs.n, rs.cur, rs.cols, rs.types = 0, -1, nil, nil
	return true
}

// Columns are the column names (aliases where the query gave them).
func (rs *Rows) Columns() []string {
	if rs == nil {
		return nil
	}
	if rs.cols == nil && rs.r != nil {
		rs.cols = make([]string, rs.ncol)
		for i := range rs.cols {
			var name *C.char
			var n C.size_t
			if C.staunch_rows_column_name(rs.r, C.size_t(i), &name, &n, nil) == C.STAUNCH_OK {
				rs.cols[i] = C.GoStringN(name, C.int(n))
			}
		}
	}
	return rs.cols
}

// ColumnType is what the server says of one result column.
type ColumnType struct {
	Name     string
	Kind     uint32 // a Kind* constant: which Go type the values come as
	TypeCode uint32 // MySQL's enum_field_types
	Flags    uint32 // MySQL column flags (1 NOT NULL, 32 UNSIGNED, 128 BINARY, ...)
	Charset  uint32
	Length   uint32
	Decimals uint32
	Table    string
	OrgName  string
	OrgTable string
	Schema   string
}

// Nullable says whether the column may hold NULL.
func (ct ColumnType) Nullable() bool { return ct.Flags&1 == 0 }

// Unsigned says whether an integer column is UNSIGNED.
func (ct ColumnType) Unsigned() bool { return ct.Flags&32 != 0 }

// DatabaseTypeName is the SQL type's name ("BIGINT", "VARCHAR", ...).
func (ct ColumnType) DatabaseTypeName() string {
	name := typeNames[ct.TypeCode]
	switch {
	case name == "":
		name = "UNKNOWN"
	case ct.TypeCode >= 249 && ct.TypeCode <= 254 && ct.Charset == 63:
		name = binaryNames[ct.TypeCode]
	}
	if ct.Unsigned() && ct.Kind == KindUint {
		return "UNSIGNED " + name
	}
	return name
}

var typeNames = map[uint32]string{
	0: "DECIMAL", 1: "TINYINT", 2: "SMALLINT", 3: "INT", 4: "FLOAT", 5: "DOUBLE", 6: "NULL",
	7: "TIMESTAMP", 8: "BIGINT", 9: "MEDIUMINT", 10: "DATE", 11: "TIME", 12: "DATETIME",
	13: "YEAR", 15: "VARCHAR", 16: "BIT", 245: "JSON", 246: "DECIMAL", 247: "ENUM", 248: "SET",
	249: "TEXT", 250: "TEXT", 251: "TEXT", 252: "TEXT", 253: "VARCHAR", 254: "CHAR", 255: "GEOMETRY",
}

var binaryNames = map[uint32]string{249: "BLOB", 250: "BLOB", 251: "BLOB", 252: "BLOB", 253: "VARBINARY", 254: "BINARY"}

// ScanType is the Go type the column's non-NULL values come as.
func (ct ColumnType) ScanType() reflect.Type {
	switch ct.Kind {
	case KindInt:
		return reflect.TypeFor[int64]()
	case KindUint:
		return reflect.TypeFor[uint64]()
	case KindDouble:
		return reflect.TypeFor[float64]()
	case KindDecimal, KindText:
		return reflect.TypeFor[string]()
	case KindBytes:
		return reflect.TypeFor[[]byte]()
	case KindDate, KindDateTime:
		return reflect.TypeFor[time.Time]()
	case KindTime:
		return reflect.TypeFor[time.Duration]()
	}
	return reflect.TypeFor[any]()
}

// ColumnTypes describe the columns of the current result set.
func (rs *Rows) ColumnTypes() []ColumnType {
	if rs == nil {
		return nil
	}
	if rs.types == nil && rs.r != nil {
		rs.types = make([]ColumnType, rs.ncol)
		for i := range rs.types {
			var ci C.staunch_column_info
			ci.size = C.size_t(unsafe.Sizeof(ci))
			if C.staunch_rows_column_info(rs.r, C.size_t(i), &ci, nil) != C.STAUNCH_OK {
				continue
			}
			rs.types[i] = ColumnType{
				Name: C.GoStringN(ci.name, C.int(ci.name_len)), Kind: uint32(ci.column_type),
				TypeCode: uint32(ci.type_code), Flags: uint32(ci.flags), Charset: uint32(ci.charset),
				Length: uint32(ci.length), Decimals: uint32(ci.decimals),
				Table: C.GoStringN(ci.table, C.int(ci.table_len)), OrgName: C.GoStringN(ci.org_name, C.int(ci.org_name_len)),
				OrgTable: C.GoStringN(ci.org_table, C.int(ci.org_table_len)), Schema: C.GoStringN(ci.schema, C.int(ci.schema_len)),
			}
		}
	}
	return rs.types
}

func (rs *Rows) row() ([]C.staunch_value, error) {
	if rs == nil {
		return nil, invalid("scan", "nil *Rows")
	}
	if rs.cur < 0 || rs.cur >= rs.n || rs.vals == nil {
		return nil, &Error{Status: StatusNoRow, Op: "scan", Message: "no current row: call Next first (and check that it returned true)"}
	}
	return rs.vals[rs.cur*rs.ncol : (rs.cur+1)*rs.ncol], nil
}

// Scan copies the current row's columns into dest, one pointer per column:
// *int (and sized, unsigned), *float64/32, *string, *[]byte, *time.Time,
// *time.Duration (TIME), *bool, an sql.Scanner (sql.NullInt64, ...), a
// pointer to one of those pointers (nil for NULL), or *any. NULL into a
// destination that cannot hold it is an error; so is a value that does not
// fit.
func (rs *Rows) Scan(dest ...any) error {
	row, err := rs.row()
	if err != nil {
		return err
	}
	if len(dest) != rs.ncol {
		return invalid("scan", "%d destinations for %d columns", len(dest), rs.ncol)
	}
	for i := range dest {
		if err := assign(dest[i], &row[i]); err != nil {
			return &Error{Status: StatusWrongType, Op: "scan", Message: fmt.Sprintf("column %d (%s): %v", i+1, rs.colName(i), err)}
		}
	}
	return nil
}

func (rs *Rows) colName(i int) string {
	if c := rs.Columns(); i < len(c) {
		return c[i]
	}
	return "?"
}

// Values returns the current row's values as Go values (nil, int64, uint64,
// float64, string, []byte, time.Time, time.Duration).
func (rs *Rows) Values() ([]any, error) {
	row, err := rs.row()
	if err != nil {
		return nil, err
	}
	out := make([]any, len(row))
	for i := range row {
		out[i] = goValue(&row[i])
	}
	return out, nil
}

// Row is the answer of QueryRow.
type Row struct {
	rows *Rows
	err  error
}

// Scan reads the first row into dest (see Rows.Scan) and closes the rows;
// ErrNoRows if there is none.
func (r *Row) Scan(dest ...any) error {
	if r == nil {
		return invalid("scan", "nil *Row")
	}
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		return r.rows.endErr(ErrNoRows)
	}
	return r.rows.Scan(dest...)
}

// Conversions from one staunch_value.

func vtext(v *C.staunch_value) string { return C.GoStringN(v.ptr, C.int(v.len)) }

func vbytes(v *C.staunch_value) []byte {
	if v.len == 0 {
		return []byte{}
	}
	return C.GoBytes(unsafe.Pointer(v.ptr), C.int(v.len))
}

// aliasBytes gives the bytes of a TEXT, DECIMAL or BYTES value without a
// copy: a slice over C memory, valid until the next fetch (database/sql's
// driver.Rows contract; see sqlValue).
func aliasBytes(v *C.staunch_value) ([]byte, bool) {
	switch v._type {
	case C.STAUNCH_COLUMN_TEXT, C.STAUNCH_COLUMN_DECIMAL, C.STAUNCH_COLUMN_BYTES:
		if v.len == 0 || v.ptr == nil {
			return []byte{}, true
		}
		return unsafe.Slice((*byte)(unsafe.Pointer(v.ptr)), int(v.len)), true
	}
	return nil, false
}

func vtime(v *C.staunch_value) time.Time { return vtimeIn(v, time.UTC) }

// vtimeIn is a DATE or DATETIME value as a time in loc; the zero date
// ('0000-00-00', '0000-00-00 00:00:00') is time.Time{}, as go-sql-driver
// gives it.
func vtimeIn(v *C.staunch_value, loc *time.Location) time.Time {
	d := v.datetime
	if d.year == 0 && d.month == 0 && d.day == 0 && d.hour == 0 && d.minute == 0 && d.second == 0 && d.microsecond == 0 {
		return time.Time{}
	}
	return time.Date(int(d.year), time.Month(d.month), int(d.day), int(d.hour), int(d.minute),
		int(d.second), int(d.microsecond)*1000, loc)
}

func isDateValue(v *C.staunch_value) bool {
	return v._type == C.STAUNCH_COLUMN_DATE || v._type == C.STAUNCH_COLUMN_DATETIME
}

// dateText is a DATE or DATETIME value as the server writes it (what
// go-sql-driver gives without parseTime): YYYY-MM-DD, or YYYY-MM-DD
// HH:MM:SS with as many fraction digits as the column's decimals (1-6).
func dateText(v *C.staunch_value, decimals uint32) []byte {
	d := v.datetime
	b := fmt.Appendf(nil, "%04d-%02d-%02d", d.year, d.month, d.day)
	if v._type == C.STAUNCH_COLUMN_DATE {
		return b
	}
	b = fmt.Appendf(b, " %02d:%02d:%02d", d.hour, d.minute, d.second)
	if decimals > 0 && decimals <= 6 {
		frac := fmt.Sprintf("%06d", d.microsecond)
		b = append(b, '.')
		b = append(b, frac[:decimals]...)
	}
	return b
}

func vduration(v *C.staunch_value) time.Duration {
	t := v.time
	d := (time.Duration(t.days)*24+time.Duration(t.hours))*time.Hour + time.Duration(t.minutes)*time.Minute +
		time.Duration(t.seconds)*time.Second + time.Duration(t.microseconds)*time.Microsecond
	if t.negative {
		d = -d
	}
	return d
}

// timeText is TIME as MySQL writes it: [-]HHH:MM:SS[.ffffff].
func timeText(v *C.staunch_value) string {
	t := v.time
	s := fmt.Sprintf("%02d:%02d:%02d", uint64(t.days)*24+uint64(t.hours), t.minutes, t.seconds)
	if t.microseconds != 0 {
		s += fmt.Sprintf(".%06d", t.microseconds)
	}
	if t.negative {
		s = "-" + s
	}
	return s
}

func goValue(v *C.staunch_value) any {
	switch v._type {
	case C.STAUNCH_COLUMN_INT:
		return int64(v.i64)
	case C.STAUNCH_COLUMN_UINT:
		return uint64(v.u64)
	case C.STAUNCH_COLUMN_DOUBLE:
		return float64(v.f64)
	case C.STAUNCH_COLUMN_DECIMAL, C.STAUNCH_COLUMN_TEXT:
		return vtext(v)
	case C.STAUNCH_COLUMN_BYTES:
		return vbytes(v)
	case C.STAUNCH_COLUMN_DATE, C.STAUNCH_COLUMN_DATETIME:
		return vtime(v)
	case C.STAUNCH_COLUMN_TIME:
		return vduration(v)
	}
	return nil
}

// asString is a value's text form.
func asString(v *C.staunch_value) string {
	switch v._type {
	case C.STAUNCH_COLUMN_INT:
		return strconv.FormatInt(int64(v.i64), 10)
	case C.STAUNCH_COLUMN_UINT:
		return strconv.FormatUint(uint64(v.u64), 10)
	case C.STAUNCH_COLUMN_DOUBLE:
		return strconv.FormatFloat(float64(v.f64), 'g', -1, 64)
	case C.STAUNCH_COLUMN_DATE:
		return vtime(v).Format(time.DateOnly)
	case C.STAUNCH_COLUMN_DATETIME:
		return vtime(v).Format("2006-01-02 15:04:05.999999")
	case C.STAUNCH_COLUMN_TIME:
		return timeText(v)
	}
	return vtext(v)
}

var errNull = errors.New("the value is NULL: scan into a pointer (**T) or an sql.Null* type")

func asInt64(v *C.staunch_value) (int64, error) {
	switch v._type {
	case C.STAUNCH_COLUMN_INT:
		return int64(v.i64), nil
	case C.STAUNCH_COLUMN_UINT:
		if uint64(v.u64) > math.MaxInt64 {
			return 0, fmt.Errorf("%d does not fit in int64", uint64(v.u64))
		}
		return int64(v.u64), nil
	case C.STAUNCH_COLUMN_DECIMAL, C.STAUNCH_COLUMN_TEXT:
		return strconv.ParseInt(vtext(v), 10, 64)
	case C.STAUNCH_COLUMN_NULL:
		return 0, errNull
	}
	return 0, fmt.Errorf("cannot convert %s to an integer", kindName(v))
}

func asUint64(v *C.staunch_value) (uint64, error) {
	switch v._type {
	case C.STAUNCH_COLUMN_UINT:
		return uint64(v.u64), nil
	case C.STAUNCH_COLUMN_INT:
		if v.i64 < 0 {
			return 0, fmt.Errorf("%d is negative", int64(v.i64))
		}
		return uint64(v.i64), nil
	case C.STAUNCH_COLUMN_DECIMAL, C.STAUNCH_COLUMN_TEXT:
		return strconv.ParseUint(vtext(v), 10, 64)
	case C.STAUNCH_COLUMN_NULL:
		return 0, errNull
	}
	return 0, fmt.Errorf("cannot convert %s to an unsigned integer", kindName(v))
}

func asFloat64(v *C.staunch_value) (float64, error) {
	switch v._type {
	case C.STAUNCH_COLUMN_DOUBLE:
		return float64(v.f64), nil
	case C.STAUNCH_COLUMN_INT:
		return float64(v.i64), nil
	case C.STAUNCH_COLUMN_UINT:
		return float64(v.u64), nil
	case C.STAUNCH_COLUMN_DECIMAL, C.STAUNCH_COLUMN_TEXT:
		return strconv.ParseFloat(vtext(v), 64)
	case C.STAUNCH_COLUMN_NULL:
		return 0, errNull
	}
	return 0, fmt.Errorf("cannot convert %s to a float", kindName(v))
}

func kindName(v *C.staunch_value) string {
	return [...]string{"NULL", "INT", "UINT", "DOUBLE", "DECIMAL", "TEXT", "BYTES", "DATE", "DATETIME", "TIME", "?"}[min(int(v._type), 10)]
}

func checkInt(i int64, bits int) error {
	if bits < 64 && (i < -1<<(bits-1) || i >= 1<<(bits-1)) {
		return fmt.Errorf("%d does not fit in int%d", i, bits)
	}
	return nil
}

func checkUint(u uint64, bits int) error {
	if bits < 64 && u >= 1<<bits {
		return fmt.Errorf("%d does not fit in uint%d", u, bits)
	}
	return nil
}

// driverValue is the value database/sql's Scanners understand.
func driverValue(v *C.staunch_value) any {
	switch v._type {
	case C.STAUNCH_COLUMN_UINT:
		if uint64(v.u64) <= math.MaxInt64 {
			return int64(v.u64)
		}
		return uint64(v.u64)
	case C.STAUNCH_COLUMN_TIME:
		return timeText(v)
	}
	return goValue(v)
}

func assign(dest any, v *C.staunch_value) error {
	isNull := v._type == C.STAUNCH_COLUMN_NULL
	switch d := dest.(type) {
	case nil:
		return errors.New("nil destination")
	case *any:
		*d = goValue(v)
		return nil
	case *string:
		if isNull {
			return errNull
		}
		*d = asString(v)
		return nil
	case *[]byte:
		switch v._type {
		case C.STAUNCH_COLUMN_NULL:
			*d = nil
		case C.STAUNCH_COLUMN_BYTES, C.STAUNCH_COLUMN_TEXT, C.STAUNCH_COLUMN_DECIMAL:
			*d = vbytes(v)
		default:
			*d = []byte(asString(v))
		}
		return nil
	case *int64:
		i, err := asInt64(v)
		if err == nil {
			*d = i
		}
		return err
	case *int:
		i, err := asInt64(v)
		if err == nil {
			*d = int(i)
		}
		return err
	case *int32:
		i, err := asInt64(v)
		if err == nil {
			if err = checkInt(i, 32); err == nil {
				*d = int32(i)
			}
		}
		return err
	case *int16:
		i, err := asInt64(v)
		if err == nil {
			if err = checkInt(i, 16); err == nil {
				*d = int16(i)
			}
		}
		return err
	case *int8:
		i, err := asInt64(v)
		if err == nil {
			if err = checkInt(i, 8); err == nil {
				*d = int8(i)
			}
		}
		return err
	case *uint64:
		u, err := asUint64(v)
		if err == nil {
			*d = u
		}
		return err
	case *uint:
		u, err := asUint64(v)
		if err == nil {
			*d = uint(u)
		}
		return err
	case *uint32:
		u, err := asUint64(v)
		if err == nil {
			if err = checkUint(u, 32); err == nil {
				*d = uint32(u)
			}
		}
		return err
	case *uint16:
		u, err := asUint64(v)
		if err == nil {
			if err = checkUint(u, 16); err == nil {
				*d = uint16(u)
			}
		}
		return err
	case *uint8:
		u, err := asUint64(v)
		if err == nil {
			if err = checkUint(u, 8); err == nil {
				*d = uint8(u)
			}
		}
		return err
	case *float64:
		f, err := asFloat64(v)
		if err == nil {
			*d = f
		}
		return err
	case *float32:
		f, err := asFloat64(v)
		if err == nil {
			*d = float32(f)
		}
		return err
	case *bool:
		if isNull {
			return errNull
		}
		if v._type == C.STAUNCH_COLUMN_TEXT {
			b, err := strconv.ParseBool(vtext(v))
			if err == nil {
				*d = b
			}
			return err
		}
		i, err := asInt64(v)
		if err != nil {
			u, uerr := asUint64(v)
			if uerr != nil {
				return err
			}
			*d = u != 0
			return nil
		}
		*d = i != 0
		return nil
	case *time.Time:
		if isNull {
			return errNull
		}
		if v._type != C.STAUNCH_COLUMN_DATE && v._type != C.STAUNCH_COLUMN_DATETIME {
			return fmt.Errorf("cannot convert %s to time.Time", kindName(v))
		}
		*d = vtime(v)
		return nil
	case *time.Duration:
		if isNull {
			return errNull
		}
		if v._type != C.STAUNCH_COLUMN_TIME {
			return fmt.Errorf("cannot convert %s to time.Duration", kindName(v))
		}
		*d = vduration(v)
		return nil
	case sql.Scanner:
		return d.Scan(driverValue(v))
	// The usual nullable destinations without reflect (the general case
	// below handles every pointer to a pointer the same way).
	case **int64:
		return assignPtr(d, v)
	case **int:
		return assignPtr(d, v)
	case **uint64:
		return assignPtr(d, v)
	case **float64:
		return assignPtr(d, v)
	case **string:
		return assignPtr(d, v)
	case **bool:
		return assignPtr(d, v)
	case **time.Time:
		return assignPtr(d, v)
	}
	rv := reflect.ValueOf(dest)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("destination %T is not a non-nil pointer", dest)
	}
	e := rv.Elem()
	if e.Kind() == reflect.Pointer {
		if isNull {
			e.SetZero()
			return nil
		}
		n := reflect.New(e.Type().Elem())
		if err := assign(n.Interface(), v); err != nil {
			return err
		}
		e.Set(n)
		return nil
	}
	// Named types of the basic kinds (type ID int64, ...).
	switch e.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := asInt64(v)
		if err == nil {
			if err = checkInt(i, e.Type().Bits()); err == nil {
				e.SetInt(i)
			}
		}
		return err
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := asUint64(v)
		if err == nil {
			if err = checkUint(u, e.Type().Bits()); err == nil {
				e.SetUint(u)
			}
		}
		return err
	case reflect.Float32, reflect.Float64:
		f, err := asFloat64(v)
		if err == nil {
			e.SetFloat(f)
		}
		return err
	case reflect.String:
		if isNull {
			return errNull
		}
		e.SetString(asString(v))
		return nil
	case reflect.Bool:
		var b bool
		if err := assign(&b, v); err != nil {
			return err
		}
		e.SetBool(b)
		return nil
	}
	return fmt.Errorf("unsupported destination type %T", dest)
}
