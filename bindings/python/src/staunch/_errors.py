"""The PEP 249 exception hierarchy, and how staunch's statuses map onto it."""

from __future__ import annotations

from . import _ffi as F


class Warning(Exception):  # noqa: A001 (PEP 249 name)
    """Important warnings, such as data truncation (PEP 249)."""


class Error(Exception):
    """Base of every staunch error.

    ``args[0]`` is the MySQL error number (0 when the error did not come from
    the server), ``args[1]`` the message, as in PyMySQL and mysqlclient.
    ``errno``, ``sqlstate``, ``status`` (the C status code) and ``status_name``
    are attributes.
    """

    def __init__(self, errno: int = 0, msg: str = "", *, sqlstate: str = "", status: int = 0):
        super().__init__(errno, msg)
        self.errno = errno
        self.msg = msg
        self.sqlstate = sqlstate
        self.status = status

    @property
    def status_name(self) -> str:
        return _status_name(self.status)

    def __str__(self) -> str:
        if self.errno:
            return f"({self.errno}, {self.sqlstate or 'HY000'}) {self.msg}"
        return self.msg


class InterfaceError(Error):
    """Misuse of the module: a closed object, a bad argument."""


class DatabaseError(Error):
    """Errors of the database or the connection to it."""


class DataError(DatabaseError):
    """A value out of range, or that does not fit its column."""


class OperationalError(DatabaseError):
    """The database or the connection failed, not the statement's text."""


class IntegrityError(DatabaseError):
    """A duplicate key, a foreign key or NOT NULL violation."""


class InternalError(DatabaseError):
    """A bug in staunch (or an internal server error)."""


class ProgrammingError(DatabaseError):
    """A bad statement: syntax, unknown table or column, wrong parameters."""


class NotSupportedError(DatabaseError):
    """A method or database feature staunch does not support."""


class ConfigError(InterfaceError, ValueError):
    """A bad URL, an unknown knob, a value out of its range: the message names it."""


class ParameterTypeError(ProgrammingError, TypeError):
    """A parameter of a type staunch cannot bind."""


class PoolTimeout(OperationalError):
    """``Pool.connection()`` timed out. The message gives the pool's state."""


class PoolExhausted(PoolTimeout):
    """Timed out while every connection was in use (a leak, or too small a pool)."""


class DatabaseUnreachable(PoolTimeout):
    """Timed out and no connection could be made; the message says why
    (e.g. no greeting from host:port within connect_timeout)."""


class ConnectRejected(OperationalError):
    """The server refused the credentials or the database (reported at once)."""


class PoolClosed(InterfaceError):
    """The pool was closed."""


class NoWriter(OperationalError):
    """A topology pool has no writable primary right now."""


class StatementTimeout(OperationalError):
    """A statement ran past its time limit. Ended by the server, the
    connection stays usable; cut off by the client, it is broken."""


class Cancelled(OperationalError):
    """A get or a statement was cancelled (the connection stays usable)."""


class ServerUnresponsive(OperationalError):
    """The server stopped answering during the statement (liveness check:
    not answering, restarted or replaced, or no longer running the
    connection); the connection is broken: get another one."""


class ConflictError(OperationalError):
    """The server rolled the whole transaction back because it lost a
    conflict: a deadlock or, in a Galera cluster, a certification failure
    (``errno`` 1213, ``sqlstate`` 40001; PyMySQL raises OperationalError for
    it). The connection stays usable; running the transaction again from its
    start may succeed."""


class BrokenConnection(OperationalError):
    """The connection broke during an earlier statement: get another one."""


# The library's category of a server error (one table in the core, the union
# of PyMySQL's and Connector/J's choices) as PEP 249's classes. Categories
# PEP 249 does not tell apart (access, connection, rollback, timeout,
# transient) and any added later are OperationalError, as in PyMySQL.
_CATEGORY = {
    F.CATEGORY_INTEGRITY: IntegrityError,
    F.CATEGORY_PROGRAMMING: ProgrammingError,
    F.CATEGORY_DATA: DataError,
    F.CATEGORY_NOT_SUPPORTED: NotSupportedError,
    F.CATEGORY_INTERNAL: InternalError,
}

_STATUS = {
    F.NULL_ARGUMENT: InterfaceError,
    F.INVALID_UTF8: DataError,
    F.BAD_INDEX: InterfaceError,
    F.WRONG_TYPE: InterfaceError,
    F.OUT_OF_RANGE: DataError,
    F.USE_AFTER_RELEASE: InterfaceError,
    F.INVALID_CONFIG: ConfigError,
    F.NULL_VALUE: InterfaceError,
    F.NO_ROW: InterfaceError,
    F.PARAM_COUNT: ProgrammingError,
    F.BAD_PARAM_TYPE: ProgrammingError,
    F.CONN_BUSY: InterfaceError,
    F.INVALID_ARGUMENT: InterfaceError,
    F.POOL_EXHAUSTED: PoolExhausted,
    F.UNREACHABLE: DatabaseUnreachable,
    F.CONNECT_REJECTED: ConnectRejected,
    F.CONNECT_FAILED: OperationalError,
    F.CLOSED: PoolClosed,
    F.NO_WRITER: NoWriter,
    F.IO_ERROR: OperationalError,
    F.BROKEN: BrokenConnection,
    F.STATEMENT_TIMEOUT: StatementTimeout,
    F.CANCELLED: Cancelled,
    F.SERVER_UNRESPONSIVE: ServerUnresponsive,
    F.CONFLICT: ConflictError,
    F.INTERNAL: InternalError,
    F.PANIC: InternalError,
}

_lib = None


def _status_name(status: int) -> str:
    if _lib is None:
        return str(status)
    return _lib.staunch_status_name(status).decode()


def class_for(status: int, category: int = F.CATEGORY_NONE) -> type:
    """The exception class for a C status and the library's category of the
    server's error (``staunch_error_category``)."""
    if status == F.SERVER_ERROR:
        return _CATEGORY.get(category, OperationalError)
    cls = _STATUS.get(status)
    if cls is not None:
        return cls
    if 100 <= status < 200:
        return InterfaceError
    if 200 <= status < 300:
        return OperationalError
    if 300 <= status < 400:
        return DatabaseError
    return InternalError


def from_error(status: int, err) -> Error:
    """Builds the exception for a failed call, and frees the error object."""
    lib = _lib
    if err:
        try:
            msg = lib.staunch_error_message(err).decode("utf-8", "replace")
            errno = lib.staunch_error_server_code(err)
            sqlstate = (lib.staunch_error_sqlstate(err) or b"").decode("ascii", "replace")
            category = lib.staunch_error_category(err)
        finally:
            lib.staunch_error_free(err)
    else:
        msg, errno, sqlstate, category = _status_name(status), 0, "", F.CATEGORY_NONE
    return class_for(status, category)(errno, msg, sqlstate=sqlstate, status=status)
