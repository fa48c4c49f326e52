"""Pool.resize, suspend and resume against a real server: the size changes
while the pool runs, and nothing borrowed or waiting is lost."""

from __future__ import annotations

import threading
import time

import pytest

import staunch


def _eventually(what, cond, timeout=5.0):
    until = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < until, f"timed out waiting for {what}"
        time.sleep(0.005)


def _select(conn, n: int) -> int:
    cur = conn.cursor()
    cur.execute(f"SELECT {n}")
    return cur.fetchone()[0]


def test_bad_sizes_name_the_knob(pool_factory):
    pool = pool_factory("max_size=4&max_size_cap=8")
    with pytest.raises(staunch.ConfigError, match=r"max_size must be between 1 and max_size_cap \(8\), got 9"):
        pool.resize(max_size=9)
    with pytest.raises(staunch.ConfigError, match=r"min_idle \(5\) must not exceed max_size \(4\)"):
        pool.resize(min_idle=5)
    with pytest.raises(staunch.ConfigError, match="max_size must be a non-negative int"):
        pool.resize(max_size=-1)
    assert pool.stats().max_size == 4
    # Both at once, in whichever order the limits allow.
    pool.resize(max_size=6, min_idle=5)
    pool.resize(max_size=2, min_idle=1)
    assert pool.stats().max_size == 2


def test_shrink_while_borrowed_then_grow_while_waiting(pool_factory):
    pool = pool_factory("max_size=4", autocommit=True)
    held = [pool.connection() for _ in range(4)]
    pool.resize(max_size=2)
    assert [_select(c, i) for i, c in enumerate(held)] == [0, 1, 2, 3]
    for c in held:
        c.close()
    s = pool.stats()
    assert (s.total, s.closed_evicted, s.max_size) == (2, 2, 2)

    pool.resize(max_size=1)
    _eventually("the idle surplus closes", lambda: pool.stats().total == 1)
    blocker = pool.connection()
    got = []

    def wait():
        with pool.connection(timeout=10) as c:
            got.append(_select(c, 7))

    threads = [threading.Thread(target=wait) for _ in range(2)]
    for t in threads:
        t.start()
    _eventually("two callers wait", lambda: pool.stats().waiting == 2)
    pool.resize(max_size=3)
    for t in threads:
        t.join(10)
    assert got == [7, 7]
    # Served while the blocker is held: the pool grew (to 2 or 3: a caller
    # done at once may hand its connection to the other first).
    assert 2 <= pool.stats().total <= 3
    blocker.close()


def test_suspend_holds_a_borrow_until_resume(pool_factory):
    pool = pool_factory("max_size=2", autocommit=True)
    with pool.connection() as c:
        _select(c, 1)
    pool.suspend()
    t0 = time.monotonic()
    with pytest.raises(staunch.PoolExhausted):
        pool.connection(timeout=0.1)
    assert time.monotonic() - t0 < 2
    assert pool.try_connection() is None
    got = []

    def borrow():
        with pool.connection(timeout=10) as c:
            got.append(_select(c, 5))

    t = threading.Thread(target=borrow)
    t.start()
    time.sleep(0.1)
    assert got == []
    pool.resume()
    t.join(10)
    assert got == [5]
