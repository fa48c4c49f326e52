"""The C ABI of libstaunch, declared for ctypes.

Every function the package calls is declared here with its argtypes and
restype, and the structs by hand; ``tests/test_abi.py`` checks them against
``include/staunch_cdef.h`` and against the layout the loaded library reports
(``staunch_struct_size`` / ``staunch_field_offset``).  ctypes releases the GIL
around every foreign call (``CDLL``, not ``PyDLL``).
"""

from __future__ import annotations

import ctypes
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

#: The ABI major version this package speaks, and the least minor it needs.
ABI_MAJOR = 1
# 1.13: the knob text_without_params; 1.12: staunch_options_set_tracer_ex, staunch_trace_flush (deferred traces);
# 1.11: staunch_pool_get_start, staunch_pending_get_* (staunch.aio); 1.10: staunch_conn_query_send_ex;
# 1.9: staunch_error_category; 1.8: staunch_options_set_default, the knob autocommit; 1.7: staunch_pool_metrics, _name,
# _leak_threshold_ms, staunch_conn_set_borrower_stack,
# staunch_options_set_tracer; 1.4: staunch_conn_query_batch, staunch_rows_column_infos
# (1.1: staunch_param_decimal, staunch_rows_column_types)
ABI_MINOR = 13

status_t = c_uint32


class _Opaque(Structure):
    _fields_: list = []


class staunch_pool(_Opaque):
    pass


class staunch_conn(_Opaque):
    pass


class staunch_rows(_Opaque):
    pass


class staunch_error(_Opaque):
    pass


class staunch_options(_Opaque):
    pass


class staunch_cancel_token(_Opaque):
    pass


class staunch_pending_get(_Opaque):
    pass


class staunch_datetime(Structure):
    _fields_ = [
        ("year", c_uint16),
        ("month", c_uint8),
        ("day", c_uint8),
        ("hour", c_uint8),
        ("minute", c_uint8),
        ("second", c_uint8),
        ("microsecond", c_uint32),
    ]


class staunch_time(Structure):
    _fields_ = [
        ("negative", c_bool),
        ("days", c_uint32),
        ("hours", c_uint8),
        ("minutes", c_uint8),
        ("seconds", c_uint8),
        ("microseconds", c_uint32),
    ]


class staunch_param(Structure):
    _fields_ = [
        ("type", c_uint32),
        ("i64", c_int64),
        ("u64", c_uint64),
        ("f64", c_double),
        ("ptr", c_char_p),  # const void *: c_char_p keeps the bytes alive
        ("len", c_size_t),
        ("datetime", staunch_datetime),
        ("time", staunch_time),
        ("_reserved", c_uint64 * 2),
    ]


class staunch_value(Structure):
    _fields_ = [
        ("type", c_uint32),
        ("i64", c_int64),
        ("u64", c_uint64),
        ("f64", c_double),
        ("ptr", c_void_p),
        ("len", c_size_t),
        ("datetime", staunch_datetime),
        ("time", staunch_time),
        ("_reserved", c_uint64 * 2),
    ]


class staunch_batch(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("recycle", POINTER(staunch_rows)),
        ("types", POINTER(c_uint32)),
        ("types_cap", c_size_t),
        ("values", POINTER(staunch_value)),
        ("values_cap", c_size_t),
        ("n_columns", c_size_t),
        ("n_rows", c_size_t),
        ("affected_rows", c_uint64),
        ("last_insert_id", c_uint64),
    ]


class staunch_event(Structure):
    _fields_ = [
        ("kind", c_uint32),
        ("status", c_uint32),
        ("connection_id", c_uint64),
        ("count", c_uint64),
        ("duration_us", c_uint64),
        ("message", c_char_p),
        ("pool_id", c_uint64),
    ]


class staunch_trace_event(Structure):
    # Strings are pointer and length (no NUL), valid only during the callback.
    # Pointers to char, not c_void_p: slicing one (ptr[:n]) copies the bytes
    # in C, where ctypes.string_at is a foreign call of its own (several
    # times dearer, and this runs four times a checkout).
    _fields_ = [
        ("kind", c_uint32),
        ("error_code", c_uint32),
        ("pool", POINTER(c_char)),
        ("pool_len", c_size_t),
        ("server", POINTER(c_char)),
        ("server_len", c_size_t),
        ("connection_id", c_uint64),
        ("statement", POINTER(c_char)),
        ("statement_len", c_size_t),
        ("duration_us", c_uint64),
        ("error", POINTER(c_char)),
        ("error_len", c_size_t),
        ("held_us", c_uint64),
    ]


#: staunch_options_set_tracer_ex's flag: events kept until staunch_trace_flush.
TRACE_DEFERRED = 1
TRACE_ACQUIRE_START = 1
TRACE_ACQUIRE_END = 2
TRACE_STATEMENT_START = 3
TRACE_STATEMENT_END = 4

STATS_FIELDS = (
    "total active idle reserved waiting pending_creates connecting adder_threads "
    "acquired acquire_timeouts created closed_idle_timeout closed_max_lifetime "
    "closed_broken closed_evicted closed_pool_closed connect_failures "
    "abandoned_connects validation_failures keepalives leaks_reported "
    "rollbacks_on_return violations acquire_count acquire_p50_us acquire_p99_us "
    "acquire_max_us connect_count connect_p50_us connect_p99_us connect_max_us "
    "max_size acquires_waited acquire_wait_us acquires_cancelled resets_on_return "
    "statements_cut"
).split()


class staunch_stats(Structure):
    _fields_ = [("size", c_size_t)] + [(name, c_uint64) for name in STATS_FIELDS]


class staunch_result(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("affected_rows", c_uint64),
        ("last_insert_id", c_uint64),
        ("warnings", c_uint32),
        ("in_transaction", c_bool),
        ("autocommit", c_bool),
        ("info", c_char_p),
    ]


class staunch_txn_options(Structure):
    _fields_ = [("size", c_size_t), ("isolation", c_uint32), ("read_only", c_bool)]


class staunch_column_info(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("column_type", c_uint32),
        ("type_code", c_uint32),
        ("flags", c_uint32),
        ("charset", c_uint32),
        ("length", c_uint32),
        ("decimals", c_uint32),
        ("name", c_char_p),
        ("name_len", c_size_t),
        ("org_name", c_char_p),
        ("org_name_len", c_size_t),
        ("table", c_char_p),
        ("table_len", c_size_t),
        ("org_table", c_char_p),
        ("org_table_len", c_size_t),
        ("schema", c_char_p),
        ("schema_len", c_size_t),
    ]


#: Every struct declared here, by its C name (checked by tests/test_abi.py).
STRUCTS = {
    cls.__name__: cls
    for cls in (
        staunch_datetime,
        staunch_time,
        staunch_param,
        staunch_value,
        staunch_batch,
        staunch_event,
        staunch_trace_event,
        staunch_stats,
        staunch_result,
        staunch_txn_options,
        staunch_column_info,
    )
}

EVENT_CALLBACK = CFUNCTYPE(None, POINTER(staunch_event), c_void_p)
FINALIZER = CFUNCTYPE(None, c_void_p)
TRACE_CALLBACK = CFUNCTYPE(None, POINTER(staunch_trace_event), c_void_p)

P = POINTER
ERR = P(P(staunch_error))

#: name: (restype, argtypes): every function of the ABI this package calls.
SIGNATURES = {
    "staunch_version": (c_uint32, []),
    "staunch_version_string": (c_char_p, []),
    "staunch_error_message": (c_char_p, [P(staunch_error)]),
    "staunch_error_server_code": (c_uint32, [P(staunch_error)]),
    "staunch_error_sqlstate": (c_char_p, [P(staunch_error)]),
    "staunch_error_category": (c_uint32, [P(staunch_error)]),
    "staunch_error_free": (None, [P(staunch_error)]),
    "staunch_status_name": (c_char_p, [status_t]),
    "staunch_options_new": (status_t, [P(P(staunch_options)), ERR]),
    "staunch_options_set": (status_t, [P(staunch_options), c_char_p, c_char_p, ERR]),
    "staunch_options_set_url": (status_t, [P(staunch_options), c_char_p, ERR]),
    "staunch_options_set_default": (status_t, [P(staunch_options), c_char_p, c_char_p, ERR]),
    "staunch_options_set_event_callback": (
        status_t,
        [P(staunch_options), EVENT_CALLBACK, c_void_p, FINALIZER, ERR],
    ),
    "staunch_options_set_tracer": (
        status_t,
        [P(staunch_options), TRACE_CALLBACK, c_void_p, FINALIZER, ERR],
    ),
    "staunch_options_set_tracer_ex": (
        status_t,
        [P(staunch_options), TRACE_CALLBACK, c_void_p, FINALIZER, c_uint32, ERR],
    ),
    "staunch_trace_flush": (c_size_t, []),
    "staunch_options_free": (None, [P(staunch_options)]),
    "staunch_pool_open_options": (status_t, [P(staunch_options), P(P(staunch_pool)), ERR]),
    "staunch_pool_get_cancellable": (
        status_t,
        [P(staunch_pool), c_uint32, P(staunch_cancel_token), P(P(staunch_conn)), ERR],
    ),
    "staunch_pool_get_read_cancellable": (
        status_t,
        [P(staunch_pool), c_uint32, P(staunch_cancel_token), P(P(staunch_conn)), ERR],
    ),
    "staunch_pool_try_get": (status_t, [P(staunch_pool), P(P(staunch_conn)), ERR]),
    "staunch_pool_get_start": (
        status_t,
        [P(staunch_pool), c_uint32, c_bool, c_int32, P(P(staunch_conn)), P(P(staunch_pending_get)), ERR],
    ),
    "staunch_pending_get_fd": (c_int32, [P(staunch_pending_get)]),
    "staunch_pending_get_remaining_ms": (c_uint32, [P(staunch_pending_get)]),
    "staunch_pending_get_finish": (status_t, [P(staunch_pending_get), P(P(staunch_conn)), ERR]),
    "staunch_pending_get_free": (None, [P(staunch_pending_get)]),
    "staunch_pool_stats": (status_t, [P(staunch_pool), P(staunch_stats), ERR]),
    "staunch_pool_soft_evict": (status_t, [P(staunch_pool), ERR]),
    "staunch_pool_set_max_size": (status_t, [P(staunch_pool), c_uint32, ERR]),
    "staunch_pool_set_min_idle": (status_t, [P(staunch_pool), c_uint32, ERR]),
    "staunch_pool_suspend": (status_t, [P(staunch_pool), ERR]),
    "staunch_pool_resume": (status_t, [P(staunch_pool), ERR]),
    "staunch_pool_id": (c_uint64, [P(staunch_pool)]),
    "staunch_pool_metrics": (status_t, [P(staunch_pool), c_char_p, c_size_t, P(c_size_t), ERR]),
    "staunch_pool_name": (status_t, [P(staunch_pool), c_char_p, c_size_t, P(c_size_t), ERR]),
    "staunch_pool_leak_threshold_ms": (c_uint64, [P(staunch_pool)]),
    "staunch_conn_set_borrower_stack": (status_t, [P(staunch_conn), c_char_p, c_size_t, ERR]),
    "staunch_pool_free": (None, [P(staunch_pool)]),
    "staunch_pool_free_nowait": (None, [P(staunch_pool)]),
    "staunch_cancel_token_new": (status_t, [P(P(staunch_cancel_token)), ERR]),
    "staunch_cancel_token_cancel": (status_t, [P(staunch_cancel_token), ERR]),
    "staunch_cancel_token_is_cancelled": (c_bool, [P(staunch_cancel_token)]),
    "staunch_cancel_token_free": (None, [P(staunch_cancel_token)]),
    "staunch_conn_execute": (
        status_t,
        [P(staunch_conn), c_char_p, P(staunch_param), c_size_t, P(c_uint64), P(c_uint64), ERR],
    ),
    "staunch_conn_last_result": (status_t, [P(staunch_conn), P(staunch_result), ERR]),
    "staunch_conn_query_ex": (
        status_t,
        [P(staunch_conn), c_char_p, P(staunch_param), c_size_t, c_uint32, P(P(staunch_rows)), ERR],
    ),
    "staunch_conn_query_send_ex": (
        status_t,
        [P(staunch_conn), c_char_p, P(staunch_param), c_size_t, c_uint32, P(c_int), ERR],
    ),
    "staunch_conn_query_recv": (status_t, [P(staunch_conn), c_uint32, P(P(staunch_rows)), ERR]),
    "staunch_conn_query_batch": (
        status_t,
        [P(staunch_conn), c_char_p, P(staunch_param), c_size_t, c_uint32, P(staunch_batch), P(P(staunch_rows)), ERR],
    ),
    "staunch_conn_begin_ex": (status_t, [P(staunch_conn), P(staunch_txn_options), ERR]),
    "staunch_conn_commit": (status_t, [P(staunch_conn), ERR]),
    "staunch_conn_rollback": (status_t, [P(staunch_conn), ERR]),
    "staunch_conn_ping": (status_t, [P(staunch_conn), ERR]),
    "staunch_conn_set_timeout": (status_t, [P(staunch_conn), c_uint32, ERR]),
    "staunch_conn_cancel": (status_t, [P(staunch_conn), P(c_bool), ERR]),
    "staunch_conn_is_broken": (c_bool, [P(staunch_conn)]),
    "staunch_conn_server_id": (status_t, [P(staunch_conn), P(c_uint64), ERR]),
    "staunch_conn_discard": (status_t, [P(staunch_conn), ERR]),
    "staunch_conn_free": (None, [P(staunch_conn)]),
    "staunch_rows_column_count": (c_size_t, [P(staunch_rows)]),
    "staunch_rows_column_type": (status_t, [P(staunch_rows), c_size_t, P(c_uint32), ERR]),
    "staunch_rows_column_types": (c_size_t, [P(staunch_rows), P(c_uint32), c_size_t]),
    "staunch_rows_column_info": (status_t, [P(staunch_rows), c_size_t, P(staunch_column_info), ERR]),
    "staunch_rows_column_infos": (status_t, [P(staunch_rows), P(staunch_column_info), c_size_t, ERR]),
    "staunch_rows_fetch": (status_t, [P(staunch_rows), P(staunch_value), c_size_t, P(c_size_t), ERR]),
    "staunch_rows_fetch_ready": (
        status_t,
        [P(staunch_rows), P(staunch_value), c_size_t, P(c_size_t), P(c_bool), ERR],
    ),
    "staunch_rows_wait_fd": (status_t, [P(staunch_rows), P(c_int), P(c_uint64), ERR]),
    "staunch_rows_next_result": (status_t, [P(staunch_rows), P(c_bool), ERR]),
    "staunch_rows_affected_rows": (c_uint64, [P(staunch_rows)]),
    "staunch_rows_last_insert_id": (c_uint64, [P(staunch_rows)]),
    "staunch_rows_free": (None, [P(staunch_rows)]),
    "staunch_struct_size": (c_size_t, [c_char_p]),
    "staunch_field_offset": (c_size_t, [c_char_p, c_char_p]),
}

# Constants of the header (values checked against it by tests/test_abi.py).
TIMEOUT_DEFAULT = 0xFFFFFFFF
QUERY_STREAM = 1
QUERY_TEXT = 2
QUERY_INTERPOLATE = 4
QUERY_PREPARE = 8

OK = 0
NULL_ARGUMENT = 100
INVALID_UTF8 = 101
BAD_INDEX = 102
WRONG_TYPE = 103
OUT_OF_RANGE = 104
USE_AFTER_RELEASE = 105
INVALID_CONFIG = 106
NULL_VALUE = 107
NO_ROW = 108
PARAM_COUNT = 109
BAD_PARAM_TYPE = 110
CONN_BUSY = 111
INVALID_ARGUMENT = 112
POOL_EXHAUSTED = 200
UNREACHABLE = 201
CONNECT_REJECTED = 202
CONNECT_FAILED = 203
CLOSED = 204
NO_WRITER = 205
SERVER_ERROR = 300
IO_ERROR = 301
BROKEN = 302
STATEMENT_TIMEOUT = 303
CANCELLED = 304
SERVER_UNRESPONSIVE = 305
CONFLICT = 306
INTERNAL = 900
PANIC = 901

# What kind of failure a server error is (staunch_error_category).
CATEGORY_NONE = 0
CATEGORY_INTEGRITY = 1
CATEGORY_PROGRAMMING = 2
CATEGORY_DATA = 3
CATEGORY_NOT_SUPPORTED = 4
CATEGORY_OPERATIONAL = 5
CATEGORY_INTERNAL = 6
CATEGORY_ACCESS = 7
CATEGORY_CONNECTION = 8
CATEGORY_ROLLBACK = 9
CATEGORY_TIMEOUT = 10
CATEGORY_TRANSIENT = 11

PARAM_NULL = 0
PARAM_INT64 = 1
PARAM_UINT64 = 2
PARAM_DOUBLE = 3
PARAM_TEXT = 4
PARAM_BYTES = 5
PARAM_DATE = 6
PARAM_DATETIME = 7
PARAM_TIME = 8
PARAM_DECIMAL = 9

ISOLATION_DEFAULT = 0
ISOLATION_READ_UNCOMMITTED = 1
ISOLATION_READ_COMMITTED = 2
ISOLATION_REPEATABLE_READ = 3
ISOLATION_SERIALIZABLE = 4

COLUMN_NULL = 0
COLUMN_INT = 1
COLUMN_UINT = 2
COLUMN_DOUBLE = 3
COLUMN_DECIMAL = 4
COLUMN_TEXT = 5
COLUMN_BYTES = 6
COLUMN_DATE = 7
COLUMN_DATETIME = 8
COLUMN_TIME = 9

EVENT_NAMES = {
    0: "other",
    1: "connected",
    2: "connect_failed",
    3: "recovered",
    4: "closed",
    5: "validation_failed",
    6: "leak_suspected",
    7: "acquire_timeout",
    8: "pool_closed",
    9: "stale_primary_writable",
    10: "unreplicated_writes",
}


#: Functions that never block: called with the GIL held (through PyDLL), so a
#: thread does not hand the GIL over and back for a call of a microsecond.
#: Everything else (borrowing, statements, returning, closing) releases it.
NEVER_BLOCK = {
    "staunch_version",
    "staunch_version_string",
    "staunch_error_message",
    "staunch_error_server_code",
    "staunch_error_sqlstate",
    "staunch_error_category",
    "staunch_error_free",
    "staunch_status_name",
    "staunch_options_new",
    "staunch_options_set",
    "staunch_options_set_url",
    "staunch_options_set_default",
    "staunch_pool_stats",
    "staunch_pool_soft_evict",
    "staunch_pool_set_max_size",
    "staunch_pool_set_min_idle",
    "staunch_pool_suspend",
    "staunch_pool_resume",
    "staunch_pool_id",
    "staunch_pool_metrics",
    "staunch_pool_name",
    "staunch_pool_leak_threshold_ms",
    "staunch_conn_set_borrower_stack",
    "staunch_cancel_token_new",
    "staunch_cancel_token_is_cancelled",
    "staunch_cancel_token_free",
    "staunch_pending_get_remaining_ms",
    "staunch_conn_last_result",
    "staunch_conn_set_timeout",
    "staunch_conn_is_broken",
    "staunch_conn_server_id",
    "staunch_rows_column_count",
    "staunch_rows_column_info",
    "staunch_rows_column_infos",
    "staunch_rows_column_type",
    "staunch_rows_column_types",
    "staunch_rows_affected_rows",
    "staunch_rows_last_insert_id",
    # Reads what has arrived (and what the socket holds, without waiting).
    "staunch_rows_fetch_ready",
    "staunch_rows_wait_fd",
    "staunch_struct_size",
    "staunch_field_offset",
    # It runs a pool's tracer (Python) for each event kept: where the GIL is
    # held already, which is why those tracers are deferred.
    "staunch_trace_flush",
}
#: Never block on a buffered row set, may on a streaming one: both versions,
#: the GIL-holding one as ``lib.buffered.<name>``.
BUFFERED_NEVER_BLOCK = ("staunch_rows_fetch", "staunch_rows_next_result", "staunch_rows_free")


class _Namespace:
    pass


#: The functions of lib.fast: those the hot paths of a borrow, a statement
#: and a return call (see _fast). Every parameter an integer or a pointer,
#: every result void, a status or an unsigned integer.
FAST = (
    "staunch_pool_get_start",
    "staunch_pending_get_remaining_ms",
    "staunch_pending_get_finish",
    "staunch_pending_get_free",
    "staunch_conn_query_send_ex",
    "staunch_conn_query_recv",
    "staunch_conn_query_batch",
    "staunch_conn_last_result",
    "staunch_conn_free",
    "staunch_rows_fetch_ready",
    "staunch_rows_column_types",
    "staunch_rows_affected_rows",
    "staunch_rows_last_insert_id",
    "staunch_rows_free",
    "staunch_trace_flush",
)
#: A result type's kind for staunch._speedups.fn.
_FAST_RESULTS = {None: 0, ctypes.c_int: 1, ctypes.c_uint32: 2, ctypes.c_uint64: 3, ctypes.c_size_t: 3, ctypes.c_bool: 4}


def _fast(lib, speedups) -> None:
    """lib.fast.<name> (and lib.fast.buffered.<name>) for the FAST
    functions: lib.raw's function, called through staunch._speedups.fn
    where that was built, which spares ctypes' argument conversion (about
    2,500 instructions a call). Called as lib.raw's are, with ints, bytes and
    None only. Without _speedups they are lib.raw's own."""
    lib.fast = _Namespace()
    lib.fast.buffered = _Namespace()
    make = getattr(speedups, "fn", None)
    for name in FAST:
        setattr(lib.fast, name, _fast_one(make, name, getattr(lib.raw, name), name not in NEVER_BLOCK))
        if name in BUFFERED_NEVER_BLOCK:
            setattr(lib.fast.buffered, name, _fast_one(make, name, getattr(lib.raw.buffered, name), False))


def _fast_one(make, name: str, raw, nogil: bool):
    """raw as an Fn (see _fast), or raw itself without staunch._speedups."""
    restype, argtypes = SIGNATURES[name]
    if make is None or restype not in _FAST_RESULTS:
        return raw
    return make(name, ctypes.cast(raw, c_void_p).value, len(argtypes), _FAST_RESULTS[restype], nogil)


def _address_typed(argtypes: list) -> list:
    """argtypes with every pointer, and every size_t, as void*: the same
    function, called with addresses and sizes as ints. ctypes converts an
    int for a void* first thing (its from_param looks for an int before
    anything else); for a POINTER(T), or a size_t, it first asks isinstance
    through the ctypes metaclass, about 1.5k instructions an argument under
    callgrind. size_t and void* are both one machine word, passed alike, on
    every platform the package is built for (LP64). The hot path of a
    statement passes ints it keeps."""
    word = ctypes.sizeof(c_size_t) == ctypes.sizeof(c_void_p)
    return [
        c_void_p if (isinstance(t, type) and issubclass(t, ctypes._Pointer)) or (word and t is c_size_t) else t
        for t in argtypes
    ]


class LibraryError(ImportError):
    """libstaunch could not be found or loaded, or does not match this package."""


def _library_path() -> str:
    override = os.environ.get("STAUNCH_LIBRARY")
    if override:
        if not os.path.isfile(override):
            raise LibraryError(f"STAUNCH_LIBRARY={override!r} is not a file (it must name libstaunch.so)")
        return override
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "libstaunch.so")
    if os.path.isfile(bundled):
        return bundled
    raise LibraryError(
        f"libstaunch.so is not in {here}: install the package with "
        "`pip install ./bindings/python` (which builds it with cargo), or set "
        "STAUNCH_LIBRARY to the path of a libstaunch.so"
    )


def load(path: str | None = None) -> ctypes.CDLL:
    """Loads the library, declares every signature, and checks version and layout."""
    path = path or _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise LibraryError(f"cannot load {path}: {e}") from None
    missing = []
    for name, (restype, argtypes) in SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    held = ctypes.PyDLL(path)
    lib.buffered = _Namespace()
    # lib.raw.<name> (and lib.raw.buffered.<name>): each function again,
    # pointers typed void* (see _address_typed), the GIL handled the same.
    lib.raw = _Namespace()
    lib.raw.buffered = _Namespace()
    for name, (restype, argtypes) in SIGNATURES.items():
        if name in missing:
            continue
        # Indexing makes a new function object (attribute access caches
        # one, which the typed declarations below use).
        fn = (held if name in NEVER_BLOCK else lib)[name]
        fn.restype = restype
        fn.argtypes = _address_typed(argtypes)
        setattr(lib.raw, name, fn)
    for name in NEVER_BLOCK | set(BUFFERED_NEVER_BLOCK):
        if name in missing:
            continue
        restype, argtypes = SIGNATURES[name]
        fn = getattr(held, name)
        fn.restype = restype
        fn.argtypes = argtypes
        if name in NEVER_BLOCK:
            setattr(lib, name, fn)
        else:
            setattr(lib.buffered, name, fn)
            raw = held[name]
            raw.restype = restype
            raw.argtypes = _address_typed(argtypes)
            setattr(lib.raw.buffered, name, raw)
    if "staunch_version" in missing:
        raise LibraryError(f"{path} is not libstaunch (no staunch_version)")
    version = lib.staunch_version()
    major, minor = version // 10000, version // 100 % 100
    vstr = lib.staunch_version_string().decode()
    if major != ABI_MAJOR or minor < ABI_MINOR:
        raise LibraryError(
            f"{path} is libstaunch {vstr} (ABI {major}.{minor}); this package needs "
            f"ABI {ABI_MAJOR}.x with x >= {ABI_MINOR}: reinstall the package or point "
            "STAUNCH_LIBRARY at a matching library"
        )
    if missing:
        raise LibraryError(f"{path} ({vstr}) lacks {', '.join(missing)}")
    for cname, cls in STRUCTS.items():
        size = lib.staunch_struct_size(cname.encode())
        # Arrays of these cross the ABI: fixed for 1.x. The others are
        # size-prefixed and may grow at the end in a later minor version.
        fixed = cname in ("staunch_datetime", "staunch_time", "staunch_param", "staunch_value")
        if size != ctypes.sizeof(cls) if fixed else size < ctypes.sizeof(cls):
            raise LibraryError(
                f"{path}: sizeof({cname}) is {size} in the library, {ctypes.sizeof(cls)} in this package"
            )
    return lib
