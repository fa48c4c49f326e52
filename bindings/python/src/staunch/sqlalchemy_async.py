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

from sqlalchemy.connectors.asyncio import (
    AsyncAdapt_dbapi_connection,
    AsyncAdapt_dbapi_module,
    AsyncAdapt_dbapi_ss_cursor,
)
from sqlalchemy.dialects.mysql.mariadb import MariaDBDialect
from sqlalchemy.util.concurrency import await_

from . import aio
from .sqlalchemy_dialect import StaunchDialect


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


class _SSCursor(_Cursor):
    """staunch.aio's streaming cursor (``stream_results=True``): fetch*
    awaited, rows read as they arrive."""

    def __init__(self, conn: aio.Connection):
        self._c = aio.SSCursor(conn)

    async def fetchone(self):
        return await self._c.fetchone()

    async def fetchmany(self, size=None):
        return await self._c.fetchmany(size)

    async def fetchall(self):
        return await self._c.fetchall()

    def __aiter__(self):
        return self._c.__aiter__()

    async def close(self) -> None:
        await self._c.aclose()

    async def __aexit__(self, *exc) -> None:
        await self._c.aclose()


class _Connection:
    """A borrowed ``staunch.aio.Connection`` as SQLAlchemy's adapter drives
    an asyncio driver's connection."""

    def __init__(self, conn: aio.Connection):
        self._conn = conn

    def cursor(self, server_side: bool = False) -> _Cursor:
        return (_SSCursor if server_side else _Cursor)(self._conn)

    async def commit(self) -> None:
        await self._conn.commit()

    async def rollback(self) -> None:
        await self._conn.rollback()

    async def close(self) -> None:
        self._conn.release()

    async def ping(self) -> None:
        await self._conn.execute("SELECT 1")


class AsyncAdapt_staunch_ss_cursor(AsyncAdapt_dbapi_ss_cursor):
    __slots__ = ()

    def _make_new_cursor(self, connection: _Connection) -> _SSCursor:
        return connection.cursor(server_side=True)


class AsyncAdapt_staunch_connection(AsyncAdapt_dbapi_connection):
    __slots__ = ()

    _ss_cursor_cls = AsyncAdapt_staunch_ss_cursor

    def ping(self, reconnect: bool = False) -> None:
        await_(self._connection.ping())

    @property
    def autocommit(self) -> bool:
        return self._connection._conn._conn.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        await_(self._connection._conn.set_autocommit(value))

    def discard(self) -> None:
        """Closes the connection instead of returning it (SQLAlchemy's
        invalidation: staunch then makes a new one)."""
        self._connection._conn._conn.discard()

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

    def connect(self, url: str, timeout=None, **knobs) -> AsyncAdapt_staunch_connection:
        # The shared pool the blocking dialect uses for the same URL and knobs.
        pool = aio.Pool.over(self.staunch.shared_pool(url, **knobs))

        async def borrow():
            return _Connection(await pool.connection(timeout))

        return await_(AsyncAdapt_staunch_connection.create(self, borrow()))


class StaunchAsyncDialect(StaunchDialect):
    """The blocking dialect's behaviour (its pool class, connect, ping,
    terminate, disconnects, autocommit) over the adapter above."""

    driver = "staunch_async"
    is_async = True
    supports_statement_cache = True

    @classmethod
    def import_dbapi(cls):
        return AsyncAdapt_staunch_dbapi()

    def get_driver_connection(self, connection):
        return connection._connection


class StaunchAsyncMariaDBDialect(MariaDBDialect, StaunchAsyncDialect):
    """``mariadb+staunch_async``: SQLAlchemy's MariaDB dialect on staunch.aio."""

    supports_statement_cache = True


dialect = StaunchAsyncDialect
mariadb_dialect = StaunchAsyncMariaDBDialect
