package staunch

/*
#include <stdlib.h>
#include "staunch.h"
*/
import "C"

import (
	"database/sql/driver"
	"math"
	"reflect"
	"time"
	"unsafe"
)

// cparams is a statement's parameters in C memory: the staunch_param array
// followed by the bytes of the text and binary values it points at (C never
// sees a Go pointer). One allocation, freed after the call.
type cparams struct {
	ptr *C.staunch_param
	n   C.size_t
}

func (p cparams) free() {
	if p.ptr != nil {
		C.free(unsafe.Pointer(p.ptr))
	}
}

// A Go value reduced to what a staunch_param can hold.
type pval struct {
	typ  C.staunch_param_type
	i    int64
	u    uint64
	f    float64
	s    string // TEXT
	b    []byte // BYTES
	dt   C.staunch_datetime
	tm   C.staunch_time
	size int // bytes of s or b
}

// Parameter types bindParams takes: nil, the integer types, float32/64,
// bool (0/1), string (TEXT, as go-sql-driver sends it, also to a DECIMAL
// column), Decimal (DECIMAL, exact), []byte (BYTES; nil is NULL), time.Time
// (in UTC: DATE at midnight, else DATETIME with microseconds; the
// nanoseconds below are dropped), time.Duration (TIME), a driver.Valuer
// (sql.NullString, ...), and pointers to those (nil is NULL).
func toParam(op string, i int, a any) (pval, error) {
	switch v := a.(type) {
	case nil:
		return pval{typ: C.STAUNCH_PARAM_NULL}, nil
	case int:
		return pval{typ: C.STAUNCH_PARAM_INT64, i: int64(v)}, nil
	case int64:
		return pval{typ: C.STAUNCH_PARAM_INT64, i: v}, nil
	case int32:
		return pval{typ: C.STAUNCH_PARAM_INT64, i: int64(v)}, nil
	case int16:
		return pval{typ: C.STAUNCH_PARAM_INT64, i: int64(v)}, nil
	case int8:
		return pval{typ: C.STAUNCH_PARAM_INT64, i: int64(v)}, nil
	case uint:
		return pval{typ: C.STAUNCH_PARAM_UINT64, u: uint64(v)}, nil
	case uint64:
		return pval{typ: C.STAUNCH_PARAM_UINT64, u: v}, nil
	case uint32:
		return pval{typ: C.STAUNCH_PARAM_UINT64, u: uint64(v)}, nil
	case uint16:
		return pval{typ: C.STAUNCH_PARAM_UINT64, u: uint64(v)}, nil
	case uint8:
		return pval{typ: C.STAUNCH_PARAM_UINT64, u: uint64(v)}, nil
	case float64:
		return pval{typ: C.STAUNCH_PARAM_DOUBLE, f: v}, nil
	case float32:
		return pval{typ: C.STAUNCH_PARAM_DOUBLE, f: float64(v)}, nil
	case bool:
		if v {
			return pval{typ: C.STAUNCH_PARAM_INT64, i: 1}, nil
		}
		return pval{typ: C.STAUNCH_PARAM_INT64, i: 0}, nil
	case string:
		return pval{typ: C.STAUNCH_PARAM_TEXT, s: v, size: len(v)}, nil
	case Decimal:
		// Checked here for an error in Go's words (the library checks
		// again when the statement runs); nothing is sent.
		if err := checkDecimal(string(v)); err != nil {
			return pval{}, invalid(op, "argument %d: staunch.Decimal %v", i+1, err)
		}
		return pval{typ: C.STAUNCH_PARAM_DECIMAL, s: string(v), size: len(v)}, nil
	case *Decimal: // before driver.Valuer, which *Decimal is too
		if v == nil {
			return pval{typ: C.STAUNCH_PARAM_NULL}, nil
		}
		return toParam(op, i, *v)
	case []byte:
		if v == nil {
			return pval{typ: C.STAUNCH_PARAM_NULL}, nil
		}
		return pval{typ: C.STAUNCH_PARAM_BYTES, b: v, size: len(v)}, nil
	case time.Time:
		u := v.UTC()
		if u.Year() < 0 || u.Year() > 9999 {
			return pval{}, invalid(op, "argument %d: time %v is outside the years 0-9999 of DATETIME", i+1, v)
		}
		if u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
			// Go has no date type: a time at midnight is taken for a
			// date, as go-sql-driver does (it writes it as 'YYYY-MM-DD'),
			// so it reads as a date where the server makes text of it.
			return pval{typ: C.STAUNCH_PARAM_DATE, dt: C.staunch_datetime{
				year: C.uint16_t(u.Year()), month: C.uint8_t(u.Month()), day: C.uint8_t(u.Day())}}, nil
		}
		return pval{typ: C.STAUNCH_PARAM_DATETIME, dt: C.staunch_datetime{
			year: C.uint16_t(u.Year()), month: C.uint8_t(u.Month()), day: C.uint8_t(u.Day()),
			hour: C.uint8_t(u.Hour()), minute: C.uint8_t(u.Minute()), second: C.uint8_t(u.Second()),
			microsecond: C.uint32_t(u.Nanosecond() / 1000)}}, nil
	case time.Duration:
		return pval{typ: C.STAUNCH_PARAM_TIME, tm: durationToTime(v)}, nil
	case driver.Valuer:
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Pointer && rv.IsNil() {
			return pval{typ: C.STAUNCH_PARAM_NULL}, nil
		}
		dv, err := v.Value()
		if err != nil {
			return pval{}, invalid(op, "argument %d: %T.Value: %v", i+1, a, err)
		}
		if _, again := dv.(driver.Valuer); again {
			return pval{}, invalid(op, "argument %d: %T.Value returned another driver.Valuer", i+1, a)
		}
		return toParam(op, i, dv)
	}
	// Pointers and named types of the kinds above.
	rv := reflect.ValueOf(a)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return pval{typ: C.STAUNCH_PARAM_NULL}, nil
		}
		return toParam(op, i, rv.Elem().Interface())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return pval{typ: C.STAUNCH_PARAM_INT64, i: rv.Int()}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return pval{typ: C.STAUNCH_PARAM_UINT64, u: rv.Uint()}, nil
	case reflect.Float32, reflect.Float64:
		return pval{typ: C.STAUNCH_PARAM_DOUBLE, f: rv.Float()}, nil
	case reflect.Bool:
		return toParam(op, i, rv.Bool())
	case reflect.String:
		return toParam(op, i, rv.String())
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return toParam(op, i, rv.Bytes())
		}
	}
	return pval{}, invalid(op, "argument %d: unsupported type %T (use nil, integers, floats, bool, string, staunch.Decimal, []byte, time.Time, time.Duration or a driver.Valuer)", i+1, a)
}

func durationToTime(d time.Duration) C.staunch_time {
	var t C.staunch_time
	if d < 0 {
		t.negative = true
		if d == math.MinInt64 {
			d = math.MaxInt64
		} else {
			d = -d
		}
	}
	us := int64(d / time.Microsecond)
	t.microseconds = C.uint32_t(us % 1e6)
	s := us / 1e6
	t.seconds = C.uint8_t(s % 60)
	t.minutes = C.uint8_t(s / 60 % 60)
	h := s / 3600
	t.hours = C.uint8_t(h % 24)
	t.days = C.uint32_t(h / 24)
	return t
}

func bindParams(op string, args []any) (cparams, error) {
	if len(args) == 0 {
		return cparams{}, nil
	}
	vals := make([]pval, len(args))
	data := 0
	for i, a := range args {
		v, err := toParam(op, i, a)
		if err != nil {
			return cparams{}, err
		}
		vals[i] = v
		data += v.size
	}
	head := len(args) * int(unsafe.Sizeof(C.staunch_param{}))
	mem := C.calloc(1, C.size_t(head+data+1))
	if mem == nil {
		return cparams{}, invalid(op, "out of memory for %d parameters", len(args))
	}
	ps := unsafe.Slice((*C.staunch_param)(mem), len(args))
	buf := unsafe.Slice((*byte)(unsafe.Add(mem, head)), data+1)
	off := 0
	for i, v := range vals {
		p := &ps[i]
		p._type = v.typ
		switch v.typ {
		case C.STAUNCH_PARAM_INT64:
			p.i64 = C.int64_t(v.i)
		case C.STAUNCH_PARAM_UINT64:
			p.u64 = C.uint64_t(v.u)
		case C.STAUNCH_PARAM_DOUBLE:
			p.f64 = C.double(v.f)
		case C.STAUNCH_PARAM_TEXT, C.STAUNCH_PARAM_DECIMAL, C.STAUNCH_PARAM_BYTES:
			if v.typ != C.STAUNCH_PARAM_BYTES {
				copy(buf[off:], v.s)
			} else {
				copy(buf[off:], v.b)
			}
			p.ptr = unsafe.Pointer(&buf[off])
			p.len = C.size_t(v.size)
			off += v.size
		case C.STAUNCH_PARAM_DATE, C.STAUNCH_PARAM_DATETIME:
			p.datetime = v.dt
		case C.STAUNCH_PARAM_TIME:
			p.time = v.tm
		}
	}
	return cparams{ptr: (*C.staunch_param)(mem), n: C.size_t(len(args))}, nil
}
