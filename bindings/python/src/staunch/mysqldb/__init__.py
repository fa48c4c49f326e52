"""mysqlclient's ``MySQLdb`` API over staunch, for code written against it
(Django's MySQL backend first): ``staunch.install_as_MySQLdb()`` makes
``import MySQLdb`` load this, as ``pymysql.install_as_MySQLdb()`` does.

``connect(host=..., user=..., password=..., database=..., **kwargs)`` takes
mysqlclient's keyword arguments and borrows a connection from one staunch
pool per distinct set of arguments (so one pool per Django ``DATABASES``
entry); ``close()`` returns it to that pool. Statements, parameters, values
and errors are staunch's (PEP 249); what mysqlclient adds and this offers:
``constants`` (CLIENT, FIELD_TYPE, ER, FLAG), ``converters`` (``conversions``,
``conv=`` entries applied to column values), ``version_info``,
``Connection.autocommit(on)`` / ``get_autocommit()``, ``get_server_info()``,
``ping()``, ``escape()`` / ``literal()``, ``encoders``, ``thread_id()``,
``insert_id()``, ``affected_rows()``, ``character_set_name()``, the cursor
classes in ``cursors`` and every error class.
"""

from __future__ import annotations

import threading

from .. import (
    BINARY,
    DATE,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    TIME,
    TIMESTAMP,
    Binary,
    DatabaseError,
    DataError,
    Date,
    DateFromTicks,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
    Warning,  # noqa: A004 (the PEP 249 name)
    _core,
    shared_pool,
)
from . import constants, converters, cursors
from .constants import CLIENT, FIELD_TYPE

#: The mysqlclient API level offered (Django 5.2 asks for 1.4.3 or newer).
version_info = (2, 2, 0, "final", 0)
__version__ = "2.2.0"
apilevel = "2.0"
threadsafety = 1
paramstyle = "format"

# client_flag bits that change nothing here: staunch negotiates the protocol.
_HARMLESS_FLAGS = (
    CLIENT.LONG_PASSWORD
    | CLIENT.LONG_FLAG
    | CLIENT.CONNECT_WITH_DB
    | CLIENT.PROTOCOL_41
    | CLIENT.TRANSACTIONS
    | CLIENT.SECURE_CONNECTION
    | CLIENT.MULTI_STATEMENTS
    | CLIENT.MULTI_RESULTS
    | CLIENT.PS_MULTI_RESULTS
    | CLIENT.PLUGIN_AUTH
    | CLIENT.INTERACTIVE
    | CLIENT.IGNORE_SIGPIPE
)


class Connection(_core.Connection):
    """A staunch connection with mysqlclient's methods."""

    _column_conv: dict = {}
    _cursorclass = cursors.Cursor

    def autocommit(self, on: bool) -> None:  # mysqlclient's is a method
        _core.Connection.autocommit.fset(self, on)

    def get_autocommit(self) -> bool:
        return _core.Connection.autocommit.fget(self)

    def cursor(self, cursorclass=None):
        return super().cursor(cursorclass or self._cursorclass)

    def get_server_info(self) -> str:
        """The server's version string (read once per pool)."""
        pool = self._pool_ref
        info = getattr(pool, "_server_info", None)
        if info is None:
            cur = _core.Cursor(self)
            cur.execute("SELECT VERSION()")
            info = pool._server_info = cur.fetchone()[0]
            cur.close()
        return info

    def get_proto_info(self) -> int:
        return 10

    def get_host_info(self) -> str:
        return "staunch pool"

    def character_set_name(self) -> str:
        return "utf8mb4"

    def set_character_set(self, charset, collation=None) -> None:
        if charset not in ("utf8mb4", "utf8", "utf8mb3"):
            raise NotSupportedError(0, f"staunch's sessions are utf8mb4; character set {charset!r} is not offered")

    def select_db(self, db: str) -> None:
        cur = _core.Cursor(self)
        cur.execute("USE `" + db.replace("`", "``") + "`")
        cur.close()

    def escape(self, obj, mapping=None) -> str:
        return converters.escape(obj)

    def literal(self, obj) -> str:
        return converters.escape(obj)

    @property
    def encoders(self) -> dict:
        return self.__dict__.setdefault("_encoders", dict(converters.encoders))

    def insert_id(self) -> int:
        return self._last_result().last_insert_id

    def affected_rows(self) -> int:
        return self._last_result().affected_rows

    def show_warnings(self):
        cur = _core.Cursor(self)
        cur.execute("SHOW WARNINGS")
        rows = cur.fetchall()
        cur.close()
        return tuple(rows)


_cfg_lock = threading.Lock()


def connect(
    host=None,
    user=None,
    passwd=None,
    db=None,
    port=None,
    unix_socket=None,
    conv=None,
    connect_timeout=None,
    init_command=None,
    cursorclass=None,
    charset=None,
    client_flag=0,
    autocommit=False,
    password=None,
    database=None,
    read_timeout=None,
    write_timeout=None,
    use_unicode=True,
    sql_mode=None,
    program_name=None,
    connect_attrs=None,
    **unsupported,
) -> Connection:
    """mysqlclient's ``connect``: a connection borrowed from the staunch pool of
    these arguments (one pool per distinct set, made on first use)."""
    for name in ("compress", "named_pipe", "local_infile", "ssl", "ssl_mode", "read_default_file"):
        if unsupported.get(name):
            raise NotSupportedError(0, f"connect(): {name} is not supported by staunch's MySQLdb API")
        unsupported.pop(name, None)
    unsupported.pop("read_default_group", None)
    unsupported.pop("binary_prefix", None)
    unsupported.pop("collation", None)
    unsupported.pop("auth_plugin", None)
    if unsupported:
        raise TypeError(f"connect() got unexpected keyword arguments: {', '.join(sorted(unsupported))}")
    if not use_unicode:
        raise NotSupportedError(0, "connect(): use_unicode=False is not supported (text comes back as str)")
    if charset and charset not in ("utf8mb4", "utf8", "utf8mb3"):
        raise NotSupportedError(0, f"connect(): staunch's sessions are utf8mb4, not {charset!r}")
    if client_flag & ~(_HARMLESS_FLAGS | CLIENT.FOUND_ROWS):
        raise NotSupportedError(0, f"connect(): client_flag {client_flag:#x} asks for what staunch does not offer")
    knobs: dict = {}
    if unix_socket:
        knobs["socket"] = unix_socket
    knobs["host"] = host or ("" if unix_socket else "localhost")
    if port:
        knobs["port"] = int(port)
    if user:
        knobs["user"] = user
    pw = password if password is not None else passwd
    if pw:
        knobs["password"] = pw
    dbname = database if database is not None else db
    if dbname:
        knobs["database"] = dbname
    if connect_timeout:
        knobs["connect_timeout"] = f"{int(float(connect_timeout) * 1000)}ms"
    if read_timeout:
        knobs["query_timeout"] = f"{int(float(read_timeout) * 1000)}ms"
    knobs["found_rows"] = bool(client_flag & CLIENT.FOUND_ROWS)
    init = []
    if sql_mode:
        init.append("SET sql_mode=" + converters.escape(sql_mode))
    if init_command:
        init.append(init_command)
    if init:
        knobs["init_sql"] = "; ".join(init)
    # PyMySQL's names: connection attributes (performance_schema.session_connect_attrs).
    if program_name is not None:
        knobs["program_name"] = program_name
    if connect_attrs is not None:
        knobs["connect_attrs"] = connect_attrs
    pool = shared_pool(None, autocommit=bool(autocommit), **knobs)
    if getattr(pool, "_conn_cls", None) is None:
        pool._conn_cls = Connection
    conn = pool.connection()
    col = converters.column_converters(conv)
    if col:
        conn._column_conv = col
    if cursorclass is not None:
        conn._cursorclass = cursorclass
    return conn


Connect = connect


def get_client_info() -> str:
    return __version__


def string_literal(obj) -> str:
    return converters.escape(obj)


__all__ = [
    "BINARY",
    "DATE",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "TIME",
    "TIMESTAMP",
    "Binary",
    "Connect",
    "Connection",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "FIELD_TYPE",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "connect",
    "constants",
    "converters",
    "cursors",
    "get_client_info",
    "string_literal",
    "version_info",
]
