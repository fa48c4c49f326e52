"""staunch vs PyMySQL and mysqlclient under SQLAlchemy's QueuePool, side by
side in one run against one throwaway MariaDB server from the test kit.

  checkout + SELECT 1 per iteration, at 1 and 8 threads, and at 1 thread
  "mixed": the contenders taking turns in blocks of 50 on one thread
  fetching 10,000 rows of 5 mixed columns (INT, VARCHAR, DOUBLE, DECIMAL, DATETIME)

and the two ways to send a statement with parameters (issue #20), on one
connection held for the run (so the pool's checkout is not in the figures),
one thread:

  insert5       a one-shot INSERT of 5 parameters (int, Decimal, str with a
                quote, datetime with microseconds, bytes with a quote, a
                backslash and a NUL), a new cursor and cursor.execute each;
                the text differs every time (a comment with a counter), as a
                statement run once does, so the server-side prepared way
                prepares, executes and closes (the library caches 32 statements
                per connection and closes the oldest); a COMMIT every 100
  select_by_id  the same SELECT id, name, score, price, at FROM bench_rows
                WHERE id = %s, repeated on one cursor (prepared once, cached),
                a different id each time, fetchall of its one row

for "staunch" (its DB-API default: interpolate_params=true, the library writes
the escaped values into the text, one round trip), "staunch server-prepared"
(interpolate_params=false: the binary protocol's prepare + execute), PyMySQL
and mysqlclient (each at its default: client-side interpolation). #20's
target: interpolation not slower than the usual driver's default (>= 1.0x).

staunch's `with pool.connection()` commits on exit only when the core says a
transaction is open (not after SELECT 1: the server's status flags say none
is), QueuePool's reset-on-return always rolls back: one round trip where the
peers make two (issue 45). Reports operations per
second and staunch's ratio to each peer, against the targets of issue #24
(>= 1.5x PyMySQL + QueuePool, >= 1.0x mysqlclient + QueuePool, every point).

--baseline DIR adds a contender "staunch (baseline)": the package source in DIR
(another revision's bindings/python/src/staunch, over the same libstaunch.so),
so a change to the Python layer is measured before and after in one run.

--where prints where the time of one checkout + SELECT 1 + return goes, per
phase (borrow, statement + fetch, end: commit or rollback + return), in CPU
time of the benchmark thread and in wall time, medians over alternating
rounds, for every contender and for "staunch C calls": the same C functions
called straight through ctypes, the floor under the Python layer.

--instructions counts instead of timing: the user-space instructions the
client process executes per operation (valgrind --tool=callgrind, the
difference between a run of 1,300 operations and one of 300, so start-up and
connecting cancel out), for checkout + SELECT 1 + return, insert5 and
select_by_id, every contender. Neither the machine's load nor the server
moves these figures; they leave out the kernel's time (the same system calls
for everyone: one send and one receive per statement) and the waits.

--hooks adds two contenders, the "staunch" pool with a prometheus_client
collector registered (scraped once: the library's timings on) and a tracer:
"staunch hooks no-op" (a tracer that does nothing: the library's callbacks
into Python) and "staunch hooks otel-sdk" (staunch.otel.Spans over
OpenTelemetry's SDK with no exporter). Their "staunch x" is what
observability costs (issue 47's target: at most 1.03x). With --instructions,
--hooks counts "staunch hooks no-op" too (checkout + SELECT 1 + return).

Usage: python bench/bench.py [--seconds S] [--rounds N] [--url mysql://...]
                             [--only pool|statements] [--baseline DIR] [--where]
                             [--instructions] [--hooks] [--json FILE]
  --only pool        select1 and fetch only
  --only statements  insert5 and select_by_id only
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import statistics
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import unquote, urlparse

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def parse(url: str) -> dict:
    u = urlparse(url)
    return dict(
        host=u.hostname,
        port=u.port or 3306,
        user=unquote(u.username or ""),
        password=unquote(u.password or ""),
        database=u.path.lstrip("/"),
    )


def load_baseline(path: str):
    """The staunch package in `path` (a source tree), as module staunch_baseline."""
    import importlib.util

    import staunch

    # Over the library the checkout's package loaded (a source tree has none).
    os.environ.setdefault("STAUNCH_LIBRARY", staunch._ffi._library_path())
    spec = importlib.util.spec_from_file_location(
        "staunch_baseline", os.path.join(path, "__init__.py"), submodule_search_locations=[path]
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["staunch_baseline"] = mod
    spec.loader.exec_module(mod)
    return mod


def hooked_pool(url: str, size: int, tracer):
    """A pool as the "staunch" contender's, with `tracer` and a prometheus_client
    collector registered and scraped once (which turns the library's timings on,
    as an exporter's first scrape does): what observability costs (issue 47)."""
    from prometheus_client import CollectorRegistry, generate_latest

    import staunch
    from staunch.prometheus import StaunchCollector

    pool = staunch.Pool(url, max_size=size, min_idle=size, tracer=tracer)
    registry = CollectorRegistry()
    registry.register(StaunchCollector(pool))
    generate_latest(registry)
    return pool


def contenders(url: str, size: int, baseline: str | None = None, hooks: bool = False) -> dict:
    import staunch

    out = {}
    pool = staunch.Pool(url, max_size=size, min_idle=size)
    out["staunch"] = ("pool", pool)
    if baseline:
        out["staunch (baseline)"] = ("pool", load_baseline(baseline).Pool(url, max_size=size, min_idle=size))
    if hooks:
        from opentelemetry.sdk.trace import TracerProvider

        import staunch.otel

        # A tracer that does nothing: the cost of the library's callbacks
        # into Python; then OpenTelemetry's SDK with no exporter (no span
        # processor), the spans made and dropped: what an application pays.
        out["staunch hooks no-op"] = ("pool", hooked_pool(url, size, lambda ev: None))
        out["staunch hooks otel-sdk"] = (
            "pool",
            hooked_pool(url, size, staunch.otel.Spans(tracer_provider=TracerProvider())),
        )
    c = parse(url)
    from sqlalchemy.pool import QueuePool

    try:
        import pymysql

        def mk_pymysql():
            return pymysql.connect(
                host=c["host"], port=c["port"], user=c["user"], password=c["password"], database=c["database"]
            )

        out["pymysql+QueuePool"] = ("queuepool", QueuePool(mk_pymysql, pool_size=size, max_overflow=0, timeout=30))
        out["pymysql+QueuePool"] += (mk_pymysql,)
    except ImportError:
        print("PyMySQL not installed: skipped", file=sys.stderr)
    try:
        import MySQLdb

        def mk_mysqldb():
            return MySQLdb.connect(
                host=c["host"], port=c["port"], user=c["user"], password=c["password"], database=c["database"]
            )

        out["mysqlclient+QueuePool"] = ("queuepool", QueuePool(mk_mysqldb, pool_size=size, max_overflow=0, timeout=30))
        out["mysqlclient+QueuePool"] += (mk_mysqldb,)
    except ImportError:
        print("mysqlclient not installed: skipped", file=sys.stderr)
    for kind, pool, *_ in out.values():
        if kind == "queuepool":  # open its connections now, as staunch's min_idle does
            for fairy in [pool.connect() for _ in range(size)]:
                fairy.close()
    return out


def select1_op(kind, pool):
    """One checkout + SELECT 1 + return (the select1 benchmarks' operation)."""
    if kind == "pool":

        def op():
            with pool.connection() as conn:
                cur = conn.cursor()
                cur.execute("SELECT 1")
                cur.fetchone()

    else:

        def op():
            conn = pool.connect()
            cur = conn.cursor()
            cur.execute("SELECT 1")
            cur.fetchone()
            cur.close()
            conn.close()

    return op


def select1_loop(kind, pool, stop: threading.Event, counts: list, i: int):
    op = select1_op(kind, pool)
    n = 0
    while not stop.is_set():
        op()
        n += 1
    counts[i] = n


def run_select1(kind, pool, threads: int, seconds: float) -> tuple:
    """(checkouts per second, the process's CPU seconds per checkout)."""
    stop = threading.Event()
    counts = [0] * threads
    ts = [threading.Thread(target=select1_loop, args=(kind, pool, stop, counts, i)) for i in range(threads)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in ts:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()
    n = max(1, sum(counts))
    return n / (time.perf_counter() - t0), (time.process_time() - c0) / n


def run_select1_mixed(cs: dict, seconds: float, block: int = 50) -> dict:
    """Checkout + SELECT 1 at one thread, the contenders taking turns in blocks
    of `block` operations on the same thread for `seconds` each: every one
    meets the same machine. (This VM keeps one of two round-trip speeds for
    seconds at a time, which separate measurements catch unevenly.)
    {name: (checkouts per second, the thread's CPU seconds per checkout)}."""
    ops = {name: select1_op(kind, pool) for name, (kind, pool, *_) in cs.items()}
    wall = dict.fromkeys(ops, 0.0)
    cpu = dict.fromkeys(ops, 0.0)
    done = dict.fromkeys(ops, 0)

    def loop():
        deadline = time.perf_counter() + seconds * len(ops)
        while time.perf_counter() < deadline:
            for name, op in ops.items():
                t0, c0 = time.perf_counter(), time.thread_time()
                for _ in range(block):
                    op()
                cpu[name] += time.thread_time() - c0
                wall[name] += time.perf_counter() - t0
                done[name] += block

    t = threading.Thread(target=loop)
    t.start()
    t.join()
    return {name: (done[name] / wall[name], cpu[name] / done[name]) for name in ops}


def fetch_once(kind, pool) -> int:
    if kind == "pool":
        with pool.connection() as conn:
            cur = conn.cursor()
            cur.execute("SELECT id, name, score, price, at FROM bench_rows")
            rows = cur.fetchall()
    else:
        conn = pool.connect()
        cur = conn.cursor()
        cur.execute("SELECT id, name, score, price, at FROM bench_rows")
        rows = cur.fetchall()
        cur.close()
        conn.close()
    assert len(rows) == 10000, len(rows)
    return len(rows)


def run_fetch(kind, pool, seconds: float) -> tuple:
    """(fetches of 10,000 rows per second, the process's CPU seconds per fetch), medians."""
    fetch_once(kind, pool)
    times, cpu = [], []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 5:
        t0, c0 = time.perf_counter(), time.process_time()
        fetch_once(kind, pool)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return 1.0 / statistics.median(times), statistics.median(cpu)


def prepare(url: str) -> None:
    import staunch

    with staunch.Pool(url) as pool, pool.connection() as conn:
        cur = conn.cursor()
        cur.execute("DROP TABLE IF EXISTS bench_rows")
        cur.execute(
            "CREATE TABLE bench_rows (id INT PRIMARY KEY, name VARCHAR(40), score DOUBLE,"
            " price DECIMAL(10,2), at DATETIME(6)) ENGINE=InnoDB"
        )
        cur.execute(
            "INSERT INTO bench_rows SELECT seq, CONCAT('name-', seq, '-', REPEAT('x', seq % 17)), seq / 7,"
            " seq * 1.25, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_10000"
        )
        cur.execute("DROP TABLE IF EXISTS bench_ins")
        cur.execute(
            "CREATE TABLE bench_ins (id BIGINT, price DECIMAL(10,2), name VARCHAR(100), at DATETIME(6),"
            " data VARBINARY(64)) ENGINE=InnoDB"
        )
        conn.commit()


# --- the two ways to send a statement with parameters (issue #20) -----------------------

INSERT5 = "INSERT INTO bench_ins (id, price, name, at, data) VALUES (%s, %s, %s, %s, %s)"
SELECT_BY_ID = "SELECT id, name, score, price, at FROM bench_rows WHERE id = %s"


def stmt_contenders(url: str) -> dict:
    """name -> (an open connection, how to give it back), one each."""
    import staunch

    out = {}
    for name, knobs in (("staunch", {}), ("staunch server-prepared", {"interpolate_params": False})):
        pool = staunch.Pool(url, max_size=1, min_idle=1, **knobs)
        conn = pool.connection()

        def done(conn=conn, pool=pool):
            conn.__exit__(None, None, None)
            pool.close()

        out[name] = (conn, done)
    c = parse(url)
    for name, module in (("pymysql", "pymysql"), ("mysqlclient", "MySQLdb")):
        try:
            mod = __import__(module)
        except ImportError:
            print(f"{name} not installed: skipped", file=sys.stderr)
            continue
        conn = mod.connect(
            host=c["host"], port=c["port"], user=c["user"], password=c["password"], database=c["database"]
        )
        out[name] = (conn, conn.close)
    return out


PRICE = Decimal("12345.67")
AT = datetime.datetime(2026, 12, 1, 18, 0, 0, 123456)


def insert5_args(n: int) -> tuple:
    return (
        n,
        PRICE,
        f"name {n} with a ' quote",
        AT,
        b"\x00bytes ' \\ " + n.to_bytes(4, "little", signed=True),
    )


def run_insert5(conn, seconds: float, counter) -> tuple:
    """(one-shot INSERTs per second, the process's CPU seconds per INSERT);
    counter: an itertools.count shared by every contender, so no text repeats."""
    k = 0
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = t0 + seconds
    while True:
        for _ in range(100):
            n = next(counter)
            cur = conn.cursor()
            cur.execute(f"{INSERT5} /* {n} */", insert5_args(n))
            cur.close()
        k += 100
        conn.commit()
        if time.perf_counter() >= deadline:
            break
    return k / (time.perf_counter() - t0), (time.process_time() - c0) / k


def run_select_by_id(conn, seconds: float) -> tuple:
    """(SELECTs by id per second, the process's CPU seconds per SELECT)."""
    cur = conn.cursor()
    n = 0
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = t0 + seconds
    while True:
        for _ in range(100):
            n += 1
            cur.execute(SELECT_BY_ID, (n % 10000 + 1,))
            rows = cur.fetchall()
        assert len(rows) == 1 and rows[0][0] == n % 10000 + 1, rows
        if time.perf_counter() >= deadline:
            break
    out = n / (time.perf_counter() - t0), (time.process_time() - c0) / n
    cur.close()
    conn.commit()
    return out


def check_insert5(conn) -> None:
    """The values came back as they were sent: a fast wrong answer is no answer."""
    cur = conn.cursor()
    cur.execute(f"{INSERT5} /* check */", insert5_args(-1))
    cur.execute("SELECT id, price, name, at, data FROM bench_ins WHERE id = -1")
    got = cur.fetchall()
    cur.execute("DELETE FROM bench_ins WHERE id = -1")
    cur.close()
    conn.commit()
    assert len(got) == 1 and tuple(got[0]) == insert5_args(-1), got


# Issue #24: at every point. Issue #20: interpolation not slower than the usual driver's default.
TARGETS = {
    ("select1", "pymysql+QueuePool"): 1.5,
    ("select1", "mysqlclient+QueuePool"): 1.0,
    ("fetch", "pymysql+QueuePool"): 1.5,
    ("fetch", "mysqlclient+QueuePool"): 1.0,
    ("insert5", "pymysql"): 1.0,
    ("insert5", "mysqlclient"): 1.0,
    ("select_by_id", "pymysql"): 1.0,
    ("select_by_id", "mysqlclient"): 1.0,
}


# --- where the time of a checkout goes -------------------------------------------------


def phases_loop(kind, pool, n: int) -> list:
    """n checkouts + SELECT 1 + returns; per phase [cpu, wall] seconds summed."""
    tt, pc = time.thread_time, time.perf_counter
    acc = [[0.0, 0.0] for _ in range(3)]
    for _ in range(n):
        c0, w0 = tt(), pc()
        conn = pool.connection() if kind == "pool" else pool.connect()
        c1, w1 = tt(), pc()
        cur = conn.cursor()
        cur.execute("SELECT 1")
        cur.fetchone()
        cur.close()
        c2, w2 = tt(), pc()
        if kind == "pool":
            conn.__exit__(None, None, None)  # the with block's end: COMMIT, return
        else:
            conn.close()  # QueuePool: ROLLBACK (reset on return), return
        c3, w3 = tt(), pc()
        for a, (c, w) in zip(acc, ((c1 - c0, w1 - w0), (c2 - c1, w2 - w1), (c3 - c2, w3 - w2))):
            a[0] += c
            a[1] += w
    return acc


def raw_phases_loop(pool, n: int) -> list:
    """The C calls the Python layer makes for the same checkout, straight
    through ctypes (borrow; query, column types, last insert id, fetch, free; commit,
    return): what is left when the Python layer costs nothing."""
    import ctypes

    from staunch import _core
    from staunch import _ffi as F

    lib, byref = _core.lib, ctypes.byref
    tt, pc = time.thread_time, time.perf_counter
    acc = [[0.0, 0.0] for _ in range(3)]
    p = pool._ptr
    err = ctypes.POINTER(F.staunch_error)()
    buf = (F.staunch_value * 64)()
    got, types = ctypes.c_size_t(), (ctypes.c_uint32 * 64)()
    for _ in range(n):
        c0, w0 = tt(), pc()
        conn = ctypes.POINTER(F.staunch_conn)()
        if lib.staunch_pool_get_cancellable(p, F.TIMEOUT_DEFAULT, None, byref(conn), byref(err)):
            raise RuntimeError("get failed")
        c1, w1 = tt(), pc()
        rows = ctypes.POINTER(F.staunch_rows)()
        if lib.staunch_conn_query_ex(conn, b"SELECT 1", None, 0, F.QUERY_TEXT, byref(rows), byref(err)):
            raise RuntimeError("query failed")
        lib.staunch_rows_column_types(rows, types, 64)
        lib.staunch_rows_last_insert_id(rows)
        lib.buffered.staunch_rows_fetch(rows, buf, 64, byref(got), byref(err))
        lib.buffered.staunch_rows_free(rows)
        c2, w2 = tt(), pc()
        if lib.staunch_conn_commit(conn, byref(err)):
            raise RuntimeError("commit failed")
        lib.staunch_conn_free(conn)
        c3, w3 = tt(), pc()
        for a, (c, w) in zip(acc, ((c1 - c0, w1 - w0), (c2 - c1, w2 - w1), (c3 - c2, w3 - w2))):
            a[0] += c
            a[1] += w
    return acc


def calls_per_checkout(fn, n: int = 200) -> tuple:
    """(Python function calls, builtin function calls) per checkout, counted
    with sys.setprofile: figures the machine's load does not move. Foreign
    functions called through ctypes are in neither."""
    counts = {"call": 0, "c_call": 0}

    def prof(frame, event, arg):
        if event in counts:
            counts[event] += 1

    sys.setprofile(prof)
    try:
        fn(n)
    finally:
        sys.setprofile(None)
    return counts["call"] / n, counts["c_call"] / n


def where(cs: dict, rounds: int, n: int = 1000) -> None:
    runs = {name: lambda kind=kind, pool=pool: phases_loop(kind, pool, n) for name, (kind, pool, *_) in cs.items()}
    runs["staunch C calls"] = lambda: raw_phases_loop(cs["staunch"][1], n)
    got: dict = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            out: list = []
            # Not the main thread, as the benchmark's loops.
            t = threading.Thread(target=lambda fn=fn, out=out: out.append(fn()))
            t.start()
            t.join()
            got[name].append(out[0])
    calls: dict = {}
    for name, (kind, pool, *_) in cs.items():
        out = []
        t = threading.Thread(
            target=lambda k=kind, p=pool, out=out: out.append(calls_per_checkout(lambda m: phases_loop(k, p, m)))
        )
        t.start()
        t.join()
        calls[name] = out[0]
    print()
    print(f"where the time of one checkout + SELECT 1 + return goes (1 thread, µs per checkout, median of {rounds}")
    print("rounds of 1,000; CPU: this thread's CPU time, system calls included; wall includes the server's answer)")
    print(f"{'contender':<22} {'borrow':>15} {'statement+fetch':>17} {'end':>15} {'total':>15}  calls per checkout")
    print(f"{'':<22} {'CPU / wall':>15} {'CPU / wall':>17} {'CPU / wall':>15} {'CPU / wall':>15}  Python / builtin")
    for name, rs in got.items():
        cells = []
        for ph in range(4):
            if ph < 3:
                cpu = statistics.median(r[ph][0] for r in rs)
                wall = statistics.median(r[ph][1] for r in rs)
            else:
                cpu = statistics.median(sum(r[i][0] for i in range(3)) for r in rs)
                wall = statistics.median(sum(r[i][1] for i in range(3)) for r in rs)
            cells.append(f"{cpu / n * 1e6:6.1f} / {wall / n * 1e6:6.1f}")
        py, c = calls.get(name, (None, None))
        # Less the timing loop's own: 8 clock reads and a zip per checkout.
        cnt = "" if py is None else f"{py:4.0f} / {c - 9:3.0f}"
        print(f"{name:<22} {cells[0]:>15} {cells[1]:>17} {cells[2]:>15} {cells[3]:>15}  {cnt}")
    print("(end: staunch commits and returns, QueuePool rolls back and returns; both one round trip;")
    print(" calls: Python functions and builtins run per checkout, ctypes foreign calls not counted)")


# --- instructions per operation (--instructions) -----------------------------------------

COUNTED = (
    ("select1", ("staunch", "pymysql+QueuePool", "mysqlclient+QueuePool")),
    ("insert5", ("staunch", "pymysql", "mysqlclient")),
    ("select_by_id", ("staunch", "pymysql", "mysqlclient")),
)


class _SetAfter:
    """A stop event for select1_loop that is set once it was asked n times."""

    def __init__(self, n: int):
        self.left = n

    def is_set(self) -> bool:
        self.left -= 1
        return self.left < 0


def run_counted(url: str, bench: str, name: str, n: int) -> None:
    """One contender doing one benchmark's operation n times (what --instructions
    runs under callgrind, twice). Each run starts from a full collection of the
    cyclic GC, so that one left pending by the set-up (a whole heap's, the
    imports') does not fall in one run of the two and not in the other: the
    collections the operations themselves cause are counted."""
    import gc

    if bench == "select1":
        kind, pool, *_ = contenders(url, 2, hooks=name.startswith("staunch hooks"))[name]
        gc.collect()
        select1_loop(kind, pool, _SetAfter(n), [0], 0)
        return
    conn, done = stmt_contenders(url)[name]
    gc.collect()
    if bench == "insert5":
        cur = conn.cursor()
        for k in range(n):
            cur.execute(f"{INSERT5} /* {k} */", insert5_args(k))
        conn.commit()
    else:
        cur = conn.cursor()
        for k in range(n):
            cur.execute(SELECT_BY_ID, (k % 10000 + 1,))
            cur.fetchall()
    done()


def instructions(url: str, hooks: bool = False) -> None:
    import subprocess

    def count(bench: str, name: str, n: int) -> int:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
        cmd += [__file__, "--url", url, "--counted", bench, name, str(n)]
        r = subprocess.run(cmd, capture_output=True, text=True, check=True)
        for line in r.stderr.splitlines():
            if "Collected :" in line:
                return int(line.split(":")[-1])
        raise RuntimeError(f"no count from callgrind: {r.stderr[-500:]}")

    print()
    print("user-space instructions per operation of the client process (callgrind: the difference")
    print("between 1,300 and 300 operations / 1,000; staunch x: the contender's count / staunch's)")
    print(f"{'benchmark':<14} {'contender':<24} {'instructions':>13} {'staunch x':>10}")
    for bench, names in COUNTED:
        if hooks and bench == "select1":
            names = names[:1] + ("staunch hooks no-op",) + names[1:]
        first = None
        for name in names:
            per_op = (count(bench, name, 1300) - count(bench, name, 300)) / 1000
            first = first or per_op
            ratio = "" if name == names[0] else f"{per_op / first:9.2f}x"
            print(f"{bench:<14} {name:<24} {per_op:>13,.0f} {ratio:>10}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="per measurement (default 3)")
    ap.add_argument("--url", help="a server to use (default: a throwaway one from staunch-testkit)")
    ap.add_argument("--rounds", type=int, default=6, help="alternating rounds; the best is kept (default 6)")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--baseline", help="also run the staunch package source in this directory")
    ap.add_argument(
        "--hooks",
        action="store_true",
        help="also staunch with metrics (prometheus_client) and a tracer: a no-op one, OpenTelemetry's SDK",
    )
    ap.add_argument("--where", action="store_true", help="then where the time of a checkout goes, per phase")
    ap.add_argument(
        "--only",
        choices=("pool", "statements"),
        help="pool: select1 and fetch only; statements: insert5 and select_by_id only (default: all)",
    )
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="count each operation's user-space instructions (valgrind) instead of timing it",
    )
    ap.add_argument("--counted", nargs=3, metavar=("BENCH", "CONTENDER", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.counted:
        run_counted(args.url, args.counted[0], args.counted[1], int(args.counted[2]))
        return 0
    if args.where and args.only == "statements":
        ap.error("--where measures the pool's checkout: not with --only statements")
    tk = None
    if args.url:
        url = args.url
    else:
        from conftest import Testkit

        tk = Testkit("server")
        url = tk.direct_url
    try:
        prepare(url)
        if args.instructions:
            instructions(url, args.hooks)
            return 0
        cs = contenders(url, 8, args.baseline, args.hooks) if args.only != "statements" else {}
        ss = stmt_contenders(url) if args.only != "pool" else {}
        for conn, _ in ss.values():
            check_insert5(conn)
        results: dict = {}
        cpu: dict = {}  # the least CPU per operation over the rounds

        def keep(key, r, c):
            results[key] = max(results.get(key, 0), r)
            cpu[key] = min(cpu.get(key, c), c)

        counter = itertools.count(1)  # insert5's, shared: every statement text is new
        for _ in range(args.rounds):  # alternate, so drift hits everyone alike
            for name, (kind, pool, *_) in cs.items():
                for threads in (1, 8):
                    keep((f"select1 x{threads}", name), *run_select1(kind, pool, threads, args.seconds))
                keep(("fetch", name), *run_fetch(kind, pool, args.seconds))
            if cs:
                for name, rc in run_select1_mixed(cs, args.seconds).items():
                    keep(("select1 x1 mixed", name), *rc)
            for name, (conn, _) in ss.items():
                keep(("insert5", name), *run_insert5(conn, args.seconds, counter))
                keep(("select_by_id", name), *run_select_by_id(conn, args.seconds))
        groups = []
        if cs:
            groups += [(b, list(cs)) for b in ("select1 x1", "select1 x1 mixed", "select1 x8", "fetch")]
        if ss:
            groups += [(b, list(ss)) for b in ("insert5", "select_by_id")]
        report(results, cpu, groups)
        if args.where:
            where(cs, args.rounds)
        for kind, pool, *_ in cs.values():
            if kind == "pool":
                pool.close()
        for _, done in ss.values():
            done()
        if args.json:
            Path(args.json).write_text(json.dumps({f"{k[0]} | {k[1]}": v for k, v in results.items()}, indent=1))
    finally:
        if tk:
            tk.close()
    return 0


def report(results: dict, cpu: dict, groups: list) -> None:
    """groups: (benchmark, its contenders) in the order of the table."""
    print()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(
        f"{'benchmark':<16} {'contender':<24} {'ops/s':>10} {'staunch x':>10} {'target':>8}  met"
        f"  {'CPU/op':>9} {'CPU ratio':>10}"
    )
    for bench, names in groups:
        base = results.get((bench, "staunch"))
        base_cpu = cpu.get((bench, "staunch"))
        scale, unit = (1e3, "ms") if bench == "fetch" else (1e6, "us")
        for name in names:
            v = results.get((bench, name))
            if v is None:
                continue
            c = f"{cpu[(bench, name)] * scale:6.1f} {unit}"
            if name == "staunch":
                print(f"{bench:<16} {name:<24} {v:>10.1f} {'':>10} {'':>8}  {'':3}  {c:>9}")
                continue
            ratio = base / v
            target = TARGETS.get((bench.split()[0], name))
            met = "" if target is None else ("yes" if ratio >= target else "NO")
            tstr = "" if target is None else f">= {target:g}x"
            cr = cpu[(bench, name)] / base_cpu
            print(f"{bench:<16} {name:<24} {v:>10.1f} {ratio:>9.2f}x {tstr:>8}  {met:3}  {c:>9} {cr:>9.2f}x")
    benches = {b for b, _ in groups}
    if benches & {"select1 x1", "select1 x8", "fetch"}:
        print("(select1: checkouts per second, best round; fetch: fetches of 10,000 rows x 5 columns per second,")
        print(" median in the best round. select1 x1 mixed: the contenders in turns of 50 checkouts on one thread,")
        print(" so each meets the same machine; its CPU/op is that thread's alone.)")
    if benches & {"insert5", "select_by_id"}:
        print("(insert5: one-shot INSERTs of 5 parameters per second, select_by_id: SELECTs by id per second, one")
        print(" connection each, best round. staunch: its default, interpolation; staunch server-prepared:")
        print(" interpolate_params=false; PyMySQL and mysqlclient: their defaults, interpolation; #20's target:")
        print(" staunch's default >= 1.0x the usual driver's.)")
    if any(name.startswith("staunch hooks") for _, names in groups for name in names):
        print("(staunch hooks no-op: a tracer that does nothing and a prometheus_client collector, scraped once;")
        print(" staunch hooks otel-sdk: the same with staunch.otel.Spans over OpenTelemetry's SDK, no exporter.")
        print(" Their staunch x - 1 is what observability costs; issue 47's target: <= 1.03x.)")
    print("(staunch x: staunch's rate / the contender's. CPU/op: this process's CPU time (every thread, not the")
    print(" server's) per operation, least over the rounds; CPU ratio: the contender's / staunch's, so above 1")
    print(" means staunch spends less. CPU is the steadier figure on a busy machine.)")


if __name__ == "__main__":
    sys.exit(main())
