"""Fixtures: throwaway MariaDB servers from `staunch-testkit` (its JSON protocol)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def testkit_path() -> str:
    p = os.environ.get("STAUNCH_TESTKIT")
    if p:
        return p
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "debug" / "staunch-testkit")


class Testkit:
    """One `staunch-testkit` process: its ready line, and commands on stdin."""

    def __init__(self, *args: str):
        exe = testkit_path()
        if not os.path.isfile(exe):
            raise RuntimeError(f"{exe} not found: run `cargo build -p staunch-testkit` (or set STAUNCH_TESTKIT)")
        self.proc = subprocess.Popen(
            [exe, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._lock = threading.Lock()
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(10)
            raise RuntimeError(f"staunch-testkit {' '.join(args)} exited ({self.proc.returncode}) before ready")
        self.ready = json.loads(line)
        if not self.ready.get("ready"):
            self.close()
            raise RuntimeError(f"staunch-testkit did not start: {self.ready.get('error')}")
        self.url = self.ready["url"]
        # `mysql8` (the second server implementation) has no `servers`.
        self.server = self.ready["servers"][0] if "servers" in self.ready else None
        self.direct_url = self.server["url"] if self.server else self.url

    def cmd(self, line: str) -> dict:
        with self._lock:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"staunch-testkit died during {line!r}")
        a = json.loads(answer)
        if not a.get("ok"):
            raise RuntimeError(f"testkit {line!r}: {a.get('error')}")
        return a

    def query(self, sql: str, n: int = 0) -> list:
        return self.cmd(f"query {n} {sql}")["rows"]

    def sql(self, sql: str, n: int = 0) -> None:
        self.cmd(f"sql {n} {sql}")

    def url_with(self, query: str, proxy: bool = True) -> str:
        base = self.url if proxy else self.direct_url
        return base + ("&" if "?" in base else "?") + query

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()  # EOF: the testkit stops and cleans up
            except OSError:
                pass
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                self.proc.wait(10)


@pytest.fixture(scope="session")
def server():
    """One server with a chaos proxy in front of it, for the whole session.
    Tests that change the proxy's mode put it back to pass."""
    tk = Testkit("server", "--proxy")
    try:
        yield tk
    finally:
        tk.close()


@pytest.fixture
def own_server():
    """A server of the test's own (no proxy), stopped after the test."""
    tk = Testkit("server")
    try:
        yield tk
    finally:
        tk.close()


@pytest.fixture(scope="module")
def ps_server():
    """A server with performance_schema on (the test kit's --performance-schema;
    MariaDB's default is OFF), for the module that asks for it."""
    tk = Testkit("server", "--performance-schema")
    try:
        yield tk
    finally:
        tk.close()


@pytest.fixture
def proxy_pass(server):
    yield server
    server.cmd("mode pass")
    server.cmd(f"target 127.0.0.1:{server.server['port']}")


@pytest.fixture
def url(server):
    """The direct URL of the session's server."""
    return server.direct_url


@pytest.fixture
def pool_factory(url):
    import staunch

    made = []

    def make(query: str = "", base: str | None = None, **knobs):
        u = base or url
        if query:
            u += ("&" if "?" in u else "?") + query
        p = staunch.Pool(u, **knobs)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


def url_as(url: str, user: dict) -> str:
    """`url` (mysql://user:password@hosts/...) with the ready line's user
    (`{"user": ..., "password": ...}`) in place of its own."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{user['user']}:{user['password']}@{rest.split('@', 1)[1]}"


@pytest.fixture
def topology1():
    """A primary (server 0) and one replica (server 1) of the test's own
    (`staunch-testkit topology --replicas 1`, a few seconds)."""
    tk = Testkit("topology", "--replicas", "1")
    try:
        yield tk
    finally:
        tk.close()


@pytest.fixture(scope="module")
def galera():
    """A 3-node Galera cluster (`staunch-testkit galera`, 10-60 s to start),
    shared by the module's tests (a test that kills a node leaves it to the
    others: each finds the writer through the pool)."""
    tk = Testkit("galera")
    try:
        yield tk
    finally:
        tk.close()


@pytest.fixture(params=["c", "python"])
def row_converter(request, monkeypatch):
    """Runs a test with each row converter: staunch._speedups (C), and the
    one generated in Python that runs where it is not built."""
    from staunch import _convert

    if request.param == "c" and _convert._speedups is None:
        if os.environ.get("STAUNCH_EXPECT_SPEEDUPS") == "1":
            pytest.fail("staunch._speedups was not built")
        pytest.skip("staunch._speedups is not built here")
    if request.param == "python":
        monkeypatch.setattr(_convert, "_speedups", None)
    monkeypatch.setattr(_convert, "_converters", {})
    return request.param
