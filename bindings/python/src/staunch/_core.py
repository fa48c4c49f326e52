"""Pool, Connection and cursors over the C ABI."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import datetime as _datetime
import itertools
import math
import os
import queue
import struct
import threading
import traceback
import weakref
from collections.abc import Mapping
from ctypes import byref, c_bool, c_size_t, c_uint64
from threading import get_ident as _get_ident
from time import time_ns as _time_ns

from . import _convert as C
from . import _errors as E
from . import _ffi as F
from . import _interrupt as I

lib: ctypes.CDLL = None  # set by __init__ once the library is loaded

#: True once a pool with a tracer is open: its events wait in the library,
#: on the thread that raised them, for _flush_traces (see _on_trace).
_deferring = False


def _flush_traces() -> None:
    """Runs the tracers of the events this thread's last calls raised (none
    unless a pool has a tracer), with the GIL held: after each call into the
    library that may raise one."""
    if _deferring:
        lib.fast.staunch_trace_flush()


_ERR = ctypes.POINTER(F.staunch_error)
_CONN_P = ctypes.POINTER(F.staunch_conn)


def _raise(status: int, err) -> None:
    raise E.from_error(status, err)


def _check(fn, *args) -> None:
    """Calls fn(*args, &err) and raises the error it reports, if any."""
    err = _ERR()
    st = fn(*args, byref(err))
    if st:
        _raise(st, err)


def _interruptible(kind: str, handle, fn, args: tuple, err_ref) -> int:
    """fn(*args, err_ref), a call that may block: on the main thread, Ctrl-C
    cancels it through handle (a cancel token for a "get", the connection
    for a "stmt"). Returns its status, or raises KeyboardInterrupt when
    Ctrl-C cancelled it (the caller frees what err_ref points to)."""
    # Only the main thread can be interrupted (I.watching): other threads
    # skip the call, a thread-id comparison inline.
    if handle is None or _get_ident() != I.MAIN_IDENT or not (I.INSTALLED or I.watching()):
        st = fn(*args, err_ref)
        if _deferring:
            lib.fast.staunch_trace_flush()
        return st
    try:
        st, interrupted = I.call(kind, handle, fn, args, err_ref)
    finally:
        _flush_traces()
    if interrupted and st == F.CANCELLED:
        raise KeyboardInterrupt
    return st


def _blocking(kind: str, handle, fn, *args) -> None:
    """fn(*args, &err) as _check, through _interruptible."""
    err = _ERR()
    try:
        st = _interruptible(kind, handle, fn, args, byref(err))
    except KeyboardInterrupt:
        if err:
            lib.staunch_error_free(err)
        raise
    if st:
        _raise(st, err)


def _timeout_ms(timeout, what: str) -> int:
    if timeout is None:
        return F.TIMEOUT_DEFAULT
    if isinstance(timeout, _datetime.timedelta):
        timeout = timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise E.ConfigError(0, f"{what} must be a number of seconds or a timedelta, not {type(timeout).__name__}")
    if math.isnan(timeout) or timeout < 0:
        raise E.ConfigError(0, f"{what} must not be negative (got {timeout})")
    ms = math.ceil(timeout * 1000)
    if ms >= F.TIMEOUT_DEFAULT:
        raise E.ConfigError(0, f"{what} is too large (got {timeout} s)")
    return ms


def _knob_text(name: str, value) -> str:
    if value is None:
        return "off"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, _datetime.timedelta):
        return f"{math.ceil(value.total_seconds() * 1000)}ms"
    if isinstance(value, str):
        return value
    raise E.ConfigError(
        0,
        f"knob {name}: a {type(value).__name__} is not a knob value "
        "(give a str such as '250ms', an int, a bool, a timedelta or None for off)",
    )


def _connect_attrs_text(attrs):
    """The knob ``connect_attrs`` (``name:value,name:value``) from a dict; a
    str is the knob's text already."""
    if isinstance(attrs, str):
        return attrs
    if not isinstance(attrs, Mapping):
        raise E.ConfigError(0, f"connect_attrs must be a dict or a str, not {type(attrs).__name__}")
    parts = []
    for k, v in attrs.items():
        if not isinstance(k, str) or not isinstance(v, (str, int)) or isinstance(v, bool):
            raise E.ConfigError(0, "connect_attrs: names must be str and values str or int")
        v = str(v)
        if "," in k or ":" in k or "," in v:
            raise E.ConfigError(
                0,
                f"connect_attrs: the attribute {k!r} has a ',' or ':' in its name or a ',' in its value "
                "(the knob is name:value,name:value)",
            )
        parts.append(f"{k}:{v}")
    return ",".join(parts)


# --- events ------------------------------------------------------------------------------


class Event:
    """One pool event, delivered to ``on_event`` on the pool's
    ``staunch-events`` thread (never on a pool thread, never under a lock)."""

    __slots__ = ("kind", "status", "connection_id", "count", "duration_us", "message", "pool_id")

    def __init__(self, kind, status, connection_id, count, duration_us, message, pool_id):
        self.kind = kind
        self.status = status
        self.connection_id = connection_id
        self.count = count
        self.duration_us = duration_us
        self.message = message
        self.pool_id = pool_id

    def __repr__(self) -> str:
        return f"Event({self.kind!r}, {self.message!r})"


# One C callback and one finalizer for every pool, alive as long as the
# module: user_data is a key into _sinks, so no ctypes thunk can be freed
# while the library may still call it.
_sinks: dict = {}
_sink_ids = itertools.count(1)
_sinks_lock = threading.Lock()


def _on_event(ev_p, user_data):
    try:
        sink = _sinks.get(user_data)
        if sink is None:
            return
        ev = ev_p.contents
        sink.put(
            Event(
                F.EVENT_NAMES.get(ev.kind, "other"),
                ev.status,
                ev.connection_id,
                ev.count,
                ev.duration_us,
                (ev.message or b"").decode("utf-8", "replace"),
                ev.pool_id,
            )
        )
    except BaseException:  # noqa: BLE001 (never let anything reach the C caller)
        pass


def _on_final(user_data):
    try:
        with _sinks_lock:
            sink = _sinks.pop(user_data, None)
        if sink is not None:
            sink.put(None)
    except BaseException:  # noqa: BLE001
        pass


_C_ON_EVENT = F.EVENT_CALLBACK(_on_event)
_C_ON_FINAL = F.FINALIZER(_on_final)


def _dispatch(q: queue.SimpleQueue, callback) -> None:
    while True:
        ev = q.get()
        if ev is None:
            return
        try:
            callback(ev)
        except Exception:  # noqa: BLE001
            import traceback

            traceback.print_exc()


# --- traces ------------------------------------------------------------------------------


_TRACE_KINDS = {
    F.TRACE_ACQUIRE_START: "acquire_start",
    F.TRACE_ACQUIRE_END: "acquire_end",
    F.TRACE_STATEMENT_START: "statement_start",
    F.TRACE_STATEMENT_END: "statement_end",
}


def _text_at(ptr, n: int):
    return ptr[:n].decode("utf-8", "replace") if ptr else None


class TraceEvent:
    """A start or an end of a borrow (``kind`` "acquire_start",
    "acquire_end") or of a statement ("statement_start", "statement_end"),
    handed to a pool's ``tracer`` on the borrowing thread, in order, as the
    call that raised it returns (the library keeps it until then, so that
    the tracer runs where the thread holds the GIL anyway): ``time_ns`` is
    when it happened, as ``time.time_ns()`` gives it.
    ``pool`` is the pool's name and ``pool_id`` its number (as in ``Event``);
    ``server`` is "host:port" ("" at an acquire's start or a failed one);
    ``statement`` the statement's text (None when it has none: it may hold
    what the application put in it); at an end, ``duration_us``, and when it
    failed ``error`` (the message) and ``error_code`` (the server's error
    number, 0 if the error is not the server's)."""

    __slots__ = (
        "kind",
        "pool",
        "pool_id",
        "server",
        "connection_id",
        "statement",
        "duration_us",
        "error",
        "error_code",
        "time_ns",
    )

    def __init__(
        self, kind, pool, pool_id, server, connection_id, statement, duration_us, error, error_code, time_ns=None
    ):
        self.kind = kind
        self.pool = pool
        self.pool_id = pool_id
        self.server = server
        self.connection_id = connection_id
        self.statement = statement
        self.duration_us = duration_us
        self.error = error
        self.error_code = error_code
        self.time_ns = _time_ns() if time_ns is None else time_ns

    def __repr__(self) -> str:
        return f"TraceEvent({self.kind!r}, pool={self.pool!r}, connection_id={self.connection_id})"


# As the event sink: one C callback and one finalizer for every pool with a
# tracer, alive as long as the module; user_data is a key into _tracers, whose
# entry is [the tracer, the pool's id (set once it is open), whether a failure
# of the tracer was logged]. Pools without a tracer register nothing (and so
# cost nothing).
_tracers: dict = {}


def _trace_failed(entry, exc: BaseException | None = None) -> None:
    """Logs, the first time for its pool, exc (None: the failure being handled)."""
    try:
        if entry is not None and not entry[2]:
            entry[2] = True
            import logging

            logging.getLogger("staunch").error(
                "the pool's tracer failed (later failures are not logged)", exc_info=exc or True
            )
    except BaseException:  # noqa: BLE001
        pass


def _on_trace(ev_p, user_data):
    """The trace callback through ctypes, where staunch._speedups is not
    (whose callback does the same in C): runs a pool's tracer on one event,
    its texts decoded. It runs (deferred: from staunch_trace_flush, with the
    GIL held) four times a checkout."""
    entry = None
    try:
        entry = _tracers.get(user_data)
        if entry is None:
            return
        ev = ev_p.contents
        entry[0](
            TraceEvent(
                _TRACE_KINDS.get(ev.kind, "other"),
                _text_at(ev.pool, ev.pool_len),
                entry[1],
                _text_at(ev.server, ev.server_len) or "",
                ev.connection_id,
                _text_at(ev.statement, ev.statement_len),
                ev.duration_us,
                _text_at(ev.error, ev.error_len),
                ev.error_code,
                _time_ns() - ev.held_us * 1000,
            )
        )
    except BaseException:  # noqa: BLE001 (never let anything reach the C caller)
        _trace_failed(entry)


def _on_trace_final(user_data):
    try:
        _tracers.pop(user_data, None)
    except BaseException:  # noqa: BLE001
        pass


if C._speedups is not None:
    # The same event, made in C by the trace callback below (attributes,
    # constructor and repr alike; its instances are not the cyclic GC's).
    C._speedups.TraceEvent.__doc__ = TraceEvent.__doc__
    TraceEvent = C._speedups.TraceEvent  # noqa: F811

#: The trace callback given to the library: staunch._speedups' (which makes
#: the TraceEvent and calls the tracer in C), or _on_trace through ctypes.
_C_ON_TRACE = F.TRACE_CALLBACK(
    C._speedups.set_trace_sink(_tracers, _TRACE_KINDS, _trace_failed) if C._speedups is not None else _on_trace,
)
_C_ON_TRACE_FINAL = F.FINALIZER(_on_trace_final)

#: The tracer of pools opened without one (``staunch.otel.instrument()``).
default_tracer = None


# --- native handles --------------------------------------------------------------------


class _Handle:
    """A native handle's life, for every class holding one (as wasmtime-py's
    ``Managed``): ``_ptr`` (None once closed), ``close()`` freeing it once
    with ``_free``, ``with``, a finalizer freeing one dropped open with
    ``_free_nowait`` (which must not block), and ``_live()``, the handle or
    the error of a use after close. ``close()`` swaps the handle out under
    the GIL alone; a class that threads share locks in its own (CancelToken).
    Kept to two Python calls a close: a checkout closes a cursor and a
    connection (see the README's instructions per operation)."""

    _ptr = None
    #: The message of the InterfaceError a use after close raises.
    _closed_message = "the object is closed"

    def _free(self, ptr) -> None:
        raise NotImplementedError

    def _free_nowait(self, ptr) -> None:
        self._free(ptr)

    def _closed_error(self) -> E.Error:
        return E.InterfaceError(0, self._closed_message, status=F.USE_AFTER_RELEASE)

    def _live(self):
        p = self._ptr
        if p is None:
            raise self._closed_error()
        return p

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        """Frees what this object holds; every later use raises. Idempotent."""
        p, self._ptr = self._ptr, None
        if p is not None:
            self._free(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        # lib is None once the interpreter has torn the module down.
        p = self._ptr
        if p is not None and lib is not None:
            self._ptr = None
            self._free_nowait(p)


# --- cancel tokens ---------------------------------------------------------------------


def _new_token():
    tp = ctypes.POINTER(F.staunch_cancel_token)()
    _check(lib.staunch_cancel_token_new, byref(tp))
    return tp


class CancelToken(_Handle):
    """Cancels the ``Pool.connection(cancel=token)`` calls waiting with it,
    from any thread; it stays cancelled (make one per request)."""

    _closed_message = "the cancel token was closed"

    def __init__(self):
        # Protects the following fields: _ptr, the calls waiting with it
        # (close() leaves the free to the last of them), close() asked.
        self._lock = threading.Lock()
        self._users = 0
        self._closing = False
        self._ptr = _new_token()

    def cancel(self) -> None:
        with self._lock:
            if self._ptr:
                lib.staunch_cancel_token_cancel(self._ptr, None)

    @property
    def cancelled(self) -> bool:
        with self._lock:
            return bool(self._ptr) and lib.staunch_cancel_token_is_cancelled(self._ptr)

    @contextlib.contextmanager
    def _use(self):
        with self._lock:
            ptr = self._live()
            self._users += 1
        try:
            yield ptr
        finally:
            with self._lock:
                self._users -= 1
                last = self._closing and self._users == 0
            if last:
                self.close()

    def close(self) -> None:
        # Under the lock, with the count of users: a token still waited
        # with is freed by its last user (_use), never under it. (Its
        # finalizer needs no lock: no call can be using it then.)
        with self._lock:
            self._closing = True
            if self._users:
                return
            p, self._ptr = self._ptr, None
        if p is not None:
            self._free(p)

    def _free(self, ptr) -> None:
        lib.staunch_cancel_token_free(ptr)


_main_tokens: list = []  # the main thread's reusable cancel token (only it uses this)


def _main_token():
    # Renewed once Ctrl-C has cancelled it (the watcher lists it in
    # I.SPENT: asking the library on every borrow costs a foreign call).
    while I.SPENT:
        tp = I.SPENT.pop()
        if _main_tokens and _main_tokens[0] is tp:
            lib.staunch_cancel_token_free(_main_tokens.pop())
    if not _main_tokens:
        _main_tokens.append(_new_token())
    return _main_tokens[0]


# --- pool -------------------------------------------------------------------------------

_open_pools: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for p in list(_open_pools):
        try:
            p.close()
        except Exception:  # noqa: BLE001
            pass


class PoolStats:
    """A snapshot of ``Pool.stats()``: gauges and counters, as attributes."""

    __slots__ = tuple(F.STATS_FIELDS)

    def __init__(self, s: F.staunch_stats):
        for name in F.STATS_FIELDS:
            setattr(self, name, getattr(s, name))

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in F.STATS_FIELDS}

    def __repr__(self) -> str:
        return (
            f"PoolStats(total={self.total}, active={self.active}, idle={self.idle}, "
            f"waiting={self.waiting}, acquired={self.acquired}, created={self.created})"
        )


def _give_stack(conn) -> None:
    """Gives the library the borrower's Python stack (outside staunch's own
    frames) for a leak report of this borrow."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    text = "".join(traceback.format_list(frames)).rstrip("\n").encode("utf-8", "replace")
    _check(lib.staunch_conn_set_borrower_stack, conn, text, len(text))


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class Pool(_Handle):
    """A pool of MySQL/MariaDB connections.

    ``Pool("mysql://user:pw@host:3306/db?max_size=8", connect_timeout="1s")``:
    the URL and the knobs (keyword arguments, applied after the URL) are those
    of the staunch README. Knob values are str (``"250ms"``), int, bool,
    ``timedelta`` or None (``off``). ``autocommit`` (default False, as PEP 249
    wants) is the sessions' autocommit; ``on_event`` a callable receiving
    ``Event`` objects on a thread of its own. ``prepare_selects`` (default
    False) sends a lone SELECT without parameters as a prepared statement
    (the binary protocol: large results read about twice as fast) instead
    of as text: once per connection and SQL text (the library caches 32
    statements per connection), so it pays for texts run again and again
    and costs a round trip more for each new one. ``tracer`` (default:
    ``staunch.otel.instrument()``'s, else none) is a callable receiving a
    ``TraceEvent`` for the start and the end of each borrow and statement, on
    the borrowing thread, as the call returns: ``staunch.otel.Spans`` makes
    OpenTelemetry spans of them. ``connect_attrs`` (the
    knob: ``{"service": "billing"}`` or ``"service:billing"``) and
    ``program_name`` (the knob, PyMySQL's name) are the connection attributes a server shows
    in ``performance_schema.session_connect_attrs``. Opening does not
    connect. ``close()`` (idempotent; also ``with``): waiters fail with
    PoolClosed, idle connections close now, borrowed ones when returned.
    """

    #: The class of the connections it lends (the MySQLdb API's has mysqlclient's methods).
    _conn_cls = None

    def __init__(
        self,
        url: str | None = None,
        *,
        autocommit: bool = False,
        on_event=None,
        prepare_selects: bool = False,
        tracer=None,
        **knobs,
    ):
        self.autocommit = bool(autocommit)
        self.prepare_selects = bool(prepare_selects)
        if url is not None and not isinstance(url, str):
            raise E.ConfigError(0, f"url must be a str, not {type(url).__name__}")
        if on_event is not None and not callable(on_event):
            raise E.ConfigError(0, "on_event must be callable")
        if tracer is None:
            tracer = default_tracer
        if tracer is not None and not callable(tracer):
            raise E.ConfigError(0, "tracer must be callable")
        trace_key = None
        opts = ctypes.POINTER(F.staunch_options)()
        _check(lib.staunch_options_new, byref(opts))
        try:
            if url is not None:
                _check(lib.staunch_options_set_url, opts, url.encode("utf-8", "surrogatepass"))
            # As PyMySQL and mysqlclient: parameters are written into the
            # statement by the library (escaped for the session's real
            # sql_mode), one round trip, no server-side prepare. A default:
            # interpolate_params in the URL or as a keyword wins.
            _check(lib.staunch_options_set_default, opts, b"interpolate_params", b"true")
            # And a statement without parameters goes as text, as written.
            _check(lib.staunch_options_set_default, opts, b"text_without_params", b"true")
            if "connect_attrs" in knobs:
                a = knobs["connect_attrs"]
                knobs["connect_attrs"] = "" if a is None else _connect_attrs_text(a)
            for name, value in knobs.items():
                _check(lib.staunch_options_set, opts, name.encode(), _knob_text(name, value).encode())
            # The sessions' autocommit is the core's knob (set with its
            # settings statement, after init_sql, on each new session and
            # after each reset), so an init_sql of the URL or of a keyword
            # stays as given.
            _check(lib.staunch_options_set, opts, b"autocommit", b"true" if self.autocommit else b"false")
            if on_event is not None:
                q: queue.SimpleQueue = queue.SimpleQueue()
                key = next(_sink_ids)
                with _sinks_lock:
                    _sinks[key] = q
                threading.Thread(target=_dispatch, args=(q, on_event), name="staunch-events", daemon=True).start()
                try:
                    _check(lib.staunch_options_set_event_callback, opts, _C_ON_EVENT, key, _C_ON_FINAL)
                except E.Error:
                    _on_final(key)
                    raise
            if tracer is not None:
                trace_key = next(_sink_ids)
                _tracers[trace_key] = [tracer, 0, False]
                try:
                    # Deferred: a callback during a call (the GIL released)
                    # would have to take the GIL back, four times a
                    # checkout, against every other thread; kept, the
                    # events run at _flush_traces, where it is held.
                    _check(
                        lib.staunch_options_set_tracer_ex,
                        opts,
                        _C_ON_TRACE,
                        trace_key,
                        _C_ON_TRACE_FINAL,
                        F.TRACE_DEFERRED,
                    )
                except E.Error:
                    _on_trace_final(trace_key)
                    raise
                global _deferring
                _deferring = True
            pool = ctypes.POINTER(F.staunch_pool)()
            _check(lib.staunch_pool_open_options, opts, byref(pool))
            self._ptr = pool
            if trace_key is not None:
                entry = _tracers.get(trace_key)
                if entry is not None:
                    entry[1] = lib.staunch_pool_id(pool)
            # With leak detection on, each borrow gives the library its
            # Python traceback for the report (a few tens of µs a borrow).
            self._leak_stacks = lib.staunch_pool_leak_threshold_ms(pool) > 0
        finally:
            lib.staunch_options_free(opts)
        _open_pools.add(self)

    # -- borrowing

    def _closed_error(self) -> E.Error:
        return E.PoolClosed(0, "the pool is closed", status=F.CLOSED)

    def _get(self, timeout, read: bool, cancel: CancelToken | None) -> Connection:
        pool = self._live()
        ms = F.TIMEOUT_DEFAULT if timeout is None else _timeout_ms(timeout, "timeout")
        out = _CONN_P()
        fn = lib.staunch_pool_get_read_cancellable if read else lib.staunch_pool_get_cancellable
        try:
            if cancel is not None:
                if not isinstance(cancel, CancelToken):
                    raise E.ConfigError(0, f"cancel must be a staunch.CancelToken, not {type(cancel).__name__}")
                with cancel._use() as tp:
                    _blocking("get", tp, fn, pool, ms, tp, byref(out))
            elif _get_ident() != I.MAIN_IDENT or not (I.INSTALLED or I.watching()):
                _blocking("get", None, fn, pool, ms, None, byref(out))
            else:
                # The main thread: a token of its own, reused until Ctrl-C cancels it.
                tp = _main_token()
                _blocking("get", tp, fn, pool, ms, tp, byref(out))
            if self._leak_stacks:
                _give_stack(out)
            return (self._conn_cls or Connection)(self, out)
        except BaseException:
            if out:
                lib.staunch_conn_free(out)
                _flush_traces()
            raise

    def connection(self, timeout=None, *, cancel: CancelToken | None = None) -> Connection:
        """Borrows a connection, waiting at most ``timeout`` seconds (None: the
        pool's ``connection_timeout``). Use as ``with pool.connection() as conn:``:
        committed and returned on a clean exit, rolled back and returned on an
        exception. Raises ``PoolExhausted`` or ``DatabaseUnreachable`` (both
        ``PoolTimeout``, an ``OperationalError``) when the time is up, and
        ``Cancelled`` when ``cancel`` (a CancelToken) is cancelled meanwhile,
        from any thread. Ctrl-C on the main thread interrupts the wait too."""
        return self._get(timeout, False, cancel)

    def connection_read(self, timeout=None, *, cancel: CancelToken | None = None) -> Connection:
        """``connection()`` for reading: a healthy replica of a topology pool."""
        return self._get(timeout, True, cancel)

    def try_connection(self) -> Connection | None:
        """A connection if one is idle right now, else None; never waits."""
        out = _CONN_P()
        _check(lib.staunch_pool_try_get, self._live(), byref(out))
        _flush_traces()
        if out and self._leak_stacks:
            _give_stack(out)
        return (self._conn_cls or Connection)(self, out) if out else None

    # -- the rest

    def stats(self) -> PoolStats:
        s = F.staunch_stats()
        s.size = ctypes.sizeof(s)
        _check(lib.staunch_pool_stats, self._live(), byref(s))
        return PoolStats(s)

    def metrics_text(self) -> str:
        """The pool's figures as Prometheus text (exposition format 0.0.4),
        named after OpenTelemetry's ``db.client.connection.*`` conventions; the
        first call turns on the timing of borrows and statements (see the
        README's metrics section). ``staunch.prometheus.StaunchCollector``
        hands it to ``prometheus_client``."""
        return self._text(lib.staunch_pool_metrics, 16384)

    @property
    def name(self) -> str:
        """The pool's name: ``pool_name`` from the URL, or ``staunch-N``."""
        return self._text(lib.staunch_pool_name, 64)

    def _text(self, fn, cap: int) -> str:
        # snprintf's rules: *len is the whole length; a cut copy asks again
        # with room to spare (the figures move between the two calls).
        n = ctypes.c_size_t()
        while True:
            buf = ctypes.create_string_buffer(cap)
            _check(fn, self._live(), buf, cap, byref(n))
            if n.value < cap:
                return buf.raw[: n.value].decode()
            cap = n.value + 1024

    def soft_evict(self) -> None:
        """Retires every connection (idle ones now, borrowed ones on return)."""
        _check(lib.staunch_pool_soft_evict, self._live())

    def resize(self, max_size: int | None = None, min_idle: int | None = None) -> None:
        """Changes ``max_size`` and/or ``min_idle`` while the pool runs (per
        host, as the knobs). ``max_size`` goes up to the ``max_size_cap`` knob
        (fixed at open; by default twice ``max_size``, at least 64);
        ``min_idle`` never above ``max_size``. A bad value raises
        ``ConfigError`` naming the knob and changes nothing. Lowering
        ``max_size`` takes no borrowed connection away: connections above it
        are closed as they come back (idle ones at once), counted in
        ``stats().closed_evicted``. Raising it makes connections for the
        callers waiting now. ``stats().max_size`` is the size in force.
        Never blocks."""
        pool = self._live()
        for name, v in (("max_size", max_size), ("min_idle", min_idle)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 0xFFFFFFFF):
                raise E.ConfigError(0, f"{name} must be a non-negative int, got {v!r}")
        if max_size is not None and min_idle is not None and min_idle > max_size:
            raise E.ConfigError(0, f"min_idle ({min_idle}) must not exceed max_size ({max_size})")
        if max_size is None:
            if min_idle is not None:
                _check(lib.staunch_pool_set_min_idle, pool, min_idle)
            return
        try:
            _check(lib.staunch_pool_set_max_size, pool, max_size)
        except E.ConfigError as e:
            # Below the current min_idle: a min_idle given with it goes first.
            if min_idle is None or "below min_idle" not in str(e):
                raise
            _check(lib.staunch_pool_set_min_idle, pool, min_idle)
            _check(lib.staunch_pool_set_max_size, pool, max_size)
            return
        if min_idle is not None:
            _check(lib.staunch_pool_set_min_idle, pool, min_idle)

    def suspend(self) -> None:
        """Stops lending connections until ``resume()``: ``connection()``
        waits, within its timeout (and Ctrl-C or a CancelToken end it as
        usual); ``try_connection()`` finds none. Borrowed connections are
        unaffected. Idempotent; never blocks."""
        _check(lib.staunch_pool_suspend, self._live())

    def resume(self) -> None:
        """Ends ``suspend()``: waiting callers proceed. Idempotent."""
        _check(lib.staunch_pool_resume, self._live())

    @property
    def id(self) -> int:
        return lib.staunch_pool_id(self._live())

    def _free(self, ptr) -> None:
        lib.staunch_pool_free(ptr)
        _open_pools.discard(self)

    def _free_nowait(self, ptr) -> None:
        lib.staunch_pool_free_nowait(ptr)

    def __repr__(self) -> str:
        return f"<staunch.Pool id={self.id if self._ptr else '-'}{' closed' if self._ptr is None else ''}>"


# --- connection -------------------------------------------------------------------------


def _autocommit_sql(on: bool) -> bytes:
    """The statement that turns the session's autocommit on or off (the
    blocking face's setter and staunch.aio's send the same)."""
    return b"SET autocommit=1" if on else b"SET autocommit=0"


class Connection(_Handle):
    """A connection borrowed from a Pool (PEP 249 connection object).

    ``close()`` returns it to the pool (an open transaction is rolled back,
    a changed session reset); every later call raises InterfaceError. Use one
    thread at a time, except ``cancel()``, which any thread may call.
    """

    Warning = E.Warning
    Error = E.Error
    InterfaceError = E.InterfaceError
    DatabaseError = E.DatabaseError
    DataError = E.DataError
    OperationalError = E.OperationalError
    IntegrityError = E.IntegrityError
    InternalError = E.InternalError
    ProgrammingError = E.ProgrammingError
    NotSupportedError = E.NotSupportedError

    _closed_message = "the connection was returned to its pool (closed)"

    def __init__(self, pool: Pool, ptr):
        self._ptr = ptr
        self._pool_ref = pool
        self.messages: list = []
        # For the statement path (see _query): made at the first statement.
        self._cells = None

    def _call(self, fn, *args):
        """A blocking statement call: interruptible by Ctrl-C on the main thread."""
        c = self._live()
        _blocking("stmt", c, fn, c, *args)

    def _new_cells(self, addr: int | None = None) -> tuple:
        """(cells, the cells' address, the handle's address): three reused
        out-values (a row set, an error, a count) and the connection, as
        the ints lib.raw's functions take (see _ffi._address_typed).
        ``addr``: the handle's address, when the caller has it as an int."""
        cells = (c_size_t * 3)()
        if addr is None:
            # Read from the pointer's own storage: ctypes.cast(handle, ...)
            # would tie the handle to a dict that holds it back, a cycle per
            # borrow left for the cyclic GC to find.
            addr = ctypes.c_void_p.from_buffer(self._live()).value
        self._cells = t = (cells, ctypes.addressof(cells), addr)
        return t

    def _query(self, sql: bytes, params, n: int, flags: int, recycle: int = 0) -> tuple:
        """staunch_conn_query_batch, as _call would run it, through lib.fast:
        the row set's address and this thread's batch (see _batch), filled.
        recycle: a buffered row set to free first (the cursor's previous
        answer), 0 for none; freed whatever happens."""
        p = self._ptr
        if p is None:
            if recycle:
                lib.fast.buffered.staunch_rows_free(recycle)
            p = self._live()  # raises
        if params is not None:
            params = ctypes.addressof(params)  # alive in the caller's frame
        cells, base, addr = self._cells or self._new_cells()
        batch = _tls.__dict__.get("batch") or _batch()
        words = batch[0]
        words[1] = recycle
        fn = lib.fast.staunch_conn_query_batch
        try:
            st = _interruptible("stmt", p, fn, (addr, sql, params, n, flags, batch[1], base), base + 8)
        except KeyboardInterrupt:
            st = None
        rows, err = cells[0], cells[1]
        cells[0] = cells[1] = 0
        if st == 0:
            return rows, batch
        left = words[1]  # the call frees it first: left only if never called (Ctrl-C)
        if left:
            words[1] = 0
            lib.fast.buffered.staunch_rows_free(left)
        if rows:
            lib.fast.staunch_rows_free(rows)
            _flush_traces()
        err = ctypes.cast(err, _ERR) if err else None
        if st is None:  # Ctrl-C cancelled it
            if err:
                lib.staunch_error_free(err)
            raise KeyboardInterrupt
        _raise(st, err)

    def _call_rows(self, fn, rows, *args):
        """A blocking call on a streaming row set (Ctrl-C cancels its statement)."""
        _blocking("stmt", self._ptr, fn, rows, *args)

    def _last_result(self) -> F.staunch_result:
        """The session state the core tracks (no round trip)."""
        r = F.staunch_result()
        r.size = ctypes.sizeof(r)
        _check(lib.staunch_conn_last_result, self._live(), byref(r))
        return r

    def _txn_open(self) -> bool:
        """Whether a transaction is open, as the core knows it (no round
        trip): from the server's status flags after each statement, so a
        read that opened none (SELECT 1 under autocommit=0) leaves nothing
        to end. The call goes through lib.fast with the handle's address
        (see _new_cells) and this thread's staunch_result buffer, which
        spares the struct, byref and argument checks of a typed call on
        every borrow. True when the core cannot say (a streamed answer
        still holds the connection): the COMMIT or ROLLBACK then reports
        what is wrong."""
        if self._ptr is None:
            self._live()  # raises
        addr = (self._cells or self._new_cells())[2]
        t = _tls.__dict__.get("result") or _result_buffer()
        if lib.fast.staunch_conn_last_result(addr, t[1], None):
            return True
        return t[0][_IN_TRANSACTION]

    # -- PEP 249

    def cursor(self, cursorclass=None) -> Cursor:
        self._live()
        return (cursorclass or Cursor)(self)

    def commit(self) -> None:
        """Commits the transaction (nothing is sent when none is open)."""
        if self._txn_open():
            self._call(lib.staunch_conn_commit)

    def rollback(self) -> None:
        """Rolls the transaction back (nothing is sent when none is open)."""
        if self._txn_open():
            self._call(lib.staunch_conn_rollback)

    def _free(self, ptr) -> None:
        # Back to its pool: what was not committed is rolled back there.
        # By address where the statement path has it (see _new_cells).
        c = self._cells
        if c is not None:
            lib.fast.staunch_conn_free(c[2])
        else:
            lib.raw.staunch_conn_free(ptr)
        _flush_traces()

    def _free_nowait(self, ptr) -> None:
        # Closed, not returned: no rollback to wait for, and no borrower
        # after it sees what it left.
        lib.staunch_conn_discard(ptr, None)
        lib.staunch_conn_free(ptr)
        _flush_traces()

    # -- extensions

    def begin(self, isolation: str | None = None, read_only: bool = False) -> None:
        """START TRANSACTION, with an isolation level for this transaction only
        ('READ UNCOMMITTED', 'READ COMMITTED', 'REPEATABLE READ', 'SERIALIZABLE')."""
        o = F.staunch_txn_options()
        o.size = ctypes.sizeof(o)
        o.isolation = _ISOLATION[_norm_isolation(isolation)] if isolation else F.ISOLATION_DEFAULT
        o.read_only = bool(read_only)
        self._call(lib.staunch_conn_begin_ex, byref(o))

    @property
    def autocommit(self) -> bool:
        return self._last_result().autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        value = bool(value)
        if value != self.autocommit:
            self._call(lib.staunch_conn_execute, _autocommit_sql(value), None, 0, None, None)

    def get_autocommit(self) -> bool:
        return self.autocommit

    def ping(self, reconnect: bool = False) -> None:
        """COM_PING; raises OperationalError when the connection is dead
        (``reconnect`` is accepted for PyMySQL compatibility and ignored:
        return the connection and borrow another)."""
        self._call(lib.staunch_conn_ping)

    def set_timeout(self, seconds) -> None:
        """This borrow's statement time limit (None: the pool's query_timeout;
        0: none). A statement past it raises StatementTimeout."""
        ms = F.TIMEOUT_DEFAULT if seconds is None else _timeout_ms(seconds, "statement timeout")
        _check(lib.staunch_conn_set_timeout, self._live(), ms)

    def cancel(self) -> bool:
        """Cancels the statement running on this connection, from any thread
        (KILL QUERY); it raises Cancelled. Returns whether one was running."""
        p = self._ptr
        if p is None:
            return False
        done = c_bool(False)
        _check(lib.staunch_conn_cancel, p, byref(done))
        return done.value

    def thread_id(self) -> int:
        """The server's id of this session (CONNECTION_ID())."""
        out = c_uint64()
        _check(lib.staunch_conn_server_id, self._live(), byref(out))
        return out.value

    @property
    def is_broken(self) -> bool:
        p = self._ptr
        return p is not None and lib.staunch_conn_is_broken(p)

    def discard(self) -> None:
        """Closes the connection instead of returning it (it is replaced)."""
        p, self._ptr = self._ptr, None
        if p is not None:
            self._free_nowait(p)

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._ptr is None:
            return
        try:
            if exc_type is None:
                self.commit()
            elif not self.is_broken:
                try:
                    self.rollback()
                except E.Error:
                    pass
        finally:
            self.close()


#: The byte offset of staunch_result's in_transaction (see Connection._txn_open).
_IN_TRANSACTION = F.staunch_result.in_transaction.offset

_ISOLATION = {
    "READ UNCOMMITTED": F.ISOLATION_READ_UNCOMMITTED,
    "READ COMMITTED": F.ISOLATION_READ_COMMITTED,
    "REPEATABLE READ": F.ISOLATION_REPEATABLE_READ,
    "SERIALIZABLE": F.ISOLATION_SERIALIZABLE,
}


def _norm_isolation(level: str) -> str:
    lv = str(level).upper().replace("_", " ").strip()
    if lv not in _ISOLATION:
        raise E.ConfigError(0, f"unknown isolation level {level!r} (one of {', '.join(_ISOLATION)})")
    return lv


# --- cursors ----------------------------------------------------------------------------

_CI = F.staunch_column_info


def _prepared_select(sql: str) -> bool:
    head = sql[:8].lstrip()[:6].upper()
    return (head == "SELECT" or head[:4] == "WITH") and ";" not in sql


_tls = threading.local()
_BUF_VALUES = 4096


#: Cursor._lastrowid while the id is still in the result, unread.
_UNREAD = object()

_TYPES = 64  # columns: a wider result set reads its types into an array of its own


def _types_buffer() -> tuple:
    """This thread's array for a result set's column types (read out at
    once), and its address."""
    t = getattr(_tls, "types", None)
    if t is None:
        buf = (ctypes.c_uint32 * _TYPES)()
        t = _tls.types = (buf, ctypes.addressof(buf))
    return t


def _struct_of(cls, fields) -> struct.Struct:
    """A struct.Struct reading these (field, code) of a ctypes Structure, in
    order, each at its offset; the rest of the struct skipped."""
    fmt, pos = "<", 0
    for name, code in fields:
        off = getattr(cls, name).offset
        if off > pos:
            fmt += f"{off - pos}x"
        fmt += code
        pos = off + struct.calcsize("<" + code)
    return struct.Struct(fmt + f"{ctypes.sizeof(cls) - pos}x")


_CI_SIZE = ctypes.sizeof(_CI)
#: What cursor.description takes of each staunch_column_info.
_CI_FIELDS = _struct_of(
    _CI, (("type_code", "I"), ("flags", "I"), ("length", "I"), ("decimals", "I"), ("name", "Q"), ("name_len", "Q"))
)


def _infos_buffer(n: int) -> tuple:
    """This thread's staunch_column_info array (64; a wider result gets one
    of its own), its address (its first size set), and an error cell and
    its address."""
    t = getattr(_tls, "infos", None) if n <= _TYPES else None
    if t is None:
        buf = (_CI * max(n, _TYPES))()
        buf[0].size = _CI_SIZE  # the library writes it back unchanged
        cell = (ctypes.c_size_t * 1)()
        t = (buf, ctypes.addressof(buf), (cell, ctypes.addressof(cell)))
        if n <= _TYPES:
            _tls.infos = t
    return t


def _batch() -> tuple:
    """This thread's staunch_batch, over this thread's types and values
    buffers (see _types_buffer, _fetch_buffer): (its fields as 64-bit
    words, its address, the struct, the types buffer, the values buffer).
    The hot path reads and writes the words by index (LP64: every field is
    one): 1 recycle, 6 n_columns, 7 n_rows, 8 affected_rows, 9
    last_insert_id."""
    b = F.staunch_batch()
    b.size = ctypes.sizeof(b)
    types, values = _types_buffer(), _fetch_buffer(0)
    b.types = ctypes.cast(types[1], ctypes.POINTER(ctypes.c_uint32))
    b.types_cap = _TYPES
    b.values = ctypes.cast(values[1], ctypes.POINTER(F.staunch_value))
    b.values_cap = _BUF_VALUES
    words = (ctypes.c_uint64 * (ctypes.sizeof(b) // 8)).from_buffer(b)
    t = _tls.batch = (words, ctypes.addressof(b), b, types, values)
    return t


def _result_buffer() -> tuple:
    """This thread's staunch_result for Connection._txn_open, as its bytes
    (the flag read by offset) and its address."""
    r = F.staunch_result()
    r.size = ctypes.sizeof(r)
    t = _tls.result = ((ctypes.c_bool * ctypes.sizeof(r)).from_buffer(r), ctypes.addressof(r))
    return t


def _fetch_buffer(ncols: int) -> tuple:
    """This thread's staunch_value array for the bulk fetch (reused: the rows
    are converted out of it before the next fetch), and its address."""
    if ncols > _BUF_VALUES:
        buf = (F.staunch_value * ncols)()
        return buf, ctypes.addressof(buf)
    t = getattr(_tls, "buf", None)
    if t is None:
        buf = (F.staunch_value * _BUF_VALUES)()
        t = _tls.buf = (buf, ctypes.addressof(buf))
    return t


class Cursor(_Handle):
    """A buffered cursor (PEP 249): each result set is read whole at execute.

    Parameters use %s or %(name)s (paramstyle 'format'/'pyformat', as
    PyMySQL); they are bound to ? placeholders, never quoted into the SQL.
    """

    _stream = False
    #: Whether rows stream from the server as they are read (SQLAlchemy's
    #: suite and aiomysql's adapters look for this name).
    server_side = False
    _closed_message = "the cursor is closed"

    def __init__(self, connection: Connection):
        self.connection = connection
        self.arraysize = 1
        self._desc = None
        self.rowcount = -1
        self._lastrowid = None  # _UNREAD: in self._rows, read when asked
        self.rownumber = 0
        self._rows = None  # the staunch_rows of the last statement (its address)
        self._data: list = []
        self._types: tuple = ()
        self._has_run = False  # execute() has run (PEP 249: fetch* before it is an error)
        self._nexted = False  # nextset() has run since (fetch* then give no rows, never an error)
        # The last statement as sent and its values (see _executed).
        self._sent_sql = None
        self._sent_values = None
        # Its handle is its hold on the connection: close() frees the row
        # set it reads and lets go.
        self._ptr = connection

    # -- executing

    @property
    def _executed(self):
        """The last statement as sent, its parameters written in as SQL
        literals (None before the first): what PyMySQL keeps under this name,
        and what tools read there (Django's last_executed_query). staunch
        binds the values, it never sends them in the text: this is written
        when first asked, for display only."""
        v = self._sent_values
        if v is not None:
            self._sent_sql = C.interpolate(self._sent_sql, v)
            self._sent_values = None
        return self._sent_sql

    @_executed.setter
    def _executed(self, value) -> None:
        self._sent_sql = value
        self._sent_values = None

    @property
    def lastrowid(self):
        """The AUTO_INCREMENT id the last statement generated (0 if none;
        None before the first). Read from the result when first asked: most
        statements never are, and the read is a foreign call."""
        v = self._lastrowid
        if v is _UNREAD:
            v = self._lastrowid = lib.raw.staunch_rows_last_insert_id(self._rows) if self._rows else None
        return v

    @lastrowid.setter
    def lastrowid(self, value) -> None:
        self._lastrowid = value

    def _free_rows(self, keep_lastrowid: bool = True) -> None:
        r, self._rows = self._rows, None
        if r:
            if keep_lastrowid and self._lastrowid is _UNREAD:
                self._lastrowid = lib.fast.staunch_rows_last_insert_id(r)
            if self._stream:
                lib.fast.staunch_rows_free(r)  # a streamed statement ends here
                _flush_traces()
            else:
                lib.fast.buffered.staunch_rows_free(r)

    def execute(self, query, args=None) -> int:
        """Runs one statement; returns rowcount (affected or selected rows)."""
        conn, raw, params, n, flags, recycle = self._prepare(query, args)
        # A statement the server cannot prepare (1295, or a syntax it takes
        # only as text) is sent as text by the library itself.
        out, batch = conn._query(raw, params, n, flags, recycle)
        self._rows = out
        self._start_set(batch)
        return self.rowcount

    def _prepare(self, query, args) -> tuple:
        """execute()'s first half, shared with the asyncio cursor: the
        previous answer let go, the statement bound. (connection, SQL bytes,
        params, their count, flags, the buffered row set to free first)."""
        conn = self._live()
        # The previous answer: a buffered one is freed by the statement's
        # own call (no call of its own), a streaming one here.
        recycle = self._rows or 0
        if recycle and self._stream:
            self._free_rows(keep_lastrowid=False)
            recycle = 0
        self._rows = None
        self._has_run = True
        self._nexted = False
        self._types = ()
        self._desc = None
        self.rowcount = -1
        self._lastrowid = None
        self._data = []
        self.rownumber = 0
        try:  # until the call, the previous answer is this frame's to free
            if isinstance(query, bytes):
                query = query.decode("utf-8")
            elif not isinstance(query, str):
                raise E.ParameterTypeError(0, f"the statement must be a str, not {type(query).__name__}")
            if args is None:
                sql, values = query, ()
            else:
                sql, values = C.bind(query, args)
            params = C.make_params(values) if values else None
            raw = sql.encode("utf-8")
        except BaseException:
            self._sent_sql, self._sent_values = query, None  # not sent: as given
            if recycle:
                lib.fast.buffered.staunch_rows_free(recycle)
            raise
        if values:
            # Written out when asked (_executed), from a copy of a list the
            # caller may change afterwards.
            self._sent_sql, self._sent_values = query, values if type(values) is tuple else tuple(values)
        else:
            self._sent_sql, self._sent_values = sql, None  # as sent (execute(q, ()) sends q's %% as %)
        flags = F.QUERY_STREAM if self._stream else 0
        # Without parameters the core sends it as text (the pool's
        # text_without_params), except a lone SELECT under prepare_selects:
        # prepared (the binary protocol: values come binary, about twice as
        # fast to read as text; cached by the connection).
        if not values and conn._pool_ref.prepare_selects and _prepared_select(sql):
            flags |= F.QUERY_PREPARE
        return conn, raw, params, len(values), flags, recycle

    def executemany(self, query, seq_of_args) -> int | None:
        """Runs the statement once per parameter set; rowcount is the sum."""
        total = 0
        for args in seq_of_args:
            self.execute(query, args)
            if self.rowcount > 0:
                total += self.rowcount
        self.rowcount = total
        return self.rowcount

    def callproc(self, procname: str, args=()) -> tuple:
        """CALL procname(args...) with bound IN parameters; read its result
        sets with fetch*/nextset. Returns the arguments (OUT parameters are
        not read back)."""
        if not isinstance(procname, str) or not procname.replace("_", "").replace(".", "").replace("`", "").isalnum():
            raise E.ProgrammingError(0, f"bad procedure name {procname!r}")
        args = tuple(args)
        self.execute(f"CALL {procname}({', '.join(['%s'] * len(args))})", args)
        return args

    def _start_set(self, batch=None) -> None:
        """Reads the current set's types (and, buffered, its rows): from
        batch, the words and buffers the statement's call filled (see
        _batch), or through calls of their own (the sets after the first)."""
        rows = self._rows
        # The column count and the types in one call (they pick the row
        # converter); the description when it is asked for (the row set
        # outlives the cursor's use of it).
        if batch is None:
            buf, addr = _types_buffer()
            n = lib.fast.staunch_rows_column_types(rows, addr, _TYPES)
            self._lastrowid = _UNREAD
        else:
            words = batch[0]
            buf = batch[3][0]
            n = words[6]  # n_columns
            self._lastrowid = words[9]  # last_insert_id
        if n == 0:
            self._desc = None
            self._types = ()
            self._data = []
            self.rowcount = lib.fast.staunch_rows_affected_rows(rows) if batch is None else batch[0][8]  # affected_rows
            return
        if n > _TYPES:
            buf = (ctypes.c_uint32 * n)()
            lib.raw.staunch_rows_column_types(rows, buf, n)
        self._types = types = tuple(buf[:n])
        self._desc = None
        if self._stream:
            self.rowcount = -1
            self._data = []
            self._pos = 0
            self._done = False
        elif batch is None:
            self._data = self._read(rows, 1 << 62)
            self.rowcount = len(self._data)
        else:
            got = batch[0][7]  # n_rows
            data = C.row_converter(types)(batch[4][0], got) if got else []
            if got == _BUF_VALUES // n:  # the batch was full: read on
                data += self._read(rows, 1 << 62)
            self._data = data
            self.rowcount = len(data)

    @property
    def description(self):
        """PEP 249: a 7-tuple per column (name, MySQL type code, None, length,
        length, decimals, null_ok), or None for a statement without rows."""
        if self._desc is None and self._types and self._rows:
            # Read when asked for, from the current set (never a freed one).
            self._desc = self._describe(self._rows)
        return self._desc

    def _describe(self, rows) -> tuple:
        """Every column's 7-tuple, from one call (staunch_rows_column_infos)."""
        n = len(self._types)
        arr, addr, err = _infos_buffer(n)
        st = lib.raw.staunch_rows_column_infos(rows, addr, n, err[1])
        if st:
            e, err[0][0] = err[0][0], 0
            _raise(st, ctypes.cast(e, _ERR) if e else None)
        m = C._M
        desc = []
        for tc, flags, length, dec, p, nlen in itertools.islice(_CI_FIELDS.iter_unpack(arr), n):
            if not nlen:
                name = ""
            elif m is not None:
                p -= 1
                name = str(m[p : p + nlen], "utf-8", "replace")
            else:
                name = ctypes.string_at(p, nlen).decode("utf-8", "replace")
            desc.append((name, tc, None, length, length, dec, not flags & 1))
        return tuple(desc)

    def _read(self, rows, max_rows: int) -> list:
        """Up to max_rows rows of the current set, through the bulk fetch."""
        ncols = len(self._types)
        buf, addr = _fetch_buffer(ncols)
        batch = max(1, min(max_rows, len(buf) // ncols))
        conv = C.row_converter(self._types)
        got = c_size_t()
        out: list = []
        stream = self._stream
        # The connection's cells (see Connection._query): the count at +16,
        # the error at +8.
        cells, base, _ = self.connection._cells or self.connection._new_cells()
        fetch = lib.raw.buffered.staunch_rows_fetch
        while len(out) < max_rows:
            want = min(batch, max_rows - len(out))
            if stream:
                self.connection._call_rows(lib.raw.staunch_rows_fetch, rows, addr, want * ncols, byref(got))
                n = got.value
            else:
                st = fetch(rows, addr, want * ncols, base + 16, base + 8)
                if st:
                    err, cells[1] = cells[1], 0
                    _raise(st, ctypes.cast(err, _ERR) if err else None)
                n = cells[2]
            if n == 0:
                break
            out += conv(buf, n)  # unpacked in place: nothing copied
            if n < want and not stream:
                break
        return out

    def nextset(self) -> bool | None:
        """Moves to the next result set (a CALL returns several): True, or
        None after the last."""
        self._live()
        self._nexted = True
        rows = self._rows
        if not rows:
            return None
        has = c_bool(False)
        if self._stream:
            self.connection._call_rows(lib.raw.staunch_rows_next_result, rows, byref(has))
        else:
            _check(lib.raw.buffered.staunch_rows_next_result, rows, byref(has))
        if not has.value:
            self._free_rows()
            self._data = []
            self._types = ()
            self._desc = None
            return None
        self.rownumber = 0
        self._start_set()
        return True

    # -- fetching (buffered)

    def _check_set(self) -> None:
        """PEP 249: fetching without a result set (no execute yet, or a
        statement that returned none) is an error. Once nextset() has moved
        on, a set without columns (the status that ends a CALL) or the end of
        the sets gives no rows instead, as mysqlclient and PyMySQL do (and
        mysqlclient's copy of PEP 249's suite asks in test_nextset)."""
        self._live()
        if not self._types:
            if not self._has_run:
                raise E.ProgrammingError(0, "no result set: execute a query first")
            if not self._nexted:
                raise E.ProgrammingError(0, "no result set: the last statement returned no rows to fetch")

    def fetchone(self):
        self._check_set()
        if self.rownumber < len(self._data):
            r = self._data[self.rownumber]
            self.rownumber += 1
            return r
        return None

    def fetchmany(self, size: int | None = None) -> list:
        self._check_set()
        size = self.arraysize if size is None else size
        end = self.rownumber + size
        r = self._data[self.rownumber : end]
        self.rownumber = min(end, len(self._data))
        return r

    def fetchall(self) -> list:
        self._check_set()
        r = self._data[self.rownumber :]
        self.rownumber = len(self._data)
        return r

    def __iter__(self):
        return iter(self.fetchone, None)

    def scroll(self, value: int, mode: str = "relative") -> None:
        pos = self.rownumber + value if mode == "relative" else value
        if not 0 <= pos <= len(self._data):
            raise IndexError("scroll out of range")
        self.rownumber = pos

    # -- the rest

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        """PEP 249; values are read whole, so this does nothing."""

    setoutputsizes = setoutputsize  # PyMySQL's spelling

    def mogrify(self, query, args=None) -> str:
        raise E.NotSupportedError(0, "mogrify: staunch binds values, it never quotes them into SQL")

    def _free(self, connection) -> None:
        self._free_rows()
        self._data = []

    def _free_nowait(self, connection) -> None:
        self._free_rows(keep_lastrowid=False)


class SSCursor(Cursor):
    """A server-side (streaming) cursor: rows are read as they arrive, in
    batches of ``arraysize`` (at least 64). While it has unread rows the
    connection runs nothing else (InterfaceError: busy). rowcount is -1
    until the set is read."""

    _stream = True
    server_side = True

    def _next_rows(self, n: int) -> list:
        if self._rows is None or not self._types or self._done:
            return []
        rows = self._read(self._rows, n)
        if len(rows) < n:
            self._done = True
            self.rowcount = self.rownumber + len(rows)
        self.rownumber += len(rows)
        return rows

    def _refill(self, rows: list) -> None:
        """The next batch of rows read (shared with staunch.aio's cursor)."""
        self._data = rows
        self._pos = 0

    def _pop(self):
        """The batch's next row, or None once it is used up."""
        if self._pos < len(self._data):
            r = self._data[self._pos]
            self._pos += 1
            if self._pos == len(self._data):
                self._data = []
            return r
        return None

    def fetchone(self):
        self._check_set()
        if not self._data:
            self._refill(self._next_rows(max(64, self.arraysize)))
        return self._pop()

    def fetchmany(self, size: int | None = None) -> list:
        self._check_set()
        size = self.arraysize if size is None else size
        out = []
        while len(out) < size:
            r = self.fetchone()
            if r is None:
                break
            out.append(r)
        return out

    def fetchall(self) -> list:
        self._check_set()
        out = []
        while True:
            batch = self.fetchmany(4096)
            if not batch:
                return out
            out += batch

    def scroll(self, value: int, mode: str = "relative") -> None:
        raise E.NotSupportedError(0, "a streaming cursor cannot scroll")


class DictCursor(Cursor):
    """A buffered cursor whose rows are dicts keyed by column name."""

    def _start_set(self, batch=None) -> None:
        super()._start_set(batch)
        if self.description:
            names = [d[0] for d in self.description]
            self._data = [dict(zip(names, r)) for r in self._data]
