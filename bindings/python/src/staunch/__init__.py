"""staunch: a MySQL/MariaDB connection pool that never hangs, as a PEP 249
(DB-API 2.0) module and a ``mysql+staunch`` SQLAlchemy dialect.

    import staunch
    pool = staunch.Pool("mysql://app:secret@127.0.0.1:3306/shop", max_size=8)
    with pool.connection(timeout=2) as conn:
        cur = conn.cursor()
        cur.execute("SELECT name FROM items WHERE id = %s", (42,))
        print(cur.fetchone())
    pool.close()

The library (libstaunch.so, the C ABI 1.x) is loaded with ctypes from the
package directory, or from ``$STAUNCH_LIBRARY``.
"""

from __future__ import annotations

import datetime as _datetime
import sys as _sys
import threading as _threading
import time as _time

from . import FIELD_TYPE, _convert, _core, _errors, _ffi, _interrupt
from ._core import CancelToken, Connection, Cursor, DictCursor, Event, Pool, PoolStats, SSCursor, TraceEvent
from ._errors import (
    BrokenConnection,
    Cancelled,
    ConfigError,
    ConflictError,
    ConnectRejected,
    DatabaseError,
    DatabaseUnreachable,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    NoWriter,
    OperationalError,
    ParameterTypeError,
    PoolClosed,
    PoolExhausted,
    PoolTimeout,
    ProgrammingError,
    ServerUnresponsive,
    StatementTimeout,
    Warning,  # noqa: A004 (the PEP 249 name)
)
from ._ffi import LibraryError

_lib = _ffi.load()
_ffi._fast(_lib, _convert._speedups)
_core.lib = _lib
_errors._lib = _lib
_interrupt._lib = _lib

__version__ = _lib.staunch_version_string().decode()

#: PEP 249 globals.
apilevel = "2.0"
threadsafety = 2  # threads may share the module and pools; a connection is one thread's at a time
paramstyle = "format"  # %s; %(name)s (pyformat) works too, as in PyMySQL

# --- PEP 249 type objects and constructors ------------------------------------------------
# FIELD_TYPE (the MySQL column type codes, cursor.description[i][1]) is the module
# staunch/FIELD_TYPE.py, which mysqldb.constants re-exports.


class DBAPISet(frozenset):
    """A PEP 249 type object: equal to every type code it contains."""

    def __eq__(self, other):
        if isinstance(other, (set, frozenset)):
            return frozenset.__eq__(self, other)
        return other in self

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return frozenset.__hash__(self)


_T = FIELD_TYPE
STRING = DBAPISet([_T.ENUM, _T.STRING, _T.VAR_STRING, _T.VARCHAR, _T.JSON, _T.SET])
BINARY = DBAPISet([_T.BLOB, _T.LONG_BLOB, _T.MEDIUM_BLOB, _T.TINY_BLOB, _T.BIT, _T.GEOMETRY])
NUMBER = DBAPISet(
    [_T.DECIMAL, _T.DOUBLE, _T.FLOAT, _T.INT24, _T.LONG, _T.LONGLONG, _T.TINY, _T.YEAR, _T.SHORT, _T.NEWDECIMAL]
)
DATE = DBAPISet([_T.DATE, _T.NEWDATE])
TIME = DBAPISet([_T.TIME])
TIMESTAMP = DBAPISet([_T.TIMESTAMP, _T.DATETIME])
DATETIME = TIMESTAMP
ROWID = DBAPISet()

Date = _datetime.date
Time = _datetime.time
Timestamp = _datetime.datetime


def DateFromTicks(ticks):  # noqa: N802 (PEP 249 name)
    return Date(*_time.localtime(ticks)[:3])


def TimeFromTicks(ticks):  # noqa: N802
    return Time(*_time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks):  # noqa: N802
    return Timestamp(*_time.localtime(ticks)[:6])


def Binary(x) -> bytes:  # noqa: N802
    return bytes(x)


# --- connect(): a connection from a shared pool per URL -----------------------------------

_shared: dict = {}
_shared_lock = _threading.Lock()


def shared_pool(url: str, **knobs) -> Pool:
    """The process-wide Pool for this URL and these knobs (made on first use)."""
    key = (url, tuple(sorted((k, repr(v)) for k, v in knobs.items())))
    with _shared_lock:
        pool = _shared.get(key)
        if pool is None or pool.closed:
            pool = _shared[key] = Pool(url, **knobs)
        return pool


def connect(url: str | None = None, *, timeout=None, **knobs) -> Connection:
    """PEP 249's constructor: a connection borrowed from the shared pool of
    this URL and knobs (``close()`` returns it to that pool)."""
    if url is None:
        raise ConfigError(0, "connect() needs a URL: mysql://user:password@host:port/database")
    return shared_pool(url, **knobs).connection(timeout=timeout)


def install_as_MySQLdb() -> None:  # noqa: N802 (PyMySQL's name)
    """Makes ``import MySQLdb`` (mysqlclient's API, which Django's MySQL backend
    uses) load ``staunch.mysqldb``, as ``pymysql.install_as_MySQLdb()`` does."""
    from . import mysqldb

    mods = {
        "MySQLdb": mysqldb,
        "MySQLdb.constants": mysqldb.constants,
        "MySQLdb.converters": mysqldb.converters,
        "MySQLdb.cursors": mysqldb.cursors,
    }
    for name in ("CLIENT", "ER", "FIELD_TYPE", "FLAG"):
        mods[f"MySQLdb.constants.{name}"] = getattr(mysqldb.constants, name)
    _sys.modules.update(mods)


def library_version() -> str:
    """The version of the libstaunch loaded."""
    return __version__


__all__ = [
    "apilevel",
    "threadsafety",
    "paramstyle",
    "connect",
    "install_as_MySQLdb",
    "shared_pool",
    "Pool",
    "CancelToken",
    "PoolStats",
    "Event",
    "TraceEvent",
    "Connection",
    "Cursor",
    "SSCursor",
    "DictCursor",
    "Warning",
    "Error",
    "InterfaceError",
    "DatabaseError",
    "DataError",
    "OperationalError",
    "IntegrityError",
    "InternalError",
    "ProgrammingError",
    "NotSupportedError",
    "ConfigError",
    "ParameterTypeError",
    "PoolTimeout",
    "PoolExhausted",
    "DatabaseUnreachable",
    "ConnectRejected",
    "PoolClosed",
    "NoWriter",
    "StatementTimeout",
    "Cancelled",
    "BrokenConnection",
    "ConflictError",
    "ServerUnresponsive",
    "LibraryError",
    "FIELD_TYPE",
    "STRING",
    "BINARY",
    "NUMBER",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "DATETIME",
    "ROWID",
    "Date",
    "Time",
    "Timestamp",
    "DateFromTicks",
    "TimeFromTicks",
    "TimestampFromTicks",
    "Binary",
]
