"""The ``mysql+staunch`` and ``mariadb+staunch`` SQLAlchemy 2.x dialects.

    engine = create_engine("mysql+staunch://app:secret@127.0.0.1:3306/shop?max_size=8")
    engine = create_engine("mariadb+staunch://app:secret@127.0.0.1:3306/shop")

``mariadb+staunch`` is SQLAlchemy's MariaDB dialect over the same driver (as
SQLAlchemy builds ``mariadb+pymysql``): it insists on a MariaDB server and
uses MariaDB's own types (a native ``UUID``, ``INET4``/``INET6``).

staunch does the pooling: the engine's own pool is a ``NullPool``, so every
SQLAlchemy checkout borrows from staunch's pool (one shared pool per URL and
knobs in the process) and every checkin returns to it. URL query parameters
are staunch knobs (``connect_timeout=1s``, ``connection_timeout=5s``,
``query_timeout=30s``, ...); ``found_rows`` defaults to true, so an UPDATE
reports the rows it matched, as SQLAlchemy's ORM expects.
"""

from __future__ import annotations

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
            self._conn()
        else:
            super()._check_set()


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
        return sa_pool.NullPool

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
