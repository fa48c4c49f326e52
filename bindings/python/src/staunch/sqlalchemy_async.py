"""The ``mysql+staunch_async`` SQLAlchemy dialect, for ``create_async_engine``.

    engine = create_async_engine("mysql+staunch_async://app:secret@127.0.0.1:3306/shop?max_size=8")
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT 1"))).all()

The ``mysql+staunch`` dialect's behaviour (staunch does the pooling through a
``StaunchPool``; URL query parameters are staunch knobs; ``found_rows`` on)
over ``staunch.aio``: a checkout borrows from staunch's pool waiting in the
event loop, each statement's task waits for its answer there, and a
cancelled task stops its statement with ``KILL QUERY``. Needs SQLAlchemy's
asyncio extra (``greenlet``).
"""

from __future__ import annotations

import weakref

from sqlalchemy.connectors.asyncio import (
    AsyncAdapt_dbapi_connection,
    AsyncAdapt_dbapi_cursor,
    AsyncAdapt_dbapi_module,
    AsyncAdapt_terminate,
)
from sqlalchemy.dialects.mysql.mariadb import MariaDBDialect
from sqlalchemy.util.concurrency import await_

from . import aio
from .sqlalchemy_dialect import StaunchDialect, StaunchPool, _pool_of, _resolving


class _Cursor:
    """staunch.aio's cursor as SQLAlchemy's adapter drives an asyncio
    driver's: execute and fetch* awaited (the answer is read whole at
    execute: fetch* never wait)."""

    def __init__(self, conn: aio.Connection):
        self._c = aio.Cursor(conn)

    description = property(lambda self: self._c.description)
    rowcount = property(lambda self: self._c.rowcount)
    lastrowid = property(lambda self: self._c.lastrowid)

    @property
    def arraysize(self) -> int:
        return self._c.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._c.arraysize = value

    async def execute(self, operation, parameters=None):
        return await self._c.execute(operation, parameters)

    async def executemany(self, operation, seq_of_parameters):
        return await self._c.executemany(operation, seq_of_parameters)

    async def fetchone(self):
        return self._c.fetchone()

    async def fetchmany(self, size=None):
        return self._c.fetchmany(size) if size is not None else self._c.fetchmany()

    async def fetchall(self):
        return self._c.fetchall()

    async def nextset(self):
        return self._c.nextset()

    async def setinputsizes(self, *sizes) -> None:
        return None

    async def close(self) -> None:
        self._c.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        self._c.close()


class _Connection:
    """A borrowed ``staunch.aio.Connection`` as SQLAlchemy's adapter drives
    an asyncio driver's connection."""

    def __init__(self, conn: aio.Connection):
        self._conn = conn

    def cursor(self) -> _Cursor:
        return _Cursor(self._conn)

    async def commit(self) -> None:
        await self._conn.commit()

    async def rollback(self) -> None:
        await self._conn.rollback()

    async def close(self) -> None:
        self._conn.release()

    async def ping(self) -> None:
        await self._conn.execute("SELECT 1")


class AsyncAdapt_staunch_cursor(AsyncAdapt_dbapi_cursor):
    __slots__ = ()


class AsyncAdapt_staunch_connection(AsyncAdapt_terminate, AsyncAdapt_dbapi_connection):
    __slots__ = ()

    _cursor_cls = AsyncAdapt_staunch_cursor
    _ss_cursor_cls = AsyncAdapt_staunch_cursor  # buffered: no server-side cursor yet

    def ping(self, reconnect: bool = False) -> None:
        await_(self._connection.ping())

    @property
    def autocommit(self) -> bool:
        return self._connection._conn._conn.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        # A session setting, sent as SET autocommit (no row; instant).
        self._connection._conn._conn.autocommit = value

    def discard(self) -> None:
        """Closes the connection instead of returning it (SQLAlchemy's
        invalidation: staunch then makes a new one)."""
        self._connection._conn._conn.discard()

    async def _terminate_graceful_close(self) -> None:
        self.discard()

    def _terminate_force_close(self) -> None:
        self.discard()

    @property
    def is_broken(self) -> bool:
        return self._connection._conn._conn.is_broken


class AsyncAdapt_staunch_dbapi(AsyncAdapt_dbapi_module):
    """``staunch`` as an asyncio DB-API module for SQLAlchemy's adapter."""

    def __init__(self):
        import staunch

        super().__init__(staunch)
        self.staunch = staunch
        self.paramstyle = "format"
        for name in dir(staunch):
            if name[:1].isupper() and not hasattr(self, name):
                setattr(self, name, getattr(staunch, name))
        self._pools: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def _aio_pool(self, url: str, **knobs) -> aio.Pool:
        """One staunch.aio pool per staunch pool: over the shared pool the
        blocking dialect uses for the same URL and knobs."""
        sync = self.staunch.shared_pool(url, **knobs)
        p = self._pools.get(id(sync))
        if p is None or p._pool is not sync:
            p = aio.Pool.__new__(aio.Pool)
            p._pool = sync
            self._pools[id(sync)] = p
        return p

    def connect(self, url: str, timeout=None, **knobs) -> AsyncAdapt_staunch_connection:
        pool = self._aio_pool(url, **knobs)

        async def borrow():
            return _Connection(await pool.connection(timeout))

        return await_(AsyncAdapt_staunch_connection.create(self, borrow()))


class StaunchAsyncPool(StaunchPool):
    """``StaunchPool`` for the async engine (its checkouts run in the
    engine's greenlet: the borrow waits in the event loop)."""


class StaunchAsyncDialect(StaunchDialect):
    driver = "staunch_async"
    is_async = True
    supports_statement_cache = True
    supports_server_side_cursors = False

    @classmethod
    def import_dbapi(cls):
        return AsyncAdapt_staunch_dbapi()

    @classmethod
    def get_pool_class(cls, url):
        return StaunchAsyncPool

    def connect(self, *cargs, **cparams):
        if getattr(_resolving, "on", False):
            # StaunchPool.staunch_pool asks which pool: the shared one.
            return _pool_of(*cargs, **cparams)
        return self.loaded_dbapi.connect(*cargs, **cparams)

    def do_terminate(self, dbapi_connection) -> None:
        dbapi_connection.terminate()

    def do_ping(self, dbapi_connection) -> bool:
        dbapi_connection.ping()
        return True

    def is_disconnect(self, e, connection, cursor) -> bool:
        return super().is_disconnect(e, getattr(connection, "_connection", connection), cursor)

    def detect_autocommit_setting(self, dbapi_conn) -> bool:
        return dbapi_conn.autocommit

    def get_driver_connection(self, connection):
        return connection._connection


class StaunchAsyncMariaDBDialect(MariaDBDialect, StaunchAsyncDialect):
    """``mariadb+staunch_async``: SQLAlchemy's MariaDB dialect on staunch.aio."""

    supports_statement_cache = True


dialect = StaunchAsyncDialect
mariadb_dialect = StaunchAsyncMariaDBDialect
