"""Ctrl-C during a blocking call, through the ABI's cancellation.

A main thread blocked inside a foreign call does not run Python's SIGINT
handler until the call returns. Python's C-level handler does write the
signal number to the wakeup fd (``signal.set_wakeup_fd``), though, from
whatever thread the signal lands on. This module owns that fd (unless
something else, such as an asyncio loop, already does) and a watcher
thread that reads it: on SIGINT, if the main thread is inside a blocking
staunch call and SIGINT still raises KeyboardInterrupt, the watcher cancels
that call the ABI's way: ``staunch_cancel_token_cancel`` for a waiting
``get``, ``staunch_conn_cancel`` (``KILL QUERY``) for a statement. The call
returns STAUNCH_CANCELLED promptly, the pool and the connection stay
consistent, and Python's own handler then raises KeyboardInterrupt as usual.
The cost on the hot path is a thread-id comparison and a lock.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time

_lib = None  # set by the package at import
_lock = threading.Lock()  # guards _current; held while the watcher cancels
_current: list | None = None  # [kind, handle, interrupted] of the main thread's call
#: Whether the watcher runs: None until a main-thread call first asks
#: (watching()), then the outcome. The hot path reads it before calling
#: watching().
INSTALLED: bool | None = None
#: The cancel tokens the watcher cancelled, for the main thread to renew
#: its own (recorded here, not after the call: Python's SIGINT handler
#: raises KeyboardInterrupt as soon as the call returns).
SPENT: list = []
_main_ident = threading.main_thread().ident
#: The main thread's id: the only thread whose calls Ctrl-C interrupts (the
#: hot path compares with it before calling watching()).
MAIN_IDENT = _main_ident


def _install() -> bool:
    """Takes the wakeup fd and starts the watcher. False when it cannot."""
    if threading.get_ident() != _main_ident:
        return False
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(r)
        os.close(w)
        return False
    if old != -1:
        # Someone else (an event loop) reads the wakeup fd: leave it to them.
        signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)
        return False
    t = threading.Thread(target=_watch, args=(r,), name="staunch-sigint", daemon=True)
    t.start()
    return True


def _watch(fd: int) -> None:
    while True:
        try:
            data = os.read(fd, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        if signal.SIGINT in data and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            _cancel_current()


def _cancel_current() -> None:
    with _lock:
        op = _current
        if op is None:
            return
        op[2] = True
        if op[0] == "get":
            _lib.staunch_cancel_token_cancel(op[1], None)
            SPENT.append(op[1])
            return
    # A statement: KILL QUERY. If the signal came just before the statement
    # reached the server, nothing runs yet: try again while the call lasts.
    deadline = time.monotonic() + 5.0
    cancelled = ctypes.c_bool(False)
    while True:
        with _lock:
            if _current is not op:
                return
            st = _lib.staunch_conn_cancel(op[1], ctypes.byref(cancelled), None)
            if st != 0 or cancelled.value:
                return
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)


def watching() -> bool:
    """Whether a call made now by this thread can be interrupted by Ctrl-C."""
    global INSTALLED
    if threading.get_ident() != _main_ident:
        return False
    if INSTALLED is None:
        INSTALLED = _install()
    return INSTALLED


def call(kind: str, handle, fn, args: tuple, err_ref) -> tuple:
    """``fn(*args, err_ref)`` on the main thread, the watcher told that a
    Ctrl-C cancels it through ``handle`` (a cancel token for a "get", the
    connection for a "stmt"). Returns (status, whether Ctrl-C cancelled
    it). Once it returns, the watcher no longer acts on ``handle``."""
    global _current
    op = [kind, handle, False]
    _current = op
    try:
        st = fn(*args, err_ref)
    finally:
        with _lock:
            _current = None
    return st, op[2]
