"""staunch.aio vs asyncmy and aiomysql, side by side in one run against one
throwaway MariaDB server from the test kit (issue 48's targets):

  select1   acquire + SELECT 1 + release, with 1 task and with 64 tasks,
            each contender with its own pool at its defaults (10
            connections each: staunch's max_size, asyncmy's and aiomysql's
            maxsize)
  fetch10k  one task fetching 10,000 rows of 5 mixed columns (INT, VARCHAR,
            DOUBLE, DECIMAL, DATETIME) on a held connection

Rounds alternate the contenders (ROUNDS of SECONDS each) and the best round
of each is kept; ratios are staunch's to each peer. Needs
`pip install asyncmy==0.2.18 aiomysql==0.3.2` and the library
(STAUNCH_LIBRARY, or the installed wheel), the test kit (STAUNCH_TESTKIT).

  python bench/aio_bench.py [--seconds 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import time
import urllib.parse

import aiomysql
import asyncmy

import staunch.aio


def start_server():
    kit = os.environ.get("STAUNCH_TESTKIT", "target/release/staunch-testkit")
    p = subprocess.Popen([kit, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = json.loads(p.stdout.readline())
    assert ready["ready"], ready
    return p, ready["url"]


async def rate(fn, tasks: int, seconds: float) -> float:
    end = time.perf_counter() + seconds
    done = 0

    async def worker():
        nonlocal done
        while time.perf_counter() < end:
            await fn()
            done += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    return done / (time.perf_counter() - t0)


async def contenders(url: str):
    u = urllib.parse.urlsplit(url)
    kw = dict(host=u.hostname, port=u.port, user=u.username, password=u.password, db=u.path.lstrip("/"))
    sp = staunch.aio.Pool(url)
    ap = await asyncmy.create_pool(**kw)
    mp = await aiomysql.create_pool(**kw)

    async def s1_staunch():
        async with sp.connection() as c:
            cur = await c.execute("SELECT 1")
            assert cur.fetchone()[0] == 1

    async def s1_asyncmy():
        async with ap.acquire() as c:
            async with c.cursor() as cur:
                await cur.execute("SELECT 1")
                assert (await cur.fetchone())[0] == 1

    async def s1_aiomysql():
        async with mp.acquire() as c:
            async with c.cursor() as cur:
                await cur.execute("SELECT 1")
                assert (await cur.fetchone())[0] == 1

    async def closer():
        sp.close()
        ap.close()
        await ap.wait_closed()
        mp.close()
        await mp.wait_closed()

    return {"staunch.aio": s1_staunch, "asyncmy": s1_asyncmy, "aiomysql": s1_aiomysql}, (sp, ap, mp), closer


async def main():
    ap_ = argparse.ArgumentParser()
    ap_.add_argument("--seconds", type=float, default=2.0)
    ap_.add_argument("--rounds", type=int, default=3)
    args = ap_.parse_args()
    proc, url = start_server()
    try:
        s1, (sp, ap, mp), closer = await contenders(url)
        async with sp.connection() as c:
            await c.execute(
                "CREATE TABLE bench_rows (id INT PRIMARY KEY, name VARCHAR(40), score DOUBLE,"
                " price DECIMAL(12,2), at DATETIME(6))"
            )
            await c.execute(
                "INSERT INTO bench_rows SELECT seq, CONCAT('name-', seq), seq / 7, seq * 1.25,"
                " '2024-01-02 03:04:05.123456' + INTERVAL seq SECOND FROM seq_1_to_10000"
            )

        async def f_staunch():
            async with sp.connection() as c:
                cur = await c.execute("SELECT * FROM bench_rows")
                assert len(cur.fetchall()) == 10000

        async def f_asyncmy():
            async with ap.acquire() as c:
                async with c.cursor() as cur:
                    await cur.execute("SELECT * FROM bench_rows")
                    assert len(await cur.fetchall()) == 10000

        async def f_aiomysql():
            async with mp.acquire() as c:
                async with c.cursor() as cur:
                    await cur.execute("SELECT * FROM bench_rows")
                    assert len(await cur.fetchall()) == 10000

        fetch = {"staunch.aio": f_staunch, "asyncmy": f_asyncmy, "aiomysql": f_aiomysql}
        cases = [("select1, 1 task", s1, 1), ("select1, 64 tasks", s1, 64), ("fetch10k, 1 task", fetch, 1)]
        print(f"staunch.aio vs asyncmy and aiomysql: best of {args.rounds} rounds of {args.seconds} s (ops/s)")
        for name, fns, tasks in cases:
            best = dict.fromkeys(fns, 0.0)
            for _ in range(args.rounds):
                for who, fn in fns.items():
                    best[who] = max(best[who], await rate(fn, tasks, args.seconds))
            s = best["staunch.aio"]
            print(
                f"  {name:18} staunch.aio {s:9.0f}  asyncmy {best['asyncmy']:9.0f} ({s / best['asyncmy']:.2f}x)"
                f"  aiomysql {best['aiomysql']:9.0f} ({s / best['aiomysql']:.2f}x)"
            )
        await closer()
    finally:
        proc.stdin.close()
        proc.wait(30)


if __name__ == "__main__":
    asyncio.run(main())
