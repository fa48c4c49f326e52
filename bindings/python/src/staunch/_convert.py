"""Values both ways: Python objects to staunch_param, staunch_value rows to tuples."""

from __future__ import annotations

import ctypes
import datetime as _datetime
import os
import struct
import sys
import uuid as _uuid
from decimal import Decimal

from . import _ffi as F
from ._errors import DataError, ParameterTypeError, ProgrammingError

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


# --- parameters -------------------------------------------------------------------------


def fill_param(p: F.staunch_param, i: int, v) -> None:
    """Sets one staunch_param from a Python value (i: its 0-based position)."""
    t = type(v)
    if v is None:
        p.type = F.PARAM_NULL
    elif t is int or t is bool:
        if _INT64_MIN <= v <= _INT64_MAX:
            p.type = F.PARAM_INT64
            p.i64 = v
        elif 0 <= v <= _UINT64_MAX:
            p.type = F.PARAM_UINT64
            p.u64 = v
        else:
            raise DataError(0, f"parameter {i + 1}: {v} does not fit in 64 bits")
    elif t is str:
        b = v.encode("utf-8")
        p.type = F.PARAM_TEXT
        p.ptr = b
        p.len = len(b)
    elif t is float:
        p.type = F.PARAM_DOUBLE
        p.f64 = v
    elif t is bytes or t is bytearray or t is memoryview:
        b = bytes(v)
        p.type = F.PARAM_BYTES
        p.ptr = b
        p.len = len(b)
    elif t is Decimal:
        if not v.is_finite():
            raise DataError(0, f"parameter {i + 1}: {v} is not a finite DECIMAL")
        b = format(v, "f").encode("ascii")  # plain digits, no exponent
        p.type = F.PARAM_DECIMAL
        p.ptr = b
        p.len = len(b)
    elif isinstance(v, _datetime.datetime):
        p.type = F.PARAM_DATETIME
        d = p.datetime
        d.year, d.month, d.day = v.year, v.month, v.day
        d.hour, d.minute, d.second, d.microsecond = v.hour, v.minute, v.second, v.microsecond
    elif isinstance(v, _datetime.date):
        p.type = F.PARAM_DATE
        d = p.datetime
        d.year, d.month, d.day = v.year, v.month, v.day
    elif isinstance(v, _datetime.timedelta):
        p.type = F.PARAM_TIME
        neg = v < _datetime.timedelta(0)
        if neg:
            v = -v
        tm = p.time
        tm.negative = neg
        tm.days = v.days
        tm.hours, rem = divmod(v.seconds, 3600)
        tm.minutes, tm.seconds = divmod(rem, 60)
        tm.microseconds = v.microseconds
    elif isinstance(v, _datetime.time):
        p.type = F.PARAM_TIME
        tm = p.time
        tm.negative = False
        tm.days = 0
        tm.hours, tm.minutes, tm.seconds, tm.microseconds = v.hour, v.minute, v.second, v.microsecond
    elif t is _uuid.UUID:
        # As PyMySQL and mysqlclient: its 36-character text, which MariaDB's
        # UUID type and a CHAR(36) column both take.
        fill_param(p, i, str(v))
    elif isinstance(v, int):
        fill_param(p, i, int(v))
    elif isinstance(v, str):
        fill_param(p, i, str(v))
    elif isinstance(v, float):
        fill_param(p, i, float(v))
    elif isinstance(v, Decimal):
        fill_param(p, i, Decimal(v))
    elif isinstance(v, (bytes, bytearray)):
        fill_param(p, i, bytes(v))
    elif isinstance(v, _uuid.UUID):
        fill_param(p, i, str(v))
    else:
        raise ParameterTypeError(
            0,
            f"parameter {i + 1}: cannot bind a value of type {t.__name__} "
            "(supported: None, int, float, bool, str, bytes, Decimal, datetime, date, "
            "time, timedelta, uuid.UUID; serialize JSON with json.dumps)",
        )


# make_params packs the array's bytes with struct, not through ctypes' field
# descriptors (a proxy object per element, a descriptor call per field: about
# 1.5 us a parameter, the most of what binding cost). Each kind's struct is
# one whole staunch_param: the type tag, that kind's fields at their offsets
# ("=": native order, no padding of its own), zeros elsewhere. _fast_layout()
# checks them against the ctypes layout at import.
_PARAM = F.staunch_param
_PSIZE = ctypes.sizeof(_PARAM)
_S_NULL = struct.Struct("=I92x")
_S_I64 = struct.Struct("=I4xq80x")  # i64 at 8
_S_F64 = struct.Struct("=I20xd64x")  # f64 at 24
_S_PTR = struct.Struct("=I28xQQ48x")  # ptr at 32, len at 40
_S_DATETIME = struct.Struct("=I44xHBBBBBxI36x")  # datetime at 48
_P_NULL, _P_I64, _P_F64, _P_PTR, _P_DATETIME = (st.pack for st in (_S_NULL, _S_I64, _S_F64, _S_PTR, _S_DATETIME))
_date, _datetime_t = _datetime.date, _datetime.datetime


def _bytes_data_offset() -> int | None:
    """Where a bytes object's data starts, from its id() (CPython: ob_sval,
    at a fixed offset, and an object never moves); None elsewhere."""
    if sys.implementation.name != "cpython":
        return None
    probe = b"staunch probe"
    off = ctypes.cast(probe, ctypes.c_void_p).value - id(probe)
    other = bytes(range(40))
    if ctypes.cast(other, ctypes.c_void_p).value - id(other) != off or ctypes.string_at(id(other) + off, 40) != other:
        return None
    return off


def _fast_layout() -> bool:
    """Whether the structs above write what the ctypes fields do."""
    if _BYTES_DATA is None:
        return False
    if any(st.size != _PSIZE for st in (_S_NULL, _S_I64, _S_F64, _S_PTR, _S_DATETIME)):
        return False
    dt = _datetime_t(2026, 12, 1, 18, 7, 9, 123456)
    ptrs = [b"x" * 9, b"-12.50", "t\u00e9xt".encode()]
    cases = [None, -(2**62), 2.5, ptrs[0], Decimal("-12.50"), "t\u00e9xt", dt, dt.date()]
    slow = (_PARAM * len(cases))()
    for i, v in enumerate(cases):
        fill_param(slow[i], i, v)
    packed = [
        _P_NULL(F.PARAM_NULL),
        _P_I64(F.PARAM_INT64, cases[1]),
        _P_F64(F.PARAM_DOUBLE, cases[2]),
        *(
            _P_PTR(ty, id(b) + _BYTES_DATA, len(b))
            for ty, b in zip((F.PARAM_BYTES, F.PARAM_DECIMAL, F.PARAM_TEXT), ptrs)
        ),
        _P_DATETIME(F.PARAM_DATETIME, 2026, 12, 1, 18, 7, 9, 123456),
        _P_DATETIME(F.PARAM_DATE, 2026, 12, 1, 0, 0, 0, 0),
    ]
    fast = (_PARAM * len(cases)).from_buffer_copy(b"".join(packed))
    for i in (3, 4, 5):  # the pointers differ (copies): compare what they point to
        if ctypes.string_at(fast[i].ptr, fast[i].len) != ctypes.string_at(slow[i].ptr, slow[i].len):
            return False
        fast[i].ptr = slow[i].ptr = None
    return bytes(fast) == bytes(slow)


_ARRAYS: dict = {}  # n -> staunch_param * n


def make_params(values) -> ctypes.Array | None:
    """The staunch_param array for values; it holds what its pointers point to."""
    n = len(values)
    if n == 0:
        return None
    arr_t = _ARRAYS.get(n)
    if arr_t is None:
        arr_t = _PARAM * n
        if n <= 64:
            _ARRAYS[n] = arr_t
    if not _FAST:
        arr = arr_t()
        for i, v in enumerate(values):
            fill_param(arr[i], i, v)
        return arr
    parts = []
    keep = []
    slow = None
    data = _BYTES_DATA
    for i, v in enumerate(values):
        t = type(v)
        if t is str:
            b = v.encode("utf-8")
            keep.append(b)
            parts.append(_P_PTR(F.PARAM_TEXT, id(b) + data, len(b)))
        elif t is int and _INT64_MIN <= v <= _INT64_MAX:
            parts.append(_P_I64(F.PARAM_INT64, v))
        elif v is None:
            parts.append(_P_NULL(F.PARAM_NULL))
        elif t is bytes:
            keep.append(v)
            parts.append(_P_PTR(F.PARAM_BYTES, id(v) + data, len(v)))
        elif t is float:
            parts.append(_P_F64(F.PARAM_DOUBLE, v))
        elif t is Decimal and v.is_finite():
            b = format(v, "f").encode("ascii")  # plain digits, no exponent
            keep.append(b)
            parts.append(_P_PTR(F.PARAM_DECIMAL, id(b) + data, len(b)))
        elif t is _datetime_t:
            parts.append(
                _P_DATETIME(F.PARAM_DATETIME, v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond)
            )
        elif t is _date:
            parts.append(_P_DATETIME(F.PARAM_DATE, v.year, v.month, v.day, 0, 0, 0, 0))
        else:
            # bool, big ints, the other types and subclasses, and the
            # errors: through the fields, below.
            parts.append(_P_NULL(F.PARAM_NULL))
            slow = slow or []
            slow.append(i)
    arr = arr_t.from_buffer_copy(b"".join(parts))
    if slow:
        for i in slow:
            fill_param(arr[i], i, values[i])
    if keep:
        arr._staunch_keep = keep  # alive as long as the array
    return arr


_BYTES_DATA = _bytes_data_offset()
_FAST = _fast_layout()


# --- paramstyle: %s and %(name)s to ? ---------------------------------------------------

_translated: dict = {}


def _translate(query: str) -> tuple[str, int, tuple]:
    """(sql with ?, number of %s, names of %(name)s in order). %% becomes %."""
    out = []
    names = []
    positional = 0
    i = 0
    n = len(query)
    while True:
        j = query.find("%", i)
        if j < 0:
            out.append(query[i:])
            break
        out.append(query[i:j])
        c = query[j + 1 : j + 2]
        if c == "%":
            out.append("%")
            i = j + 2
        elif c == "s":
            out.append("?")
            positional += 1
            i = j + 2
        elif c == "(":
            k = query.find(")", j)
            if k < 0 or query[k + 1 : k + 2] != "s":
                raise ProgrammingError(0, f"malformed %(name)s placeholder at character {j} of the statement")
            names.append(query[j + 2 : k])
            out.append("?")
            i = k + 2
        else:
            what = repr(c) if j + 1 < n else "the end of the statement"
            raise ProgrammingError(
                0,
                f"unsupported format character {what} after % at character {j} "
                "(placeholders are %s and %(name)s; write a literal % as %%)",
            )
    if positional and names:
        raise ProgrammingError(0, "the statement mixes %s and %(name)s placeholders")
    return "".join(out), positional, tuple(names)


def bind(query: str, args) -> tuple[str, tuple | list]:
    """The statement with ? placeholders and the values in their order."""
    n = query.count("%")
    if n == query.count("%s"):
        # Every % starts a %s (no %%, no %(name)s): the common case, cheaper
        # than the cache (whose key would be a new text each time for a
        # statement that carries an id in a comment).
        t = query.replace("%s", "?"), n, ()
    else:
        t = _translated.get(query)
        if t is None:
            t = _translate(query)
            if len(_translated) > 2048:
                _translated.clear()
            _translated[query] = t
    sql, positional, names = t
    ta = type(args)
    if (ta is tuple or ta is list) and len(args) == positional and not names:
        return sql, args
    if isinstance(args, dict) or (hasattr(args, "keys") and hasattr(args, "__getitem__")):
        if positional:
            raise ProgrammingError(0, f"the statement has {positional} %s placeholders but a mapping was given")
        try:
            return sql, [args[k] for k in names]
        except KeyError as e:
            raise ProgrammingError(0, f"no value for placeholder %({e.args[0]})s") from None
    if names:
        raise ProgrammingError(
            0, f"the statement has %(name)s placeholders ({', '.join(names)}) but no mapping was given"
        )
    if not isinstance(args, (tuple, list)):
        args = (args,)
    if len(args) != positional:
        raise ProgrammingError(
            0,
            f"the statement has {positional} placeholder{'s' if positional != 1 else ''} "
            f"but {len(args)} parameter{'s were' if len(args) != 1 else ' was'} given",
        )
    return sql, args


def interpolate(query: str, values) -> str:
    """query (placeholders %s and %(name)s, as bind read them) with each
    placeholder replaced by its value, in bind's order, as an SQL literal,
    and %% by %: the statement mysqlclient and PyMySQL would have sent, for
    display only (Cursor._executed). staunch sends the values bound, never
    in the text; the literals are written as ``Connection.escape`` writes
    them (exact under every sql_mode)."""
    out = []
    it = iter(values)
    i = 0
    while True:
        j = query.find("%", i)
        if j < 0:
            out.append(query[i:])
            return "".join(out)
        out.append(query[i:j])
        c = query[j + 1 : j + 2]
        if c == "%":
            out.append("%")
            i = j + 2
            continue
        i = j + 2 if c == "s" else query.find(")", j) + 2
        out.append(_display_literal(next(it, None)))


def _display_literal(v) -> str:
    """A bound value as an SQL literal of what was bound (see fill_param)."""
    from .mysqldb.converters import escape  # the binding's one literal writer

    t = type(v)
    if t is _uuid.UUID or (t is not str and isinstance(v, (str, _uuid.UUID))):
        v = str(v)
    elif t is not int and t is not bool and isinstance(v, int):
        v = int(v)
    elif t is not float and isinstance(v, float):
        v = float(v)
    elif isinstance(v, (_datetime.datetime, _datetime.time)) and v.tzinfo is not None:
        v = v.replace(tzinfo=None)  # bound without its zone
    try:
        return escape(v)
    except ProgrammingError:
        return str(v)  # a NaN or an infinity: bound as a double, it has no literal


# --- results ----------------------------------------------------------------------------

_V = F.staunch_value
VSIZE = ctypes.sizeof(_V)
_O_I64 = _V.i64.offset
_O_U64 = _V.u64.offset
_O_F64 = _V.f64.offset
_O_PTR = _V.ptr.offset
_O_LEN = _V.len.offset
_O_DT = _V.datetime.offset
_O_TM = _V.time.offset
_DT = F.staunch_datetime
_TM = F.staunch_time


def _frag(fields: list) -> tuple[str, int]:
    """A struct format for one value: its tag, then (offset, code) fields; and their count."""
    fmt = "I"
    pos = 4
    for off, code in fields:
        if off > pos:
            fmt += f"{off - pos}x"
        fmt += code
        pos = off + struct.calcsize("<" + code)
    if pos < VSIZE:
        fmt += f"{VSIZE - pos}x"
    return fmt, len(fields)


_DT_FIELDS = [
    (_O_DT + _DT.year.offset, "H"),
    (_O_DT + _DT.month.offset, "B"),
    (_O_DT + _DT.day.offset, "B"),
    (_O_DT + _DT.hour.offset, "B"),
    (_O_DT + _DT.minute.offset, "B"),
    (_O_DT + _DT.second.offset, "B"),
    (_O_DT + _DT.microsecond.offset, "I"),
]
_TM_FIELDS = [
    (_O_TM + _TM.negative.offset, "?"),
    (_O_TM + _TM.days.offset, "I"),
    (_O_TM + _TM.hours.offset, "B"),
    (_O_TM + _TM.minutes.offset, "B"),
    (_O_TM + _TM.seconds.offset, "B"),
    (_O_TM + _TM.microseconds.offset, "I"),
]
_FRAGS = {
    F.COLUMN_NULL: _frag([]),
    F.COLUMN_INT: _frag([(_O_I64, "q")]),
    F.COLUMN_UINT: _frag([(_O_U64, "Q")]),
    F.COLUMN_DOUBLE: _frag([(_O_F64, "d")]),
    F.COLUMN_DECIMAL: _frag([(_O_PTR, "Q"), (_O_LEN, "Q")]),
    F.COLUMN_TEXT: _frag([(_O_PTR, "Q"), (_O_LEN, "Q")]),
    F.COLUMN_BYTES: _frag([(_O_PTR, "Q"), (_O_LEN, "Q")]),
    F.COLUMN_DATE: _frag(_DT_FIELDS[:3]),
    F.COLUMN_DATETIME: _frag(_DT_FIELDS),
    F.COLUMN_TIME: _frag(_TM_FIELDS),
}

_string_at = ctypes.string_at


def _address_space_view():
    """A read-only memoryview whose index i is the byte at address i + 1, so
    that text a staunch_value points at is sliced and decoded without a
    foreign call per value (CPython's PyMemoryView_FromMemory). None where
    that API is not available; string_at is used then."""
    try:
        fn = ctypes.pythonapi.PyMemoryView_FromMemory
    except AttributeError:  # not CPython
        return None
    fn.restype = ctypes.py_object
    fn.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int]
    return fn(1, sys.maxsize - 1, 0x100)  # PyBUF_READ


_M = _address_space_view()
_date = _datetime.date
_datetime_t = _datetime.datetime
_timedelta = _datetime.timedelta


def _td(neg, days, h, m, s, us):
    d = _timedelta(days=days, hours=h, minutes=m, seconds=s, microseconds=us)
    return -d if neg else d


def _dt(y, mo, d, h, mi, s, us):
    return _datetime_t(y, mo, d, h, mi, s, us) if mo else None


def _d(y, mo, d):
    return _date(y, mo, d) if mo else None


def value_of(v: F.staunch_value):
    """The Python value of one staunch_value (the general, slower path)."""
    t = v.type
    if t == F.COLUMN_NULL:
        return None
    if t == F.COLUMN_INT:
        return v.i64
    if t == F.COLUMN_UINT:
        return v.u64
    if t == F.COLUMN_DOUBLE:
        return v.f64
    if t in (F.COLUMN_TEXT, F.COLUMN_DECIMAL, F.COLUMN_BYTES):
        b = _string_at(v.ptr, v.len) if v.len else b""
        if t == F.COLUMN_BYTES:
            return b
        if t == F.COLUMN_DECIMAL:
            return Decimal(b.decode("ascii"))
        return b.decode("utf-8")
    if t == F.COLUMN_DATE:
        d = v.datetime
        return _d(d.year, d.month, d.day)
    if t == F.COLUMN_DATETIME:
        d = v.datetime
        return _dt(d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond)
    if t == F.COLUMN_TIME:
        tm = v.time
        return _td(tm.negative, tm.days, tm.hours, tm.minutes, tm.seconds, tm.microseconds)
    raise DataError(0, f"a value of unknown type {t} (a newer libstaunch?)")


def _slow(data, off):
    return value_of(_V.from_buffer_copy(data, off))


def _load_speedups():
    """staunch._speedups (the converter below, in C) when it was built and
    not turned off with STAUNCH_PURE_PYTHON=1; else None."""
    if os.environ.get("STAUNCH_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    _speedups.init(Decimal, _date, _datetime_t, _timedelta)
    return _speedups


_speedups = _load_speedups()
_converters: dict = {}


def row_converter(types: tuple):
    """A function (data, n_rows) -> list of row tuples for these column types.

    With staunch._speedups, the C converter, given each column's type tag.
    Else generated once per column-type signature: one struct unpack per
    row, then an inline expression per column (the value's tag checked
    against the column's type; anything else, NULL included, takes the
    general path). Both give the same values and raise the same errors.
    """
    conv = _converters.get(types)
    if conv is not None:
        return conv
    if _speedups is not None:
        conv = _native_converter(types)
    else:
        conv = _generated_converter(types)
    if len(_converters) > 512:
        _converters.clear()
    _converters[types] = conv
    return conv


def _native_converter(types: tuple):
    # A tag the C side cannot hold in a byte is NULL's: its cells take _slow.
    spec = bytes(t if 0 <= t < 256 else 0 for t in types)
    rows, addressof = _speedups.rows, ctypes.addressof

    def convert(data, n):
        return rows(data, addressof(data), n, spec, _slow)

    return convert


def _generated_converter(types: tuple):
    fmt = "<"
    exprs = []
    k = 0
    for c, ct in enumerate(types):
        frag, nf = _FRAGS.get(ct, _FRAGS[F.COLUMN_NULL])
        fmt += frag
        a = [f"t[{k + 1 + x}]" for x in range(nf)]
        slow = f"(None if t[{k}] == 0 else _slow(data, off + {c * VSIZE}))"
        tag = f"t[{k}] == {ct}"
        if ct in (F.COLUMN_INT, F.COLUMN_UINT, F.COLUMN_DOUBLE):
            e = f"({a[0]} if {tag} else {slow})"
        elif ct in (F.COLUMN_TEXT, F.COLUMN_BYTES, F.COLUMN_DECIMAL):
            if _M is not None:
                view = f"_M[{a[0]} - 1:{a[0]} + {a[1]} - 1]"
                text = f"_str({view}, 'utf-8')"
                raw = f"bytes({view})"
            else:
                text = f"_s({a[0]}, {a[1]}).decode()"
                raw = f"_s({a[0]}, {a[1]})"
            if ct == F.COLUMN_TEXT:
                e = f"(({text} if {a[1]} else '') if {tag} else {slow})"
            elif ct == F.COLUMN_BYTES:
                e = f"(({raw} if {a[1]} else b'') if {tag} else {slow})"
            else:
                e = f"(_D({text}) if {tag} else {slow})"
        elif ct == F.COLUMN_DATE:
            e = f"(_d({', '.join(a)}) if {tag} else {slow})"
        elif ct == F.COLUMN_DATETIME:
            e = f"(_dt({', '.join(a)}) if {tag} else {slow})"
        elif ct == F.COLUMN_TIME:
            e = f"(_td({', '.join(a)}) if {tag} else {slow})"
        else:
            e = slow
        exprs.append(e)
        k += 1 + nf
    st = struct.Struct(fmt)
    assert st.size == VSIZE * len(types), (st.size, fmt)
    body = ", ".join(exprs) + ("," if len(exprs) == 1 else "")
    src = (
        "def convert(data, n):\n"
        "    out = []\n"
        "    append = out.append\n"
        f"    for off in range(0, n * {st.size}, {st.size}):\n"
        "        t = unpack_from(data, off)\n"
        f"        append(({body}))\n"
        "    return out\n"
    )
    ns = {
        "unpack_from": st.unpack_from,
        "_s": _string_at,
        "_M": _M,
        "_str": str,
        "_D": Decimal,
        "_d": _d,
        "_dt": _dt,
        "_td": _td,
        "_slow": _slow,
    }
    exec(compile(src, f"<staunch row converter {types}>", "exec"), ns)  # noqa: S102
    return ns["convert"]
