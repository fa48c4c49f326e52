"""The ctypes declarations against include/staunch_cdef.h and the loaded library."""

from __future__ import annotations

import copy
import ctypes
import pickle
import re
import struct
import time

import pytest

import staunch
from staunch import _ffi as F

from .conftest import REPO

CDEF = (REPO / "include" / "staunch_cdef.h").read_text()

SCALARS = {
    "uint8_t": ctypes.c_uint8,
    "uint16_t": ctypes.c_uint16,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "int64_t": ctypes.c_int64,
    "int32_t": ctypes.c_int32,
    "int": ctypes.c_int,
    "size_t": ctypes.c_size_t,
    "double": ctypes.c_double,
    "bool": ctypes.c_bool,
}
TYPEDEFS = {alias: base for base, alias in re.findall(r"typedef (\w+) (\w+);", CDEF)}


def resolve(ctype: str):
    """A C type of the header as (kind, detail): scalar ctypes type, pointer, or struct."""
    ctype = ctype.replace("const ", "").replace("struct ", "").strip()
    if ctype.endswith("*"):
        return ("ptr", ctype[:-1].strip())
    ctype = TYPEDEFS.get(ctype, ctype)
    if ctype in SCALARS:
        return ("scalar", SCALARS[ctype])
    if ctype in F.STRUCTS:
        return ("struct", F.STRUCTS[ctype])
    if ctype == "void":
        return ("void", None)
    if ctype in ("staunch_event_callback", "staunch_trace_callback", "staunch_finalizer"):
        return ("fnptr", ctype)
    raise AssertionError(f"unknown C type {ctype}")


def matches(ctype: str, pytype) -> bool:
    kind, detail = resolve(ctype)
    if kind == "scalar":
        return pytype is detail
    if kind == "void":
        return pytype is None
    if kind == "struct":
        return pytype is detail
    if kind == "fnptr":
        return pytype in (F.EVENT_CALLBACK, F.TRACE_CALLBACK, F.FINALIZER)
    # pointers: char* as c_char_p or POINTER(c_char) (text with a length, sliced),
    # void* as c_void_p / c_char_p, T* as POINTER(T)
    if detail == "char" and pytype is ctypes.POINTER(ctypes.c_char):
        return True
    if detail in ("char", "void", "uint8_t"):
        return pytype in (ctypes.c_void_p, ctypes.c_char_p)
    inner = detail
    if not (isinstance(pytype, type) and issubclass(pytype, ctypes._Pointer)):
        return False
    if inner.endswith("*"):
        return matches(inner, pytype._type_)
    inner = inner.replace("const ", "").replace("struct ", "").strip()
    if inner in SCALARS or inner in F.STRUCTS or inner in TYPEDEFS:
        return pytype._type_ is resolve(inner)[1]
    return pytype._type_.__name__ == inner  # an opaque handle


def c_structs() -> dict:
    out = {}
    for name, body in re.findall(r"typedef struct (\w+) \{(.*?)\} \1;", CDEF, re.S):
        fields = []
        for line in body.strip().splitlines():
            m = re.fullmatch(r"\s*(.+?)\s*(\w+)(\[\d+\])?;\s*", line)
            assert m, line
            fields.append((m.group(2), m.group(1), m.group(3)))
        out[name] = fields
    return out


def c_functions() -> dict:
    out = {}
    text = "\n".join(line for line in CDEF.splitlines() if not line.startswith(("#", "/*")))
    text = re.sub(r"typedef struct \w+ \{.*?\} \w+;", "", text, flags=re.S)
    for decl in re.sub(r"\s+", " ", text).split(";"):
        m = re.fullmatch(r"\s*([\w *]+?) ?\b(staunch_\w+)\(([^()]*)\)\s*", decl)
        if not m or decl.strip().startswith("typedef"):
            continue
        ret, name, args = m.groups()
        params = [] if args.strip() == "void" else [a.strip() for a in args.split(",")]
        types = [re.sub(r"\s*\b\w+$", "", p) if not p.endswith("*") else p for p in params]
        out[name] = (ret.strip(), types)
    return out


def test_abi_structs_match_the_header_and_the_library():
    lib = staunch._lib
    structs = c_structs()
    for name, cls in F.STRUCTS.items():
        assert name in structs, f"{name} is not in the header"
        c_fields = structs[name]
        # staunch_stats declares several fields on one line in the header's comments;
        # cbindgen gives one per line, in order.
        py_fields = cls._fields_
        assert [f for f, _, _ in c_fields] == [f for f, _ in py_fields], name
        for (fname, ctype, array), (_, pytype) in zip(c_fields, py_fields):
            if array:
                n = int(array[1:-1])
                assert issubclass(pytype, ctypes.Array) and pytype._length_ == n, (name, fname)
                assert matches(ctype, pytype._type_), (name, fname)
            else:
                assert matches(ctype, pytype), (name, fname, ctype, pytype)
            off = lib.staunch_field_offset(name.encode(), fname.encode())
            assert off == getattr(cls, fname).offset, (name, fname)
        assert lib.staunch_struct_size(name.encode()) == ctypes.sizeof(cls), name
    assert ctypes.sizeof(F.staunch_param) == ctypes.sizeof(F.staunch_value) == 96


def test_abi_functions_match_the_header():
    funcs = c_functions()
    for name, (restype, argtypes) in F.SIGNATURES.items():
        assert name in funcs, f"{name} is not in the header"
        c_ret, c_args = funcs[name]
        assert matches(c_ret, restype), (name, c_ret, restype)
        assert len(c_args) == len(argtypes), (name, c_args)
        for i, (ct, pt) in enumerate(zip(c_args, argtypes)):
            assert matches(ct, pt), (name, i, ct, pt)
        fn = getattr(staunch._lib, name)
        assert fn.restype is restype and list(fn.argtypes) == list(argtypes)


def test_abi_constants_match_the_header():
    defines = dict(re.findall(r"#define STAUNCH_(\w+) (\d+)", CDEF))
    checked = 0
    for cname, value in defines.items():
        if hasattr(F, cname):
            assert getattr(F, cname) == int(value), cname
            checked += 1
        elif cname.startswith("EVENT_"):
            assert F.EVENT_NAMES[int(value)] == cname[len("EVENT_") :].lower()
            checked += 1
    assert checked > 60
    assert int(defines["VERSION_MAJOR"]) == F.ABI_MAJOR


def test_abi_version_check(tmp_path, monkeypatch):
    lib = staunch._lib
    assert lib.staunch_version() // 10000 == 1
    assert staunch.__version__.startswith("1.")
    # A file that is not a shared library: a clear error, not a crash.
    bogus = tmp_path / "libstaunch.so"
    bogus.write_bytes(b"not an ELF file")
    with pytest.raises(staunch.LibraryError, match="cannot load"):
        F.load(str(bogus))
    monkeypatch.setenv("STAUNCH_LIBRARY", str(tmp_path / "missing.so"))
    with pytest.raises(staunch.LibraryError, match="STAUNCH_LIBRARY"):
        F.load()
    # A library with another major version: libc has no staunch_version at all.
    with pytest.raises(staunch.LibraryError, match="not libstaunch"):
        F.load("libc.so.6")


def _param_fields(arr) -> list:
    """Each staunch_param's bytes, with what its pointer points to in place
    of the pointer (two arrays of the same values hold different copies)."""
    out = []
    for p in arr:
        raw = bytearray(bytes(p))
        target = None
        if p.type in (F.PARAM_TEXT, F.PARAM_BYTES, F.PARAM_DECIMAL):
            at = F.staunch_param.ptr.offset
            (addr,) = struct.unpack_from("=Q", raw, at)  # (p.ptr would be a copy up to a NUL)
            target = ctypes.string_at(addr, p.len) if p.len else b""
            raw[at : at + 8] = bytes(8)
        out.append((bytes(raw), target))
    return out


class _Int(int):
    pass


class _Str(str):
    pass


def test_params_packed_as_the_ctypes_fields_set_them():
    """make_params packs the common types with struct (the fast path); every
    element must be what fill_param sets through the ctypes fields."""
    import datetime as dt
    import gc
    import uuid
    from decimal import Decimal

    from staunch import _convert as C

    assert C._FAST, "the packed path is off on this CPython: the layout check failed"
    values = [
        None,
        0,
        -(2**63),
        2**63 - 1,
        2**64 - 1,  # above int64: through the fields
        True,
        -0.0,
        1.5e300,
        "",
        "héllo ✓ 𝄞 ' \\",
        b"",
        b"a\x00b\xff" * 300,
        bytearray(b"ba"),
        Decimal("-12345678901234567890.123456789"),
        Decimal("1E+3"),
        dt.date(1999, 12, 31),
        dt.datetime(2024, 2, 29, 23, 59, 58, 123456),
        dt.datetime(1, 1, 1),
        dt.timedelta(hours=-838, minutes=-59, seconds=-59),
        dt.time(1, 2, 3, 4),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        _Int(7),
        _Str("sub"),
    ]
    slow = (F.staunch_param * len(values))()
    for i, v in enumerate(values):
        C.fill_param(slow[i], i, v)
    fast = C.make_params(values)
    gc.collect()  # what the pointers point to is held by the array
    assert _param_fields(fast) == _param_fields(slow)
    with pytest.raises(staunch.DataError, match="parameter 3: .* does not fit in 64 bits"):
        C.make_params([1, "a", 2**64])
    with pytest.raises(staunch.DataError, match="parameter 1: NaN is not a finite DECIMAL"):
        C.make_params([Decimal("NaN")])
    with pytest.raises(staunch.ParameterTypeError, match="parameter 2: cannot bind a value of type object"):
        C.make_params(["a", object()])


def test_fast_calls_answer_as_the_raw_ones_and_refuse_what_is_not_a_word():
    """lib.fast calls the hot path's functions through staunch._speedups.fn
    where it was built (lib.raw's own functions otherwise): the same result
    for the same arguments, and, for an argument that is not an int, bytes or
    None, or a wrong count, a TypeError naming the function, raised before
    anything is called."""
    lib = staunch._core.lib
    from staunch import _convert

    for name in F.FAST:
        fast = getattr(lib.fast, name)
        if _convert._speedups is not None:
            assert type(fast).__name__ == "Fn", name
        else:
            assert fast is getattr(lib.raw, name)
    for name, args in [
        ("staunch_rows_affected_rows", (0,)),
        ("staunch_rows_last_insert_id", (0,)),
        ("staunch_rows_column_types", (0, 0, 0)),
        ("staunch_pending_get_remaining_ms", (0,)),
    ]:
        assert getattr(lib.fast, name)(*args) == getattr(lib.raw, name)(*args), name
    # A status and its error, through an error cell given by address.
    for fn in (lib.fast.staunch_conn_last_result, lib.raw.staunch_conn_last_result):
        err = ctypes.c_void_p()
        assert fn(0, None, ctypes.addressof(err)) == F.NULL_ARGUMENT
        e = ctypes.cast(err, staunch._core._ERR)
        assert lib.staunch_error_message(e) == b"conn must not be NULL"
        lib.staunch_error_free(e)
    if _convert._speedups is None:
        return
    not_a_word = r"staunch_rows_affected_rows: argument 1 must be an int, bytes or None, not .*float"
    with pytest.raises(TypeError, match=not_a_word):
        lib.fast.staunch_rows_affected_rows(1.5)
    with pytest.raises(TypeError, match=r"staunch_rows_column_types takes 3 positional arguments \(1 given\)"):
        lib.fast.staunch_rows_column_types(0)
    with pytest.raises(TypeError, match="staunch_conn_last_result: argument 2"):
        lib.fast.staunch_conn_last_result(0, ctypes.c_int(1), None)


def test_the_trace_callback_is_the_c_one_where_speedups_were_built():
    """Where staunch._speedups was built, the library calls its trace
    callback (which makes the event in C), and staunch.TraceEvent is its
    type; ctypes' callback and the Python class otherwise. The tracer tests
    (test_otel.py, test_pool.py) run through whichever this is."""
    from staunch import _convert

    if _convert._speedups is None:
        assert staunch.TraceEvent.__module__ == "staunch._core"
        pytest.skip("staunch._speedups is not built here: the ctypes callback is the only one")
    assert staunch.TraceEvent is _convert._speedups.TraceEvent
    address = ctypes.cast(staunch._core._C_ON_TRACE, ctypes.c_void_p).value
    core = staunch._core
    # Set again to the same sink: the callback's address, unchanged.
    assert _convert._speedups.set_trace_sink(core._tracers, core._TRACE_KINDS, core._trace_failed) == address
    with pytest.raises(TypeError, match="callable"):
        _convert._speedups.set_trace_sink(core._tracers, core._TRACE_KINDS, None)
    with pytest.raises(TypeError, match="dict"):
        _convert._speedups.set_trace_sink([], core._TRACE_KINDS, core._trace_failed)


def test_a_trace_event_is_made_and_read_as_documented():
    """staunch.TraceEvent, the C type or the Python class: the same
    constructor (time_ns defaults to now), attributes and repr."""
    before = time.time_ns()
    ev = staunch.TraceEvent("statement_end", "p", 3, "h:1", 7, "SELECT 1", 120, None, 0)
    assert before <= ev.time_ns <= time.time_ns()
    assert (ev.kind, ev.pool, ev.pool_id, ev.server, ev.connection_id) == ("statement_end", "p", 3, "h:1", 7)
    assert (ev.statement, ev.duration_us, ev.error, ev.error_code) == ("SELECT 1", 120, None, 0)
    assert repr(ev) == "TraceEvent('statement_end', pool='p', connection_id=7)"
    kw = staunch.TraceEvent(
        kind="acquire_end",
        pool="p",
        pool_id=1,
        server="",
        connection_id=0,
        statement=None,
        duration_us=5,
        error="timed out",
        error_code=0,
        time_ns=42,
    )
    assert (kw.kind, kw.error, kw.time_ns) == ("acquire_end", "timed out", 42)
    kw.statement = "changed"  # writable, as a slotted class's attributes are
    assert kw.statement == "changed"
    with pytest.raises(TypeError):
        staunch.TraceEvent("acquire_start", "p")
    with pytest.raises(AttributeError):
        kw.other = 1
    # Copied and pickled whole, as a slotted class's instances are.
    for again in (copy.copy(ev), pickle.loads(pickle.dumps(ev))):
        assert type(again) is staunch.TraceEvent
        fields = ("kind", "pool", "pool_id", "server", "connection_id", "statement", "duration_us", "error")
        assert [getattr(again, f) for f in fields + ("error_code", "time_ns")] == [
            getattr(ev, f) for f in fields + ("error_code", "time_ns")
        ]

    class Mine(staunch.TraceEvent):
        pass

    assert Mine("acquire_start", "p", 1, "", 0, None, 0, None, 0, 5).time_ns == 5
