"""The row converter in C (staunch._speedups) gives what the generated one
in Python gives, value for value and error for error, on cells written as
the library writes them: every fast path, NULL, zero dates, negative and
day-long times, a cell whose tag is not its column's (the general path),
text that is not UTF-8, and a column type the converters do not know."""

from __future__ import annotations

import datetime as dt
import gc
import os
from decimal import Decimal

import pytest

from staunch import _convert as C
from staunch import _ffi as F

needs_c = pytest.mark.skipif(
    C._speedups is None and os.environ.get("STAUNCH_EXPECT_SPEEDUPS") != "1",
    reason="staunch._speedups is not built here",
)


def cells(rows: list[list[tuple]]):
    """A staunch_value array of rows of (tag, payload) cells, and what keeps
    their bytes alive."""
    flat = [c for r in rows for c in r]
    buf = (F.staunch_value * len(flat))()
    keep = []
    for v, (tag, x) in zip(buf, flat):
        v.type = tag
        if tag == F.COLUMN_INT:
            v.i64 = x
        elif tag == F.COLUMN_UINT:
            v.u64 = x
        elif tag == F.COLUMN_DOUBLE:
            v.f64 = x
        elif tag in (F.COLUMN_TEXT, F.COLUMN_BYTES, F.COLUMN_DECIMAL):
            b = x if isinstance(x, bytes) else x.encode()
            s = F.ctypes.create_string_buffer(b, len(b) or 1)
            keep.append(s)
            v.ptr = F.ctypes.addressof(s)
            v.len = len(b)
        elif tag in (F.COLUMN_DATE, F.COLUMN_DATETIME):
            d = v.datetime
            d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond = (list(x) + [0] * 7)[:7]
        elif tag == F.COLUMN_TIME:
            t = v.time
            t.negative, t.days, t.hours, t.minutes, t.seconds, t.microseconds = x
    return buf, keep


def both(types, rows):
    buf, _keep = cells(rows)
    want = C._generated_converter(types)(buf, len(rows))
    got = C._native_converter(types)(buf, len(rows))
    return want, got


TYPES = (
    F.COLUMN_INT,
    F.COLUMN_UINT,
    F.COLUMN_DOUBLE,
    F.COLUMN_DECIMAL,
    F.COLUMN_TEXT,
    F.COLUMN_BYTES,
    F.COLUMN_DATE,
    F.COLUMN_DATETIME,
    F.COLUMN_TIME,
)


@needs_c
def test_the_c_converter_gives_what_the_python_one_gives():
    rows = [
        [
            (F.COLUMN_INT, -(2**63)),
            (F.COLUMN_UINT, 2**64 - 1),
            (F.COLUMN_DOUBLE, -0.1),
            (F.COLUMN_DECIMAL, "-12345678901234567890.123456789"),
            (F.COLUMN_TEXT, "héllo ✓ 𝄞"),
            (F.COLUMN_BYTES, b"a\x00b\xff"),
            (F.COLUMN_DATE, (1999, 12, 31)),
            (F.COLUMN_DATETIME, (2024, 2, 29, 23, 59, 58, 123456)),
            (F.COLUMN_TIME, (True, 34, 22, 59, 59, 999999)),
        ],
        [  # NULL everywhere
            (F.COLUMN_NULL, None),
        ]
        * 9,
        [  # empty text and bytes, zero dates, a time of a day and more
            (F.COLUMN_INT, 0),
            (F.COLUMN_UINT, 0),
            (F.COLUMN_DOUBLE, 1.5e300),
            (F.COLUMN_DECIMAL, "0.00"),
            (F.COLUMN_TEXT, ""),
            (F.COLUMN_BYTES, b""),
            (F.COLUMN_DATE, (0, 0, 0)),
            (F.COLUMN_DATETIME, (0, 0, 0, 0, 0, 0, 0)),
            (F.COLUMN_TIME, (False, 1, 2, 3, 4, 500000)),
        ],
        [  # each cell tagged otherwise than its column: the general path
            (F.COLUMN_TEXT, "7"),
            (F.COLUMN_INT, -5),
            (F.COLUMN_DECIMAL, "2.50"),
            (F.COLUMN_DOUBLE, 0.25),
            (F.COLUMN_BYTES, b"\x01"),
            (F.COLUMN_TEXT, "x"),
            (F.COLUMN_DATETIME, (2020, 1, 2, 3, 4, 5, 6)),
            (F.COLUMN_DATE, (2020, 1, 2)),
            (F.COLUMN_UINT, 9),
        ],
    ]
    want, got = both(TYPES, rows)
    assert got == want
    assert [[type(x) for x in r] for r in got] == [[type(x) for x in r] for r in want]
    assert got[0] == (
        -(2**63),
        2**64 - 1,
        -0.1,
        Decimal("-12345678901234567890.123456789"),
        "héllo ✓ 𝄞",
        b"a\x00b\xff",
        dt.date(1999, 12, 31),
        dt.datetime(2024, 2, 29, 23, 59, 58, 123456),
        -dt.timedelta(days=34, hours=22, minutes=59, seconds=59, microseconds=999999),
    )
    assert got[2][6:] == (None, None, dt.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=500000))


@needs_c
def test_the_c_converter_fails_as_the_python_one_fails():
    bad = [[(F.COLUMN_TEXT, b"\xff\xfe")]]
    for convert in (C._generated_converter, C._native_converter):
        buf, _keep = cells(bad)
        with pytest.raises(UnicodeDecodeError):
            convert((F.COLUMN_TEXT,))(buf, 1)
    out_of_range = [[(F.COLUMN_DATE, (2024, 2, 30))]]
    for convert in (C._generated_converter, C._native_converter):
        buf, _keep = cells(out_of_range)
        with pytest.raises(ValueError):
            convert((F.COLUMN_DATE,))(buf, 1)
    # A column type neither knows (a newer library's): its cells take the
    # general path, which names the tag it does not know.
    unknown = [[(F.COLUMN_INT, 3)]]
    for convert in (C._generated_converter, C._native_converter):
        buf, _keep = cells(unknown)
        assert convert((4242,))(buf, 1) == [(3,)]


@needs_c
def test_rows_of_plain_values_are_left_to_no_collector():
    """Rows holding only values that hold no references are not tracked by
    the cycle collector (which would otherwise walk every row read so far,
    again and again, during a large fetch); the values themselves are
    intact after a full collection."""
    rows = [[(F.COLUMN_INT, i), (F.COLUMN_TEXT, f"row {i}")] for i in range(1000)]
    buf, _keep = cells(rows)
    got = C._native_converter((F.COLUMN_INT, F.COLUMN_TEXT))(buf, len(rows))
    assert not any(gc.is_tracked(r) for r in got)
    gc.collect()
    assert got[999] == (999, "row 999")


def test_the_installed_package_has_its_c_converter():
    """CI builds the package where a C compiler is: the converter must be
    there (setuptools skips an optional extension that fails to build)."""
    if os.environ.get("STAUNCH_EXPECT_SPEEDUPS") != "1":
        pytest.skip("STAUNCH_EXPECT_SPEEDUPS=1 not set")
    assert C._speedups is not None
    assert C.row_converter((F.COLUMN_INT,)).__code__ is C._native_converter((F.COLUMN_INT,)).__code__
