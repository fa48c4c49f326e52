"""staunch vs PyMySQL and mysqlclient under SQLAlchemy's QueuePool, side by
side in one run against one throwaway MariaDB server from the test kit.

  checkout + SELECT 1 per iteration, at 1 and 8 threads
  fetching 10,000 rows of 5 mixed columns (INT, VARCHAR, DOUBLE, DECIMAL, DATETIME)

Every contender does the same round trips: staunch's `with pool.connection()`
commits on exit when a transaction may be open (after a SELECT under
autocommit=0), QueuePool's reset-on-return rolls back. Reports operations per
second and staunch's ratio to each peer, against the targets of issue #14.

Usage: python bench/bench.py [--seconds S] [--url mysql://...] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
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


def contenders(url: str, size: int) -> dict:
    import staunch

    out = {}
    pool = staunch.Pool(url, max_size=size, min_idle=size)
    out["staunch"] = ("pool", pool)
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
    return out


def select1_loop(kind, pool, stop: threading.Event, counts: list, i: int):
    n = 0
    if kind == "pool":
        while not stop.is_set():
            with pool.connection() as conn:
                cur = conn.cursor()
                cur.execute("SELECT 1")
                cur.fetchone()
            n += 1
    else:
        while not stop.is_set():
            conn = pool.connect()
            cur = conn.cursor()
            cur.execute("SELECT 1")
            cur.fetchone()
            cur.close()
            conn.close()
            n += 1
    counts[i] = n


def run_select1(kind, pool, threads: int, seconds: float) -> float:
    # warm up: every connection open
    stop = threading.Event()
    counts = [0] * threads
    ts = [threading.Thread(target=select1_loop, args=(kind, pool, stop, counts, i)) for i in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


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


def run_fetch(kind, pool, seconds: float) -> float:
    fetch_once(kind, pool)
    times = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 5:
        t0 = time.perf_counter()
        fetch_once(kind, pool)
        times.append(time.perf_counter() - t0)
    return 1.0 / statistics.median(times)  # fetches of 10,000 rows per second


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
        conn.commit()


TARGETS = {
    ("select1", "pymysql+QueuePool"): 2.0,
    ("select1", "mysqlclient+QueuePool"): 1.0,
    ("fetch", "pymysql+QueuePool"): 3.0,
    ("fetch", "mysqlclient+QueuePool"): 0.8,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0, help="per measurement (default 1)")
    ap.add_argument("--url", help="a server to use (default: a throwaway one from staunch-testkit)")
    ap.add_argument("--rounds", type=int, default=6, help="alternating rounds; the best is kept (default 6)")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()
    tk = None
    if args.url:
        url = args.url
    else:
        from conftest import Testkit

        tk = Testkit("server")
        url = tk.direct_url
    try:
        prepare(url)
        cs = contenders(url, 8)
        results: dict = {}
        for _ in range(args.rounds):  # alternate, so drift hits everyone alike
            for name, (kind, pool, *_) in cs.items():
                for threads in (1, 8):
                    r = run_select1(kind, pool, threads, args.seconds)
                    key = (f"select1 x{threads}", name)
                    results[key] = max(results.get(key, 0), r)
                r = run_fetch(kind, pool, args.seconds)
                results[("fetch", name)] = max(results.get(("fetch", name), 0), r)
        cs["staunch"][1].close()
        report(results, list(cs))
        if args.json:
            Path(args.json).write_text(json.dumps({f"{k[0]} | {k[1]}": v for k, v in results.items()}, indent=1))
    finally:
        if tk:
            tk.close()
    return 0


def report(results: dict, names: list) -> None:
    print()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"{'benchmark':<14} {'contender':<24} {'ops/s':>10} {'staunch x':>10} {'target':>8}  met")
    for bench in ("select1 x1", "select1 x8", "fetch"):
        base = results.get((bench, "staunch"))
        for name in names:
            v = results.get((bench, name))
            if v is None:
                continue
            unit = v if bench != "fetch" else v
            if name == "staunch":
                print(f"{bench:<14} {name:<24} {unit:>10.1f} {'':>10} {'':>8}")
                continue
            ratio = base / v
            target = TARGETS.get((bench.split()[0], name))
            met = "" if target is None else ("yes" if ratio >= target else "NO")
            tstr = "" if target is None else f">= {target:g}x"
            print(f"{bench:<14} {name:<24} {unit:>10.1f} {ratio:>9.2f}x {tstr:>8}  {met}")
    print("(fetch: fetches of 10,000 rows x 5 columns per second, median; select1: checkouts per second)")


if __name__ == "__main__":
    sys.exit(main())
