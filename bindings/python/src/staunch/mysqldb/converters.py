"""``MySQLdb.converters``: the column-type conversions a ``connect(conv=...)``
dict starts from, and the parameter encoders (``Connection.encoders``).

staunch reads every column into its natural Python type itself (the table in
the binding's README: TIME as ``timedelta``, DECIMAL as ``Decimal``, ...),
which is what mysqlclient's defaults below give. A ``conv`` entry that differs
from them is applied to the values of that column type, given as mysqlclient
gives them: the column's text (Django maps TIME to ``datetime.time`` this way).
"""

from __future__ import annotations

import datetime
import decimal

from .constants import FIELD_TYPE


def _as_text(value):
    """A value as mysqlclient hands it to a converter: the column's text."""
    if isinstance(value, datetime.timedelta):
        neg = value < datetime.timedelta(0)
        v = -value if neg else value
        hours, rem = divmod(v.days * 86400 + v.seconds, 3600)
        minutes, seconds = divmod(rem, 60)
        text = f"{'-' if neg else ''}{hours:02d}:{minutes:02d}:{seconds:02d}"
        return text + (f".{v.microseconds:06d}" if v.microseconds else "")
    if isinstance(value, datetime.datetime):
        return value.isoformat(" ")
    if isinstance(value, (datetime.date, decimal.Decimal, int, float)):
        return str(value)
    return value


#: mysqlclient's default column conversions, as staunch already applies them.
conversions: dict = {
    FIELD_TYPE.TINY: int,
    FIELD_TYPE.SHORT: int,
    FIELD_TYPE.LONG: int,
    FIELD_TYPE.LONGLONG: int,
    FIELD_TYPE.INT24: int,
    FIELD_TYPE.YEAR: int,
    FIELD_TYPE.FLOAT: float,
    FIELD_TYPE.DOUBLE: float,
    FIELD_TYPE.DECIMAL: decimal.Decimal,
    FIELD_TYPE.NEWDECIMAL: decimal.Decimal,
    FIELD_TYPE.TIMESTAMP: datetime.datetime,
    FIELD_TYPE.DATETIME: datetime.datetime,
    FIELD_TYPE.TIME: datetime.timedelta,
    FIELD_TYPE.DATE: datetime.date,
}
_DEFAULTS = dict(conversions)


def column_converters(conv) -> dict:
    """The type codes whose conversion differs from staunch's own: code -> function."""
    if not conv:
        return {}
    return {
        code: fn
        for code, fn in conv.items()
        if isinstance(code, int) and callable(fn) and fn is not _DEFAULTS.get(code)
    }


def _literal_text(s: str) -> str:
    # Single quotes delimit a string under every sql_mode (ANSI_QUOTES changes
    # only double quotes). Without a backslash, doubling the quotes is exact
    # whatever NO_BACKSLASH_ESCAPES says; otherwise the hex form is.
    if "\\" in s or "\x00" in s:
        return "_utf8mb4 X'" + s.encode("utf-8").hex() + "'"
    return "'" + s.replace("'", "''") + "'"


def escape(value, mapping=None) -> str:
    """A value as an SQL literal (``Connection.escape``), exact under every
    sql_mode: Django writes migration defaults with it. Parameters never go
    this way: staunch binds them."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != float("inf") else _unrepresentable(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f") if value.is_finite() else _unrepresentable(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "X'" + bytes(value).hex() + "'"
    if isinstance(value, str):
        return _literal_text(value)
    if isinstance(value, datetime.time):
        return "'" + value.isoformat() + "'"
    if isinstance(value, (datetime.date, datetime.timedelta)):
        return "'" + _as_text(value) + "'"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "(" + ",".join(escape(v) for v in value) + ")"
    from .. import ProgrammingError

    raise ProgrammingError(0, f"cannot write a value of type {type(value).__name__} as an SQL literal")


def _unrepresentable(value):
    from .. import ProgrammingError

    raise ProgrammingError(0, f"{value} has no SQL literal")


#: Parameter encoders (``Connection.encoders``): staunch binds every
#: parameter itself, so these only serve ``escape``.
encoders: dict = {
    t: escape
    for t in (
        type(None),
        bool,
        int,
        float,
        decimal.Decimal,
        bytes,
        bytearray,
        str,
        datetime.date,
        datetime.datetime,
        datetime.time,
        datetime.timedelta,
        list,
        tuple,
        set,
        frozenset,
    )
}
