"""staunch for asyncio: borrows and statements that wait in the event loop.

::

    pool = staunch.aio.Pool("mysql://app:secret@db/app?max_size=8")
    async with pool.connection() as conn:
        cur = conn.cursor()
        await cur.execute("SELECT id, name FROM t WHERE id > %s", (10,))
        rows = cur.fetchall()
    pool.close()

What waits where:

- a borrow waits in the pool's queue, in turn with the blocking face's
  callers, on a descriptor the event loop watches (``loop.add_reader``):
  no thread is held while it waits. Its bound is the pool's
  ``connection_timeout`` (or ``timeout``), reported as the blocking face
  reports it (``PoolExhausted``, ``DatabaseUnreachable``);
- a statement is sent, its task waits until the answer begins to arrive on
  the connection's socket, then reads the rows as they arrive, waiting on
  the socket again whenever the next ones have not come: all of them in
  ``execute`` (a buffered cursor: fetch* never wait), or as they are asked
  for (``SSCursor``: ``async for`` and the awaited fetch*).
  The statement's bounds are the pool's, as in the blocking face:
  ``query_timeout``, the liveness check of a frozen server;
- a cancelled task (``asyncio.timeout``, ``task.cancel()``) gives up a
  waiting borrow at once, the pool left as if it had never waited; during a
  statement it stops the statement with ``KILL QUERY`` (sent from a worker
  thread: it opens a connection of its own), reads the answer off, and the
  connection comes back usable, as Ctrl-C does in the blocking face.

Still in the calling thread, briefly: opening and closing the pool, the
return of a connection that wrote (its rollback, when one is open), and the
validation of a connection idle past ``validation_interval``.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import weakref
from ctypes import byref
from select import select as _select

from . import _core
from . import _errors as E
from . import _ffi as F

__all__ = ["Pool", "Connection", "Cursor", "SSCursor"]

_ROWS_P = ctypes.POINTER(F.staunch_rows)
#: A size_t cell's value that reads as the int -1 (see _statement).
_NO_FD = ctypes.c_size_t(-1).value


async def _readable(fd: int, timeout: float | None) -> bool:
    """Waits until fd is readable (True) or timeout (seconds) passes (False)."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()

    def ready(readable: bool) -> None:
        if not fut.done():
            fut.set_result(readable)

    loop.add_reader(fd, ready, True)
    timer = loop.call_later(timeout, ready, False) if timeout is not None else None
    try:
        return await fut
    finally:
        loop.remove_reader(fd)
        if timer is not None:
            timer.cancel()


class _Signals:
    """A loop's eventfds for waiting borrows (``staunch_pool_get_start``'s
    ``signal_fd``), each watched by the loop from its first use to the
    loop's end: a wait then costs no eventfd made and closed and no reader
    added and removed. The library writes to one when its borrow has
    something and reads it to clear it; this reads it too, as soon as the
    loop reports it, so the loop never reports it twice or spins on it.

    Also the loop's out-values for the borrow's calls (``cells``: a
    connection, a pending borrow, an error; read before anything is
    awaited), and one timer for all its waiting borrows' bounds: a borrow's
    wait ends at its signal or at its deadline, whichever comes first, and
    a timer per wait would cost more than the wait's other steps together."""

    __slots__ = ("loop", "spare", "waiting", "cells", "base", "timer", "timer_at", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop):
        # Weakly: _SIGNALS's value must not keep its key (the loop) alive.
        self.loop = weakref.ref(loop)
        self.spare: list[int] = []
        #: fd -> (future, deadline in loop.time())
        self.waiting: dict[int, tuple] = {}
        self.cells = (ctypes.c_size_t * 3)()
        self.base = ctypes.addressof(self.cells)
        self.timer = None
        self.timer_at = 0.0
        weakref.finalize(loop, _close_all, self.spare)

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> _Signals:
        s = _SIGNALS.get(loop)
        if s is None:
            s = _SIGNALS[loop] = cls(loop)
        return s

    def take(self) -> int:
        if self.spare:
            return self.spare.pop()
        fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        try:
            self.loop().add_reader(fd, self._ready, fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def give(self, fd: int) -> None:
        """Gives back a signal once its borrow finished or was freed (the
        library then never writes to it again)."""
        waiting = self.waiting
        if waiting.pop(fd, None) is not None and not waiting and self.timer is not None:
            # Its handle holds the loop, which _SIGNALS holds weakly.
            self.timer.cancel()
            self.timer = None
        loop = self.loop()
        if len(self.spare) < _SPARE_SIGNALS and loop is not None and not loop.is_closed():
            self.spare.append(fd)
        else:
            if loop is not None and not loop.is_closed():
                loop.remove_reader(fd)
            os.close(fd)

    def wait(self, loop: asyncio.AbstractEventLoop, fd: int, left_ms: int) -> asyncio.Future:
        """A future done when fd's borrow has something or ``left_ms`` have
        passed."""
        fut = loop.create_future()
        at = loop.time() + left_ms / 1000
        self.waiting[fd] = (fut, at)
        if self.timer is None or at < self.timer_at:
            if self.timer is not None:
                self.timer.cancel()
            self.timer_at = at
            self.timer = loop.call_at(at, self._expire)
        return fut

    def _expire(self) -> None:
        # Wakes the waits whose bound has come (each asks the library, which
        # holds the bound, and waits again if it is not over), and sets the
        # timer for the next.
        self.timer = None
        loop = self.loop()
        if loop is None:
            return
        now = loop.time() + 0.001
        nxt = None
        for fut, at in self.waiting.values():
            if at <= now:
                if not fut.done():
                    fut.set_result(None)
            elif nxt is None or at < nxt:
                nxt = at
        if nxt is not None:
            self.timer_at = nxt
            self.timer = loop.call_at(nxt, self._expire)

    def _ready(self, fd: int) -> None:
        # Cleared first, whoever waits: the waiting task runs (and the
        # library clears it) only in a later pass of the loop, which would
        # otherwise report it again before that, and a signal nobody waits
        # for any more would make the loop spin.
        try:
            os.eventfd_read(fd)
        except BlockingIOError:
            pass
        w = self.waiting.get(fd)
        if w is not None and not w[0].done():
            w[0].set_result(None)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
    fds.clear()


#: Each running loop's signals, gone with the loop.
_SIGNALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Spare signals kept per loop.
_SPARE_SIGNALS = 256


def _waits_cell() -> tuple:
    """This thread's ``bool *waits`` for staunch_rows_fetch_ready (read
    before anything is awaited), and its address."""
    w = ctypes.c_bool()
    _core._tls.aio_waits = t = (w, ctypes.addressof(w))
    return t


def _raise_cell(status: int, cells, at: int = 2) -> None:
    """Raises the error a lib.fast or lib.raw call left in cells[at] (and clears it)."""
    err, cells[at] = cells[at], 0
    _core._raise(status, ctypes.cast(err, _core._ERR) if err else None)


class Pool:
    """A staunch pool for asyncio. ``url`` and ``**knobs`` as
    ``staunch.Pool`` takes them. Opening connects as the blocking pool does
    (``initialization_fail_timeout``), in the calling thread."""

    #: The pool handle's address, for lib.fast's calls (see _get).
    _addr = None

    def __init__(self, url: str | None = None, **knobs):
        self._pool = _core.Pool(url, **knobs)

    @classmethod
    def over(cls, pool: _core.Pool) -> Pool:
        """The asyncio face of an open blocking pool (``staunch.shared_pool``'s,
        for one): the two borrow from the same connections; closing either
        closes both."""
        self = cls.__new__(cls)
        self._pool = pool
        return self

    def connection(self, timeout: float | None = None) -> _Borrow:
        """Borrows a connection, waiting at most ``timeout`` seconds (None:
        the pool's ``connection_timeout``). Await it, or use it as
        ``async with pool.connection() as conn:`` (committed on a clean exit,
        rolled back on an exception, returned either way)."""
        return _Borrow(self, timeout, False)

    def connection_read(self, timeout: float | None = None) -> _Borrow:
        """``connection()`` for reading: a healthy replica of a topology pool."""
        return _Borrow(self, timeout, True)

    async def _get(self, timeout, read: bool) -> Connection:
        core = self._pool
        if core._ptr is None:
            core._live()  # raises
        addr = self._addr
        if addr is None:
            addr = self._addr = ctypes.cast(core._live(), ctypes.c_void_p).value
        ms = F.TIMEOUT_DEFAULT if timeout is None else _core._timeout_ms(timeout, "timeout")
        loop = asyncio.get_running_loop()
        signals = _Signals.of(loop)
        # The loop's out-values: each is read before anything is awaited.
        cells, base = signals.cells, signals.base
        fast = _core.lib.fast
        fd = signals.take()
        try:
            st = fast.staunch_pool_get_start(addr, ms, read, fd, base, base + 8, base + 16)
            _core._flush_traces()
            if st:
                _raise_cell(st, cells)
            out = cells[0]
            if not out:
                pending = cells[1]
                try:
                    while True:
                        left = fast.staunch_pending_get_remaining_ms(pending)
                        if left:
                            await signals.wait(loop, fd, left)
                        st = fast.staunch_pending_get_finish(pending, base, base + 16)
                        _core._flush_traces()
                        if st:
                            _raise_cell(st, cells)
                        out = cells[0]
                        if out:
                            break
                finally:
                    # Unfinished (a cancelled task): gives its place up.
                    fast.staunch_pending_get_free(pending)
        finally:
            signals.give(fd)
        # The typed handle, copied from the cell the library wrote it to
        # (still cells[0]: nothing was awaited since): ctypes.cast is a
        # foreign call of its own, a twentieth of a whole borrow's cost.
        ptr = _core._CONN_P.from_buffer_copy(cells)
        try:
            conn = _core.Connection(core, ptr)
            conn._new_cells(out)
            if core._leak_stacks:
                _core._give_stack(ptr)
            return Connection(self, conn)
        except BaseException:
            _core.lib.staunch_conn_free(ptr)
            _core._flush_traces()
            raise

    def stats(self) -> _core.PoolStats:
        """The pool's figures (never waits)."""
        return self._pool.stats()

    def close(self) -> None:
        """Closes the pool: waiting borrows fail with ``PoolClosed``."""
        self._pool.close()

    @property
    def closed(self) -> bool:
        return self._pool.closed

    async def __aenter__(self) -> Pool:
        return self

    async def __aexit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<staunch.aio.Pool {self._pool!r}>"


class _Borrow:
    """``pool.connection()``: awaitable, and an async context manager."""

    __slots__ = ("_pool", "_timeout", "_read", "_conn")

    def __init__(self, pool: Pool, timeout, read: bool):
        self._pool, self._timeout, self._read, self._conn = pool, timeout, read, None

    def __await__(self):
        return self._pool._get(self._timeout, self._read).__await__()

    async def __aenter__(self) -> Connection:
        self._conn = await self._pool._get(self._timeout, self._read)
        return self._conn

    async def __aexit__(self, exc_type, exc, tb) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn._conn._ptr is not None:
                await (conn.rollback() if exc_type is not None else conn.commit())
        finally:
            conn.release()


class Connection:
    """A borrowed connection: statements through ``cursor()``;
    ``commit()``/``rollback()`` awaitable; ``release()`` gives it back."""

    def __init__(self, pool: Pool, conn: _core.Connection):
        self.pool = pool
        self._conn = conn

    def cursor(self, cursorclass: type[Cursor] | None = None) -> Cursor:
        """A cursor: buffered, or ``cursor(staunch.aio.SSCursor)`` to read
        rows as they arrive (``async for row in cur``)."""
        return (cursorclass or Cursor)(self)

    async def execute(self, query, args=None) -> Cursor:
        """A new cursor that has run the statement."""
        cur = Cursor(self)
        await cur.execute(query, args)
        return cur

    async def commit(self) -> None:
        """Commits (nothing is sent when no transaction is open)."""
        if self._conn._txn_open():
            await self._run(b"COMMIT")

    async def rollback(self) -> None:
        """Rolls back (nothing is sent when no transaction is open)."""
        if self._conn._txn_open():
            await self._run(b"ROLLBACK")

    async def _run(self, sql: bytes) -> None:
        rows = await _statement(self._conn, sql, None, 0, F.QUERY_TEXT)
        _core.lib.fast.staunch_rows_free(rows)
        _core._flush_traces()

    def release(self) -> None:
        """Gives the connection back (what is uncommitted is rolled back
        there). Idempotent."""
        self._conn.close()

    @property
    def autocommit(self) -> bool:
        """Whether the session autocommits (as the server last said; never waits)."""
        return self._conn.autocommit

    async def set_autocommit(self, value: bool) -> None:
        """Turns autocommit on or off (``SET autocommit``, waited for in the
        loop; nothing is sent when it already is). Turning it on commits an
        open transaction, as the server does."""
        value = bool(value)
        if value != self._conn.autocommit:
            await self._run(_core._autocommit_sql(value))

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<staunch.aio.Connection {self._conn!r}>"


async def _statement(conn: _core.Connection, sql: bytes, params, n: int, flags: int, recv: int = 0):
    """Sends a statement, waits in the event loop for its answer, and
    receives it: read whole (a buffered row set, the caller's), or with
    ``recv`` QUERY_STREAM its first bytes only (a streaming one). A
    cancelled task stops it (KILL QUERY from a worker thread), reads the
    answer off, and re-raises. Through lib.fast, with the connection's
    out-values (see _core.Connection._new_cells; its count cell takes the
    descriptor to wait on, an int)."""
    if conn._ptr is None:
        conn._live()  # raises
    cells, base, addr = conn._cells or conn._new_cells()
    fast = _core.lib.fast
    cells[2] = _NO_FD
    try:
        st = fast.staunch_conn_query_send_ex(
            addr,
            sql,
            None if params is None else ctypes.addressof(params),
            n,
            flags,
            base + 16,
            base + 8,
        )
    finally:
        _core._flush_traces()
    if st:
        _raise_cell(st, cells, 1)
    fd = ctypes.c_int.from_buffer(cells, 16).value
    try:
        if fd >= 0:
            # Other tasks first: the answer often arrives meanwhile, and then
            # no reader is added and removed for it.
            await asyncio.sleep(0)
            if not _select((fd,), (), (), 0)[0]:
                await _readable(fd, None)
    except asyncio.CancelledError:
        p = conn._live()
        await _kill(p)
        _recv_discard(p)
        raise
    try:
        st = fast.staunch_conn_query_recv(addr, recv, base, base + 8)
    finally:
        _core._flush_traces()
    if st:
        _raise_cell(st, cells, 1)
    out, cells[0] = cells[0], 0
    return out


async def _kill(p) -> None:
    """KILL QUERY for the statement running on p, from a worker thread (it
    opens a connection of its own). A second cancel does not skip it: what
    follows reads the answer off, which must wait only once the server was
    told to stop."""
    kill = asyncio.get_running_loop().run_in_executor(None, _cancel, p)
    while not kill.done():
        try:
            await asyncio.shield(kill)
        except asyncio.CancelledError:
            pass


def _cancel(p) -> None:
    err = _core._ERR()
    if _core.lib.staunch_conn_cancel(p, None, byref(err)) != 0 and err:
        _core.lib.staunch_error_free(err)


def _recv_discard(p) -> None:
    out = _ROWS_P()
    err = _core._ERR()
    if _core.lib.staunch_conn_query_recv(p, 0, byref(out), byref(err)) == 0:
        _core.lib.staunch_rows_free(out)
    elif err:
        _core.lib.staunch_error_free(err)
    _core._flush_traces()


class Cursor(_core.Cursor):
    """A buffered cursor whose ``execute`` is awaited: the answer is read
    whole there; ``fetchone``/``fetchmany``/``fetchall``, ``description``,
    ``rowcount`` and ``lastrowid`` are the blocking cursor's (they never
    wait). Parameters as in the blocking face (%s, %(name)s), never spliced
    into the SQL.

    The rows are read as they arrive and converted while the server sends
    the rest; whenever the next ones have not come, the task waits on the
    socket and the loop runs other tasks. A large answer holds the loop no
    longer than its conversion takes, and costs little more than that."""

    _abuf = None

    def __init__(self, connection: Connection):
        super().__init__(connection._conn)
        self.aconnection = connection

    async def execute(self, query, args=None) -> int:  # type: ignore[override]
        """Runs one statement; returns rowcount."""
        conn, raw, params, n, flags, recycle = self._prepare(query, args)
        if recycle:
            _core.lib.fast.buffered.staunch_rows_free(recycle)
        self._rows = await _statement(conn, raw, params, n, flags & ~F.QUERY_STREAM, F.QUERY_STREAM)
        # Its first result set streams (the sets after it, a CALL's, are
        # read whole when it ends): this cursor is a streaming one until
        # that set is read.
        self._stream = True
        try:
            self._start_set(None)
            if self._types:
                self._data = await self._more(None)
                self.rowcount = len(self._data)
                self.rownumber = 0
        except asyncio.CancelledError:
            raise  # _more stopped the statement and freed the answer
        except BaseException:
            # Part of the answer may be unread: read off in a worker thread.
            await asyncio.get_running_loop().run_in_executor(None, self._free_rows)
            raise
        finally:
            self._stream = False
        return self.rowcount

    async def executemany(self, query, seq_of_args) -> int | None:  # type: ignore[override]
        """Runs the statement once per parameter set; rowcount is the sum."""
        total = 0
        for args in seq_of_args:
            await self.execute(query, args)
            total += max(self.rowcount, 0)
        self.rowcount = total
        return total

    def callproc(self, procname, args=()):  # pragma: no cover - blocking only
        raise E.NotSupportedError(0, "callproc is not available on an asyncio cursor: await execute('CALL ...')")

    @staticmethod
    def _fetch_blocking(rows, buf, cap: int, got) -> None:
        """staunch_rows_fetch, in a worker thread: its events (the answer's
        end) are delivered there, before it hands back."""
        try:
            _core._check(_core.lib.raw.staunch_rows_fetch, rows, buf, cap, byref(got))
        finally:
            _core._flush_traces()

    async def _more(self, want: int | None) -> list:
        """Up to ``want`` rows (None: all) of the current, streaming set: at
        least one, or none at its end. What has arrived is read without
        waiting; a wait for more waits on the socket in the event loop, or,
        where the library cannot tell from the socket (the sets after the
        first, on their way) and after ``_STREAM_SLICE`` seconds, in a
        worker thread within the statement's bounds. A cancelled task stops
        the statement with ``KILL QUERY`` and frees the answer."""
        if self._rows is None or not self._types or self._done:
            return []
        rows = self._rows
        types = self._types
        ncols = len(types)
        # The loop thread's buffer: each batch is converted before anything
        # is awaited. (A fetch in a worker thread fills the cursor's own.)
        buf, addr = _core._fetch_buffer(ncols)
        per = len(buf) // ncols
        if want is not None:
            per = max(1, min(want, per))
        cap = per * ncols
        conn = self.connection
        # The connection's reused out-values (see Connection._new_cells): the
        # count at +16, the error at +8; and whether the read stopped to wait.
        cells, base, _ = conn._cells or conn._new_cells()
        waits = _core._tls.__dict__.get("aio_waits") or _waits_cell()
        fetch_ready = _core.lib.fast.staunch_rows_fetch_ready
        conv = _core.C.row_converter(types)
        out: list = []
        try:
            while True:
                st = fetch_ready(rows, addr, cap, base + 16, waits[1], base + 8)
                _core._flush_traces()  # the answer's end, once read
                if st:
                    _raise_cell(st, cells, 1)
                n = cells[2]
                if n:
                    out += conv(buf, n)  # before the next fetch: the text is the row set's
                if not waits[0].value:
                    if n < per:  # not stopped for room: the set's end
                        self._done = True
                        break
                    if want is not None:
                        break
                    continue
                if out and want is not None:
                    break
                fd = ctypes.c_int(-1)
                conn_id = ctypes.c_uint64()
                _core._check(_core.lib.raw.staunch_rows_wait_fd, rows, byref(fd), byref(conn_id))
                if fd.value >= 0 and await _readable(fd.value, _STREAM_SLICE):
                    continue
                # Wait in the library, bounded as the statement is, off the
                # loop's thread, into a buffer of the cursor's own (the loop
                # thread's may be filled meanwhile by other tasks).
                own = self._abuf
                if own is None or len(own) < cap:
                    own = self._abuf = (F.staunch_value * cap)()
                got = ctypes.c_size_t()
                await asyncio.get_running_loop().run_in_executor(None, self._fetch_blocking, rows, own, cap, got)
                n = got.value
                if n == 0:
                    self._done = True
                    break
                out += conv(own, n)
                if want is not None:
                    break
        except asyncio.CancelledError:
            await _kill(conn._live())
            await asyncio.get_running_loop().run_in_executor(None, self._free_rows)
            raise
        self.rownumber += len(out)
        if self._done:
            self.rowcount = self.rownumber
        return out

    async def __aenter__(self) -> Cursor:
        return self

    async def __aexit__(self, *exc) -> None:
        self.close()


#: How long a streamed fetch waits on the socket before it waits in a worker
#: thread instead: a wait on the socket is not counted by the statement's
#: time limit and liveness check, a fetch in the library is.
_STREAM_SLICE = 1.0


class SSCursor(Cursor, _core.SSCursor):
    """A streaming cursor: ``await execute(...)`` returns once the answer
    begins to arrive; rows are then read as they come, ``async for row in
    cur`` or the awaitable ``fetchone``/``fetchmany``/``fetchall``. What has
    arrived is read without waiting; a wait for more rows waits on the
    connection's socket in the event loop, or, where the library cannot
    tell from the socket (the sets after the first, on their way) and after
    ``_STREAM_SLICE`` seconds, in a worker thread within the statement's
    bounds. Until its rows are read or it is closed (``await
    cur.aclose()``), the connection runs nothing else. A cancelled task
    stops the statement with ``KILL QUERY`` and reads the rest off."""

    async def execute(self, query, args=None) -> int:  # type: ignore[override]
        """Runs one statement; its rows stream (rowcount is -1 until read)."""
        conn, raw, params, n, flags, recycle = self._prepare(query, args)
        if recycle:
            _core.lib.fast.buffered.staunch_rows_free(recycle)
        self._rows = await _statement(conn, raw, params, n, flags & ~F.QUERY_STREAM, F.QUERY_STREAM)
        self._start_set(None)
        return self.rowcount

    async def fetchone(self):  # type: ignore[override]
        self._check_set()
        if not self._data:
            self._refill(await self._more(max(64, self.arraysize)))
        return self._pop()

    async def fetchmany(self, size: int | None = None) -> list:  # type: ignore[override]
        self._check_set()
        size = self.arraysize if size is None else size
        out = []
        while len(out) < size:
            r = await self.fetchone()
            if r is None:
                break
            out.append(r)
        return out

    async def fetchall(self) -> list:  # type: ignore[override]
        self._check_set()
        out = self._data[self._pos :]
        self._data = []
        while True:
            batch = await self._more(4096)
            if not batch:
                return out
            out += batch

    def __aiter__(self):
        return self

    async def __anext__(self):
        r = await self.fetchone()
        if r is None:
            raise StopAsyncIteration
        return r

    async def aclose(self) -> None:
        """Closes the cursor, reading what is left of its answer off in a
        worker thread (``close()`` would read it in the loop's thread)."""
        if self._rows is not None and not self._done:
            await asyncio.get_running_loop().run_in_executor(None, self._free_rows)
        self.close()

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    def nextset(self):  # pragma: no cover - blocking only
        raise E.NotSupportedError(0, "nextset on a streaming asyncio cursor: use a buffered cursor")
