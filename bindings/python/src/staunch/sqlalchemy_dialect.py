"""The ``mysql+staunch`` and ``mariadb+staunch`` SQLAlchemy 2.x dialects.

    engine = create_engine("mysql+staunch://app:secret@127.0.0.1:3306/shop?max_size=8")
    engine = create_engine("mariadb+staunch://app:secret@127.0.0.1:3306/shop")

``mariadb+staunch`` is SQLAlchemy's MariaDB dialect over the same driver (as
SQLAlchemy builds ``mariadb+pymysql``): it insists on a MariaDB server and
uses MariaDB's own types (a native ``UUID``, ``INET4``/``INET6``).

staunch does the pooling: the engine's own pool is a ``StaunchPool`` (a
``NullPool``), so every SQLAlchemy checkout borrows from staunch's pool (one
shared pool per URL and knobs in the process) and every checkin returns to
it; ``engine.pool.staunch_pool`` is that staunch ``Pool`` (for its
``metrics_text()`` and ``staunch.prometheus.StaunchCollector``). SQLAlchemy's
pool events fire as a ``NullPool`` fires them: ``connect`` and ``close``
around every borrow (staunch resets a changed session on return, so each
borrow starts a session that a ``connect`` listener must set up again),
``checkout``/``reset``/``checkin`` as with any pool, ``invalidate`` when a
connection is invalidated (staunch then closes it). URL query parameters
are staunch knobs (``connect_timeout=1s``, ``connection_timeout=5s``,
``query_timeout=30s``, ...); ``found_rows`` defaults to true, so an UPDATE
reports the rows it matched, as SQLAlchemy's ORM expects.
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import pool as sa_pool
from sqlalchemy.dialects.mysql.base import MySQLCompiler, MySQLDialect, MySQLExecutionContext
from sqlalchemy.dialects.mysql.mariadb import MariaDBDialect

from . import _core
from . import _ffi as F


class MySQLExecutionContext_staunch(MySQLExecutionContext):
    pass


class MySQLCompiler_staunch(MySQLCompiler):
    pass


class SSCursor_staunch(_core.SSCursor):
    """The streaming cursor of ``stream_results``. SQLAlchemy reads a row
    ahead from a server-side cursor before it looks at the description,
    whatever the statement (an INSERT, a DDL): one that made no result set
    gives no rows here, as PyMySQL's SSCursor does, where staunch's own
    cursor raises (PEP 249)."""

    def _check_set(self) -> None:
        if self._has_run:
            self._live()
        else:
            super()._check_set()


#: Set while StaunchPool.staunch_pool runs the engine's creator: the
#: dialect's connect() then answers with the pool instead of borrowing.
_resolving = threading.local()


def _pool_of(url=None, *, timeout=None, **knobs):
    """The pool staunch.connect(url, timeout=..., **knobs) borrows from."""
    import staunch

    if url is None:
        return staunch.connect(url)  # raises ConfigError, as connect() would
    return staunch.shared_pool(url, **knobs)


class StaunchPool(sa_pool.NullPool):
    """The engine's pool under ``mysql+staunch``: a ``NullPool`` whose every
    checkout borrows from staunch's pool and every checkin returns to it.

    SQLAlchemy's ``PoolEvents`` fire as SQLAlchemy's own pool code fires
    them, with its ``(dbapi_connection, connection_record)``: ``connect``
    when a borrow begins (a new ``staunch.Connection`` and record, whose
    ``info`` lasts for that borrow), ``checkout``, ``reset`` and ``checkin``
    per borrow, ``close`` when it goes back to staunch, ``invalidate`` (then
    ``close``) when it is invalidated, ``detach``/``close_detached`` for a
    detached one. The physical connections behind them are staunch's: count
    them with ``staunch_pool.metrics_text()`` or ``StaunchCollector``.
    """

    _staunch = None

    def status(self) -> str:
        return "StaunchPool"

    def _do_return_conn(self, record) -> None:
        conn = record.dbapi_connection
        if conn is not None and getattr(record, "_soft_invalidate_time", 0) > record.starttime:
            # invalidate(soft=True): "not to be used again once returned";
            # returned to staunch it would be.
            conn.discard()
        record.close()

    @property
    def staunch_pool(self):
        """The ``staunch.Pool`` this engine borrows from: the one
        ``staunch.connect()`` would use with the engine's URL,
        ``connect_args`` and ``do_connect`` listeners. Getting it opens no
        connection. It is shared by every engine (and ``staunch.connect``
        call) with the same URL and knobs in the process, and outlives
        ``engine.dispose()``; do not close it while they use it."""
        p = self._staunch
        if p is None or p.closed:
            _resolving.on = True
            try:
                p = self._invoke_creator(None)
            finally:
                _resolving.on = False
            if isinstance(p, _core.Connection):
                # a creator= or do_connect listener that borrows itself
                conn, p = p, p._pool_ref
                conn.close()
            if not isinstance(p, _core.Pool):
                raise TypeError(f"the engine's creator gives {type(p).__name__}, not staunch connections")
            self._staunch = p
        return p


#: Statuses after which the connection cannot be used again.
_DISCONNECT_STATUSES = {F.IO_ERROR, F.BROKEN, F.SERVER_UNRESPONSIVE, F.CONNECT_FAILED, F.UNREACHABLE}
#: Server errors that mean the session is gone (as SQLAlchemy's MySQL dialects).
_DISCONNECT_ERRNOS = {1927, 2006, 2013, 2014, 2045, 2055, 4031}


class StaunchDialect(MySQLDialect):
    driver = "staunch"
    supports_statement_cache = True
    supports_unicode_statements = True
    supports_sane_rowcount = True
    supports_sane_multi_rowcount = True
    supports_native_decimal = True
    supports_server_side_cursors = True
    default_paramstyle = "format"
    execution_ctx_cls = MySQLExecutionContext_staunch
    statement_compiler = MySQLCompiler_staunch

    @classmethod
    def import_dbapi(cls):
        import staunch

        return staunch

    @classmethod
    def get_pool_class(cls, url):
        # staunch pools; SQLAlchemy's pool passes every checkout through.
        return StaunchPool

    def connect(self, *cargs, **cparams):
        if getattr(_resolving, "on", False):
            return _pool_of(*cargs, **cparams)
        return self.loaded_dbapi.connect(*cargs, **cparams)

    def do_terminate(self, dbapi_connection) -> None:
        # An invalidated connection (Connection.invalidate(), a disconnect):
        # staunch closes it, where close() would hand it to the next borrower.
        dbapi_connection.discard()

    @property
    def _sscursor(self):
        return SSCursor_staunch

    def create_connect_args(self, url) -> tuple[list, dict[str, Any]]:
        query = dict(url.query)
        query.setdefault("found_rows", "true")
        timeout = query.pop("checkout_timeout", None)
        staunch_url = url.set(drivername="mysql", query=query).render_as_string(hide_password=False)
        kw: dict[str, Any] = {}
        if timeout is not None:
            kw["timeout"] = float(timeout)
        return [staunch_url], kw

    def do_ping(self, dbapi_connection) -> bool:
        dbapi_connection.ping()
        return True

    def do_executemany(self, cursor, statement, parameters, context=None) -> None:
        rowcount = cursor.executemany(statement, parameters)
        if context is not None:
            context._rowcount = rowcount

    def is_disconnect(self, e, connection, cursor) -> bool:
        dbapi = self.dbapi
        if not isinstance(e, dbapi.Error):
            return False
        if e.status in _DISCONNECT_STATUSES or e.args[0] in _DISCONNECT_ERRNOS:
            return True
        if e.status == F.STATEMENT_TIMEOUT or e.status == F.CLOSED:
            # cut off by the client (the connection is broken) / pool closed
            raw = getattr(connection, "dbapi_connection", connection)
            return bool(getattr(raw, "is_broken", False)) or e.status == F.CLOSED
        return False

    def _extract_error_code(self, exception) -> int:
        return exception.args[0]

    def _detect_charset(self, connection) -> str:
        return "utf8mb4"

    def get_isolation_level_values(self, dbapi_conn):
        return ("SERIALIZABLE", "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "AUTOCOMMIT")

    def detect_autocommit_setting(self, dbapi_conn) -> bool:
        return dbapi_conn.autocommit

    def set_isolation_level(self, dbapi_connection, level) -> None:
        if level == "AUTOCOMMIT":
            dbapi_connection.autocommit = True
        else:
            dbapi_connection.autocommit = False
            super().set_isolation_level(dbapi_connection, level)


class StaunchMariaDBDialect(MariaDBDialect, StaunchDialect):
    """``mariadb+staunch``: SQLAlchemy's MariaDB dialect on staunch."""

    supports_statement_cache = True


dialect = StaunchDialect
mariadb_dialect = StaunchMariaDBDialect
