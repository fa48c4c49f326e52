"""conf_secret_never_printed: no password in any error, event or repr."""

from __future__ import annotations

import socket
import threading

import pytest

import staunch

HALVES = ("Qv3lft", "Zr8rgt")


def _encode(s: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else f"%{ord(c):02X}" for c in s)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _matrix(form: str, port: int):
    q = "connect_timeout=200ms&connection_timeout=300ms"
    a = f"app:{form}@127.0.0.1"
    return [
        ("none", f"mysql://{a}:{port}/db?{q}"),
        ("scheme", f"mysq://{a}:{port}/db?{q}"),
        ("scheme", f"{a}:{port}/db?{q}"),
        ("host", f"mysql://app:{form}@[127.0.0.1:{port}/db?{q}"),
        ("port", f"mysql://{a}:99999/db?{q}"),
        ("path", f"mysql://{a}:{port}/d%zz?{q}"),
        ("query knob", f"mysql://{a}:{port}/db?{q}&max_size=x"),
        ("unknown knob", f"mysql://{a}:{port}/db?{q}&bogus=1"),
    ]


def _texts(e: BaseException) -> list[str]:
    out = [str(e), repr(e)]
    for a in getattr(e, "args", ()):
        out.append(repr(a))
    if e.__cause__ is not None:
        out += _texts(e.__cause__)
    return out


@pytest.mark.parametrize("char", ["/", "?", "#", "@", ":", "%", "+", " "])
def test_conf_secret_never_printed(char):
    """Passwords holding each of / ? # @ : % + and a space, raw and
    percent-encoded, in URLs well-formed and broken in each part: every
    error, event, pool and connection repr is searched for either half of
    the password."""
    port = _free_port()  # nothing listens there: connects are refused at once
    pw = HALVES[0] + char + HALVES[1]
    seen: list[str] = []
    lock = threading.Lock()

    def on_event(ev):
        with lock:
            seen.extend([repr(ev), str(ev), str(ev.message)])

    for written, form in (("raw", pw), ("encoded", _encode(pw))):
        for part, url in _matrix(form, port):
            what = f"{char!r} {written} broken={part}"
            try:
                pool = staunch.Pool(url, on_event=on_event, monitor_password=form)
            except staunch.Error as e:
                assert part != "none" or (char == "%" and written == "raw"), f"{what}: {e}"
                assert isinstance(e, staunch.ConfigError), f"{what}: {e!r}"
                seen += _texts(e)
                continue
            assert part == "none", f"{what}: {url} must not open"
            seen += [repr(pool), str(pool), repr(pool.stats())]
            with pytest.raises(staunch.Error) as ei:
                pool.connection()
            seen += _texts(ei.value)
            pool.close()
            try:
                staunch.connect(url)
            except staunch.Error as e:
                seen += _texts(e)
    assert seen
    for text in seen:
        for h in HALVES:
            assert h not in text, f"the password shows: {text}"
