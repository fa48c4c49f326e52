/*
 * staunch._speedups: the row converter of staunch._convert, in C.
 *
 * Turning the library's staunch_value cells into Python objects is most of
 * what a large fetch costs in Python (the generated converter of
 * _convert.row_converter spends about 3 us a row of five columns; the
 * library has read the row in well under one). This does the same, value
 * for value: the same fast conversions when a cell's tag is its column's
 * type, and the same general path (_convert._slow, called back) otherwise,
 * NULL apart. It is optional: without it (no compiler when the sdist was
 * built, another Python implementation, STAUNCH_PURE_PYTHON=1) the
 * generated converter runs, and the tests run both.
 *
 * Built against the stable ABI (Py_LIMITED_API, CPython 3.9 and later), so
 * one build serves every CPython the wheel installs on. It calls no
 * function of libstaunch: it reads the cells the library wrote into the
 * caller's buffer, laid out as include/staunch.h says.
 */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "staunch.h"

#include <structmember.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* Py_XSETREF is not in the limited API: the old value dropped after the new is set. */
#define Py_XSETREF_COMPAT(dst, src)                                                                         \
    do {                                                                                                    \
        PyObject *old_ = (PyObject *)(dst);                                                                 \
        (dst) = (src);                                                                                      \
        Py_XDECREF(old_);                                                                                   \
    } while (0)

/* The classes a cell becomes, given by _convert at import (set once). */
static PyObject *Decimal, *Date, *DateTime, *TimeDelta;

/*
 * The head of CPython's datetime C API (datetime.h's PyDateTime_CAPI,
 * unchanged from 3.7 on; newer versions add at its end). datetime.h is
 * outside the stable ABI, so its layout is restated here, and trusted only
 * when the capsule's classes are the ones init() was given; else the
 * classes are called, through their argument parsing (about a tenth of a
 * large fetch's time).
 */
typedef struct {
    PyObject *DateType, *DateTimeType, *TimeType, *DeltaType, *TZInfoType, *TimeZone_UTC;
    PyObject *(*Date_FromDate)(int, int, int, PyObject *);
    PyObject *(*DateTime_FromDateAndTime)(int, int, int, int, int, int, int, PyObject *, PyObject *);
    PyObject *(*Time_FromTime)(int, int, int, int, PyObject *, PyObject *);
    PyObject *(*Delta_FromDelta)(int, int, int, int, PyObject *);
} datetime_capi;

static const datetime_capi *capi;

static PyObject *call_ints(PyObject *cls, const long *v, Py_ssize_t n) {
    PyObject *args = PyTuple_New(n);
    if (args == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLong(v[i]);
        if (x == NULL) {
            Py_DECREF(args);
            return NULL;
        }
        PyTuple_SetItem(args, i, x); /* steals x */
    }
    PyObject *out = PyObject_Call(cls, args, NULL);
    Py_DECREF(args);
    return out;
}

static PyObject *text(const staunch_value *v) {
    if (v->len == 0)
        return PyUnicode_FromStringAndSize("", 0);
    return PyUnicode_DecodeUTF8((const char *)v->ptr, (Py_ssize_t)v->len, NULL);
}

/* One cell whose tag is its column's type. */
static PyObject *fast(const staunch_value *v) {
    switch (v->type) {
    case STAUNCH_COLUMN_INT:
        return PyLong_FromLongLong(v->i64);
    case STAUNCH_COLUMN_UINT:
        return PyLong_FromUnsignedLongLong(v->u64);
    case STAUNCH_COLUMN_DOUBLE:
        return PyFloat_FromDouble(v->f64);
    case STAUNCH_COLUMN_TEXT:
        return text(v);
    case STAUNCH_COLUMN_BYTES:
        return PyBytes_FromStringAndSize((const char *)v->ptr, (Py_ssize_t)v->len);
    case STAUNCH_COLUMN_DECIMAL: {
        PyObject *s = text(v);
        if (s == NULL)
            return NULL;
        PyObject *out = PyObject_CallFunctionObjArgs(Decimal, s, NULL);
        Py_DECREF(s);
        return out;
    }
    case STAUNCH_COLUMN_DATE: {
        const staunch_datetime *d = &v->datetime;
        if (d->month == 0)
            Py_RETURN_NONE; /* a zero date */
        if (capi)
            return capi->Date_FromDate(d->year, d->month, d->day, Date);
        long f[3] = {d->year, d->month, d->day};
        return call_ints(Date, f, 3);
    }
    case STAUNCH_COLUMN_DATETIME: {
        const staunch_datetime *d = &v->datetime;
        if (d->month == 0)
            Py_RETURN_NONE;
        if (capi)
            return capi->DateTime_FromDateAndTime(d->year, d->month, d->day, d->hour, d->minute, d->second,
                                                  (int)d->microsecond, Py_None, DateTime);
        long f[7] = {d->year, d->month, d->day, d->hour, d->minute, d->second, (long)d->microsecond};
        return call_ints(DateTime, f, 7);
    }
    case STAUNCH_COLUMN_TIME: {
        const staunch_time *t = &v->time;
        /* timedelta(days, seconds, microseconds), as _convert._td's keywords add up. */
        long f[3] = {(long)t->days, (long)t->hours * 3600 + (long)t->minutes * 60 + t->seconds,
                     (long)t->microseconds};
        /* Normalized by both: the library's days and hours may run past a day. */
        PyObject *d = capi ? capi->Delta_FromDelta((int)f[0], (int)f[1], (int)f[2], 1, TimeDelta)
                           : call_ints(TimeDelta, f, 3);
        if (d == NULL || !t->negative)
            return d;
        PyObject *neg = PyNumber_Negative(d);
        Py_DECREF(d);
        return neg;
    }
    default:
        PyErr_Format(PyExc_SystemError, "staunch._speedups: no fast path for tag %u", (unsigned)v->type);
        return NULL;
    }
}

static int fast_type(unsigned t) {
    return t >= STAUNCH_COLUMN_INT && t <= STAUNCH_COLUMN_TIME;
}

PyDoc_STRVAR(rows_doc, "rows(data, address, n, types, slow) -> list of n row tuples\n\n"
                       "The cells at address (n rows of len(types) staunch_value each, in data,\n"
                       "which keeps them alive) as _convert.row_converter's function gives them;\n"
                       "types holds each column's type tag as a byte; slow(data, offset) converts\n"
                       "a cell whose tag is not its column's (NULL apart).");

static PyObject *rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *data, *types, *slow;
    unsigned long long address;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OKnSO:rows", &data, &address, &n, &types, &slow))
        return NULL;
    if (Decimal == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "staunch._speedups: init() was not called");
        return NULL;
    }
    Py_ssize_t ncols = PyBytes_Size(types);
    const unsigned char *tag = (const unsigned char *)PyBytes_AsString(types);
    if (tag == NULL)
        return NULL;
    if (n < 0 || ncols <= 0 || address == 0) {
        PyErr_SetString(PyExc_ValueError, "staunch._speedups.rows: n >= 0, at least one column and a buffer");
        return NULL;
    }
    const staunch_value *cells = (const staunch_value *)(uintptr_t)address;
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *row = PyTuple_New(ncols);
        if (row == NULL)
            goto fail;
        int atomic = 1; /* every item an int, float, str, bytes, Decimal, date or time, or None */
        for (Py_ssize_t c = 0; c < ncols; c++) {
            Py_ssize_t i = r * ncols + c;
            const staunch_value *v = &cells[i];
            PyObject *x;
            if (v->type == tag[c] && fast_type(v->type)) {
                x = fast(v);
            } else if (v->type == STAUNCH_COLUMN_NULL) {
                x = Py_None;
                Py_INCREF(x);
            } else {
                atomic = 0;
                PyObject *off = PyLong_FromSsize_t(i * (Py_ssize_t)sizeof(staunch_value));
                if (off == NULL) {
                    Py_DECREF(row);
                    goto fail;
                }
                x = PyObject_CallFunctionObjArgs(slow, data, off, NULL);
                Py_DECREF(off);
            }
            if (x == NULL) {
                Py_DECREF(row);
                goto fail;
            }
            PyTuple_SetItem(row, c, x); /* steals x */
        }
        /* A tuple of objects that hold no references cannot be in a cycle:
         * the collector would untrack it at its first pass; doing so now
         * spares every collection a large fetch sets off from walking the
         * rows read so far (which cost a tenth of a fetch of 10,000). */
        if (atomic)
            PyObject_GC_UnTrack(row);
        /* Only now: PyTuple_SetItem takes a tuple no one else holds. */
        PyList_SetItem(out, r, row); /* steals row */
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

PyDoc_STRVAR(init_doc, "init(Decimal, date, datetime, timedelta): the classes cells become.");

static PyObject *init(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *cls[4];
    if (!PyArg_ParseTuple(args, "OOOO:init", &cls[0], &cls[1], &cls[2], &cls[3]))
        return NULL;
    PyObject **slot[4] = {&Decimal, &Date, &DateTime, &TimeDelta};
    for (int i = 0; i < 4; i++) {
        PyObject *old = *slot[i];
        Py_INCREF(cls[i]);
        *slot[i] = cls[i];
        Py_XDECREF(old);
    }
    capi = NULL;
    const datetime_capi *c = PyCapsule_Import("datetime.datetime_CAPI", 0);
    if (c == NULL) {
        PyErr_Clear(); /* the classes are called instead */
    } else if (c->DateType == Date && c->DateTimeType == DateTime && c->DeltaType == TimeDelta) {
        capi = c;
    }
    Py_RETURN_NONE;
}

/*
 * Fn: one libstaunch function, called with its arguments as machine words.
 *
 * ctypes spends about 3,000 instructions on a call of a few arguments
 * (each argument through its type's from_param, libffi's call interface
 * prepared anew), more than most of libstaunch's functions take; a borrow
 * and a SELECT 1 of staunch.aio make about ten calls. An Fn is called as
 * the package's lib.raw functions are (ints for pointers and integers,
 * bytes for a char *, None for NULL) and converts nothing else. Only the
 * functions whose every parameter is an integer or a pointer, and whose
 * result is void, a status or an unsigned integer, are made Fn (_ffi.FAST);
 * each is called through a pointer of its own arity and result type, with
 * every argument a full word: in the x86-64 and AArch64 calling conventions
 * a narrower integer parameter takes its register's low bits (a bool's 0 or
 * 1, an int's -1 given as all ones), the ninth and later words on the stack
 * as C passes them. Built only where a pointer is a word (LP64).
 */
#if UINTPTR_MAX == 0xffffffffffffffffu && ULLONG_MAX == 0xffffffffffffffffu
#define STAUNCH_FN 1

typedef uintptr_t W;
enum { RET_VOID, RET_INT, RET_U32, RET_U64, RET_BOOL };
#define FN_MAX_ARGS 8

typedef struct {
    PyObject_HEAD
    uintptr_t fn; /* the function's address */
    int nargs, ret, nogil;
    PyObject *name;
} Fn;

static int word(const Fn *self, PyObject *o, int i, W *out) {
    if (o == Py_None) {
        *out = 0;
        return 0;
    }
    if (PyLong_Check(o)) {
        unsigned long long v = PyLong_AsUnsignedLongLongMask(o);
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            return -1;
        *out = (W)v;
        return 0;
    }
    if (PyBytes_Check(o)) {
        *out = (W)PyBytes_AsString(o);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%U: argument %d must be an int, bytes or None, not %R", self->name, i + 1,
                 (PyObject *)Py_TYPE(o));
    return -1;
}

#define FN_CALL(RT, dst)                                                                                    \
    switch (self->nargs) {                                                                                  \
    case 0: dst ((RT(*)(void))self->fn)(); break;                                                           \
    case 1: dst ((RT(*)(W))self->fn)(w[0]); break;                                                          \
    case 2: dst ((RT(*)(W, W))self->fn)(w[0], w[1]); break;                                                 \
    case 3: dst ((RT(*)(W, W, W))self->fn)(w[0], w[1], w[2]); break;                                        \
    case 4: dst ((RT(*)(W, W, W, W))self->fn)(w[0], w[1], w[2], w[3]); break;                               \
    case 5: dst ((RT(*)(W, W, W, W, W))self->fn)(w[0], w[1], w[2], w[3], w[4]); break;                      \
    case 6: dst ((RT(*)(W, W, W, W, W, W))self->fn)(w[0], w[1], w[2], w[3], w[4], w[5]); break;             \
    case 7: dst ((RT(*)(W, W, W, W, W, W, W))self->fn)(w[0], w[1], w[2], w[3], w[4], w[5], w[6]); break;    \
    default:                                                                                                \
        dst ((RT(*)(W, W, W, W, W, W, W, W))self->fn)(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);      \
        break;                                                                                              \
    }

static PyObject *fn_call(PyObject *o, PyObject *args, PyObject *kwargs) {
    Fn *self = (Fn *)o;
    W w[FN_MAX_ARGS] = {0};
    Py_ssize_t n = PyTuple_Size(args);
    if (n < 0)
        return NULL;
    if ((kwargs != NULL && PyObject_Length(kwargs) > 0) || n != self->nargs) {
        PyErr_Format(PyExc_TypeError, "%U takes %d positional arguments (%zd given)", self->name, self->nargs, n);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (word(self, PyTuple_GetItem(args, i), (int)i, &w[i]) != 0)
            return NULL;
    }
    int i32 = 0;
    uint32_t u32 = 0;
    unsigned long long u64 = 0;
    bool b = false;
    PyThreadState *ts = self->nogil ? PyEval_SaveThread() : NULL;
    switch (self->ret) {
    case RET_VOID:
        FN_CALL(void, (void))
        break;
    case RET_INT:
        FN_CALL(int, i32 =)
        break;
    case RET_U32:
        FN_CALL(uint32_t, u32 =)
        break;
    case RET_U64:
        FN_CALL(unsigned long long, u64 =)
        break;
    default:
        FN_CALL(bool, b =)
        break;
    }
    if (ts != NULL)
        PyEval_RestoreThread(ts);
    switch (self->ret) {
    case RET_VOID:
        Py_RETURN_NONE;
    case RET_INT:
        return PyLong_FromLong(i32);
    case RET_U32:
        return PyLong_FromUnsignedLong(u32);
    case RET_U64:
        return PyLong_FromUnsignedLongLong(u64);
    default:
        return PyBool_FromLong(b);
    }
}

static void fn_dealloc(PyObject *o) {
    Fn *self = (Fn *)o;
    PyTypeObject *tp = Py_TYPE(o);
    Py_XDECREF(self->name);
    freefunc free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    free(o);
    Py_DECREF(tp);
}

static PyObject *fn_repr(PyObject *o) {
    return PyUnicode_FromFormat("<staunch._speedups.Fn %U>", ((Fn *)o)->name);
}

static PyType_Slot fn_slots[] = {
    {Py_tp_call, fn_call},
    {Py_tp_dealloc, fn_dealloc},
    {Py_tp_repr, fn_repr},
    {0, NULL},
};

static PyType_Spec fn_spec = {"staunch._speedups.Fn", sizeof(Fn), 0, Py_TPFLAGS_DEFAULT, fn_slots};
static PyObject *FnType;

PyDoc_STRVAR(fn_doc, "fn(name, address, nargs, ret, nogil) -> Fn\n\n"
                     "The C function at address, taking nargs integer or pointer parameters and\n"
                     "returning ret (0 void, 1 int, 2 uint32_t, 3 uint64_t or size_t, 4 bool),\n"
                     "called as lib.raw's functions are; with nogil, without the GIL.");

static PyObject *fn_new(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *name;
    unsigned long long address;
    int nargs, ret, nogil;
    if (!PyArg_ParseTuple(args, "UKiip:fn", &name, &address, &nargs, &ret, &nogil))
        return NULL;
    if (address == 0 || nargs < 0 || nargs > FN_MAX_ARGS || ret < RET_VOID || ret > RET_BOOL) {
        PyErr_Format(PyExc_ValueError, "staunch._speedups.fn(%U): a function address, 0 to %d arguments, ret 0 to 4",
                     name, FN_MAX_ARGS);
        return NULL;
    }
    Fn *f = (Fn *)PyType_GenericAlloc((PyTypeObject *)FnType, 0);
    if (f == NULL)
        return NULL;
    f->fn = (uintptr_t)address;
    f->nargs = nargs;
    f->ret = ret;
    f->nogil = nogil;
    Py_INCREF(name);
    f->name = name;
    return (PyObject *)f;
}
#endif

/*
 * Tracer events in C: the event type (staunch.TraceEvent where this module
 * is built) and the trace callback, which reads the library's event, makes
 * a TraceEvent of it and calls the pool's tracer, with no Python frame of
 * its own. Through ctypes and _core._trace, an event costs about 8,000
 * instructions, four events a checkout: the callback's trampoline or its
 * argument tuple, _trace's frame, the class's __init__, and a collection
 * of the cyclic GC every 700 of them (a Python class's instances are GC
 * objects; this type's, which hold only texts and numbers, are not).
 */

enum { EV_KIND, EV_POOL, EV_POOL_ID, EV_SERVER, EV_CID, EV_STATEMENT, EV_DURATION, EV_ERROR, EV_CODE, EV_TIME, EV_N };

typedef struct {
    PyObject_HEAD PyObject *f[EV_N];
} Event;

static const char *const event_fields[EV_N + 1] = {
    "kind", "pool", "pool_id", "server", "connection_id", "statement", "duration_us", "error", "error_code", "time_ns",
    NULL,
};

/* What time.time_ns() says now. */
static PyObject *now_ns(uint64_t minus_us) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return PyLong_FromLongLong(ns - (long long)(minus_us * 1000u));
}

static PyObject *event_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs) {
    PyObject *v[EV_N] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOOOO|O:TraceEvent", (char **)event_fields, &v[0], &v[1],
                                     &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]))
        return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    Event *self = (Event *)alloc(tp, 0);
    if (self == NULL)
        return NULL;
    for (int i = 0; i < EV_N; i++) {
        if (i == EV_TIME && (v[i] == NULL || v[i] == Py_None)) {
            if ((self->f[i] = now_ns(0)) == NULL) {
                Py_DECREF(self);
                return NULL;
            }
        } else {
            Py_INCREF(v[i]);
            self->f[i] = v[i];
        }
    }
    return (PyObject *)self;
}

static void event_dealloc(PyObject *o) {
    Event *self = (Event *)o;
    PyTypeObject *tp = Py_TYPE(o);
    for (int i = 0; i < EV_N; i++)
        Py_XDECREF(self->f[i]);
    freefunc free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    free(o);
    Py_DECREF(tp);
}

static PyObject *event_repr(PyObject *o) {
    Event *self = (Event *)o;
    PyObject *kind = self->f[EV_KIND], *pool = self->f[EV_POOL], *cid = self->f[EV_CID];
    return PyUnicode_FromFormat("TraceEvent(%R, pool=%R, connection_id=%R)", kind ? kind : Py_None,
                                pool ? pool : Py_None, cid ? cid : Py_None);
}

/* As a slotted class's instances copy and pickle: the constructor's arguments. */
static PyObject *event_reduce(PyObject *o, PyObject *unused) {
    (void)unused;
    Event *self = (Event *)o;
    PyObject *args = PyTuple_New(EV_N);
    if (args == NULL)
        return NULL;
    for (int i = 0; i < EV_N; i++) {
        PyObject *v = self->f[i] ? self->f[i] : Py_None;
        Py_INCREF(v);
        PyTuple_SetItem(args, i, v); /* steals v */
    }
    PyObject *r = Py_BuildValue("(ON)", (PyObject *)Py_TYPE(o), args);
    return r;
}

static PyMethodDef event_methods[] = {
    {"__reduce__", event_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* One member per field, named as event_fields says (filled at import). */
static PyMemberDef event_members[EV_N + 1];

static void event_members_fill(void) {
    for (int i = 0; i < EV_N; i++)
        event_members[i] = (PyMemberDef){(char *)event_fields[i], T_OBJECT_EX,
                                         (Py_ssize_t)(offsetof(Event, f) + i * sizeof(PyObject *)), 0, NULL};
}

static PyType_Slot event_slots[] = {
    {Py_tp_new, event_new},
    {Py_tp_dealloc, event_dealloc},
    {Py_tp_repr, event_repr},
    {Py_tp_members, event_members},
    {Py_tp_methods, event_methods},
    {0, NULL},
};

/* Its qualified name is staunch.TraceEvent: _core gives it its docstring. */
static PyType_Spec event_spec = {"staunch.TraceEvent", sizeof(Event), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                                  event_slots};
static PyObject *EventType;

/* Set once by set_trace_sink: _core._tracers (user_data -> [tracer, pool
 * id, logged]), the kinds' names and _core._trace_failed. */
static PyObject *trace_tracers, *trace_failed;
static PyObject *trace_kinds[5]; /* by kind; [0] "other" */

/* The last text seen in one field, decoded: a pool's name and server, and
 * most statements, come again and again. Only touched with the GIL held. */
typedef struct {
    char *bytes;
    size_t len;
    PyObject *str;
} text_cache;

static text_cache pool_texts, server_texts, statement_texts;

static PyObject *event_text(const char *p, size_t n) {
    if (p == NULL)
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "replace");
}

static PyObject *cached_text(text_cache *c, const char *p, size_t n) {
    if (p == NULL)
        Py_RETURN_NONE;
    if (c->str != NULL && c->len == n && memcmp(c->bytes, p, n) == 0) {
        Py_INCREF(c->str);
        return c->str;
    }
    PyObject *s = event_text(p, n);
    if (s == NULL || n > 4096)
        return s; /* not kept: a long statement is seldom run twice in a row */
    char *copy = PyMem_Malloc(n ? n : 1);
    if (copy == NULL)
        return s; /* not kept */
    memcpy(copy, p, n);
    PyMem_Free(c->bytes);
    Py_XDECREF(c->str);
    c->bytes = copy;
    c->len = n;
    Py_INCREF(s);
    c->str = s;
    return s;
}

static PyObject *make_event(const staunch_trace_event *ev, PyObject *pool_id) {
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)EventType, Py_tp_alloc);
    Event *e = (Event *)alloc((PyTypeObject *)EventType, 0);
    if (e == NULL)
        return NULL;
    PyObject **f = e->f;
    f[EV_KIND] = trace_kinds[ev->kind < 5 ? ev->kind : 0];
    Py_INCREF(f[EV_KIND]);
    Py_INCREF(pool_id);
    f[EV_POOL_ID] = pool_id;
    if ((f[EV_POOL] = cached_text(&pool_texts, ev->pool, ev->pool_len)) == NULL ||
        (f[EV_SERVER] = ev->server != NULL ? cached_text(&server_texts, ev->server, ev->server_len)
                                           : PyUnicode_FromStringAndSize("", 0)) == NULL ||
        (f[EV_CID] = PyLong_FromUnsignedLongLong(ev->connection_id)) == NULL ||
        (f[EV_STATEMENT] = cached_text(&statement_texts, ev->statement, ev->statement_len)) == NULL ||
        (f[EV_DURATION] = PyLong_FromUnsignedLongLong(ev->duration_us)) == NULL ||
        (f[EV_ERROR] = event_text(ev->error, ev->error_len)) == NULL ||
        (f[EV_CODE] = PyLong_FromUnsignedLong(ev->error_code)) == NULL ||
        (f[EV_TIME] = now_ns(ev->held_us)) == NULL) {
        Py_DECREF(e);
        return NULL;
    }
    return (PyObject *)e;
}

/* The failure being handled, to _core._trace_failed(entry, exception): it
 * logs it, once a pool. Nothing may reach the library, the caller. */
static void trace_raised(PyObject *entry) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (v != NULL && tb != NULL)
        PyException_SetTraceback(v, tb);
    PyObject *r = PyObject_CallFunctionObjArgs(trace_failed, entry ? entry : Py_None, v ? v : Py_None, NULL);
    if (r == NULL)
        PyErr_WriteUnraisable(trace_failed);
    Py_XDECREF(r);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

static void trace_event(const staunch_trace_event *ev, void *user_data) {
    PyGILState_STATE gil = PyGILState_Ensure();
    if (trace_tracers != NULL && ev != NULL) {
        PyObject *entry = NULL, *e = NULL, *r = NULL;
        PyObject *key = PyLong_FromVoidPtr(user_data);
        if (key != NULL) {
            entry = PyDict_GetItemWithError(trace_tracers, key); /* borrowed */
            Py_XINCREF(entry);
            Py_DECREF(key);
        }
        if (entry != NULL && PyList_Check(entry) && PyList_Size(entry) >= 2) {
            PyObject *tracer = PyList_GetItem(entry, 0), *pool_id = PyList_GetItem(entry, 1);
            if ((e = make_event(ev, pool_id)) != NULL)
                r = PyObject_CallFunctionObjArgs(tracer, e, NULL);
        }
        if (PyErr_Occurred())
            trace_raised(entry);
        Py_XDECREF(r);
        Py_XDECREF(e);
        Py_XDECREF(entry);
    }
    PyGILState_Release(gil);
}

PyDoc_STRVAR(set_trace_sink_doc,
             "set_trace_sink(tracers, kinds, failed) -> the trace callback's address\n\n"
             "The callback at the address returned (a staunch_trace_callback) calls\n"
             "tracers[user_data][0] with a TraceEvent (pool_id: tracers[user_data][1];\n"
             "kind: kinds[the event's kind], \"other\" beyond it; texts decoded as UTF-8),\n"
             "and failed(tracers[user_data], exception) when that fails.");

static PyObject *set_trace_sink(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tracers, *kinds, *failed;
    if (!PyArg_ParseTuple(args, "O!OO:set_trace_sink", &PyDict_Type, &tracers, &kinds, &failed))
        return NULL;
    if (!PyCallable_Check(failed)) {
        PyErr_SetString(PyExc_TypeError, "set_trace_sink: failed must be callable");
        return NULL;
    }
    PyObject *names[5];
    for (long k = 0; k < 5; k++) {
        PyObject *key = PyLong_FromLong(k);
        PyObject *name = key ? PyObject_GetItem(kinds, key) : NULL;
        Py_XDECREF(key);
        if (name == NULL) {
            if (k == 0 && PyErr_ExceptionMatches(PyExc_KeyError)) {
                PyErr_Clear();
                name = PyUnicode_FromString("other");
            }
            if (name == NULL) {
                while (k-- > 0)
                    Py_DECREF(names[k]);
                return NULL;
            }
        }
        names[k] = name;
    }
    for (int k = 0; k < 5; k++) {
        Py_XDECREF(trace_kinds[k]);
        trace_kinds[k] = names[k];
    }
    Py_INCREF(tracers);
    Py_XSETREF_COMPAT(trace_tracers, tracers);
    Py_INCREF(failed);
    Py_XSETREF_COMPAT(trace_failed, failed);
    return PyLong_FromVoidPtr((void *)(uintptr_t)trace_event);
}

static PyMethodDef methods[] = {
    {"rows", rows, METH_VARARGS, rows_doc},
    {"init", init, METH_VARARGS, init_doc},
    {"set_trace_sink", set_trace_sink, METH_VARARGS, set_trace_sink_doc},
#ifdef STAUNCH_FN
    {"fn", fn_new, METH_VARARGS, fn_doc},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "staunch._speedups", "staunch's row converter and foreign calls in C (optional).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && EventType == NULL)
        event_members_fill();
    if (m != NULL && EventType == NULL && (EventType = PyType_FromSpec(&event_spec)) == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    if (m != NULL) {
        Py_INCREF(EventType);
        if (PyModule_AddObject(m, "TraceEvent", EventType) != 0) {
            Py_DECREF(EventType);
            Py_DECREF(m);
            return NULL;
        }
    }
#ifdef STAUNCH_FN
    if (m != NULL && FnType == NULL) {
        FnType = PyType_FromSpec(&fn_spec);
        if (FnType == NULL) {
            Py_DECREF(m);
            return NULL;
        }
    }
#endif
    return m;
}
