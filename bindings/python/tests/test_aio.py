"""staunch.aio: borrows and statements that wait in the event loop, against
the test kit's server (each test runs its own loop with asyncio.run)."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import threading
import time

import pytest

import staunch
import staunch.aio

SLACK = 0.5


def run(coro):
    return asyncio.run(coro)


def threads() -> int:
    return threading.active_count()


def test_aio_values_and_parameters_arrive_exact(url):
    async def main():
        async with staunch.aio.Pool(url) as pool:
            async with pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT %s, %s, %s, CAST(%s AS DATE), %s", (1, "a'b", decimal.Decimal("1.10"), "2024-02-29", None)
                )
                assert cur.fetchall() == [(1, "a'b", decimal.Decimal("1.10"), datetime.date(2024, 2, 29), None)]
                assert cur.description[0][0] == "1"
                await cur.execute("SELECT 1 WHERE 1 = 0")
                assert cur.fetchall() == [] and cur.rowcount == 0
                await cur.execute("CREATE TEMPORARY TABLE aio_t (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)")
                assert await cur.executemany("INSERT INTO aio_t (v) VALUES (%s)", [("x",), ("y",)]) == 2
                await cur.execute("INSERT INTO aio_t (v) VALUES (%(v)s)", {"v": "z"})
                assert cur.lastrowid == 3 and cur.rowcount == 1
                await cur.execute("SELECT v FROM aio_t ORDER BY id")
                assert cur.fetchone() == ("x",)
                assert cur.fetchall() == [("y",), ("z",)]
                with pytest.raises(staunch.ProgrammingError):
                    await cur.execute("SELEC 1")
                await cur.execute("SELECT 2")
                assert cur.fetchall() == [(2,)]

    run(main())


def test_aio_borrows_wait_in_the_event_loop_not_in_threads(url):
    """200 tasks on a pool of 4, each holding its connection for a
    statement: all served, every one but the first few after waiting in the
    loop, and no thread started for it."""

    async def main():
        pool = staunch.aio.Pool(url + "?max_size=4")
        # Four connections made first (the pool's adder thread is the
        # pool's own, started at open).
        held = [await pool.connection() for _ in range(4)]
        for c in held:
            c.release()
        before = threads()
        peak = before
        served = []

        async def one(i):
            nonlocal peak
            async with pool.connection(timeout=30) as conn:
                cur = await conn.execute("SELECT %s, SLEEP(0.005)", (i,))
                served.append(cur.fetchone()[0])
                peak = max(peak, threads())

        await asyncio.gather(*(one(i) for i in range(200)))
        assert sorted(served) == list(range(200))
        assert peak <= before, f"{peak} threads while 200 tasks borrowed, {before} before"
        s = pool.stats()
        assert s.waiting == 0 and s.acquires_waited >= 150, s
        pool.close()

    run(main())


def test_aio_timeout_and_give_up(url):
    async def main():
        pool = staunch.aio.Pool(url + "?max_size=1")
        conn = await pool.connection()
        # The bound: reported as the blocking face reports it, each wait's
        # own, whichever waits first (one timer serves a loop's waits).
        t_longer = time.monotonic()
        longer = asyncio.ensure_future(pool.connection(timeout=1.2))
        await asyncio.sleep(0.05)
        t0 = time.monotonic()
        with pytest.raises(staunch.PoolExhausted):
            await pool.connection(timeout=0.3)
        assert 0.25 <= time.monotonic() - t0 <= 0.3 + SLACK
        with pytest.raises(staunch.PoolExhausted):
            await asyncio.wait_for(longer, 5)
        assert 1.15 <= time.monotonic() - t_longer <= 1.2 + SLACK
        # A cancelled task gives its place up at once.
        task = asyncio.ensure_future(pool.connection(timeout=30))
        await asyncio.sleep(0.1)
        assert pool.stats().waiting == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pool.stats().waiting == 0
        # asyncio.timeout around a borrow: the same.
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await pool.connection(timeout=30)
        assert pool.stats().waiting == 0
        # Handed over in turn once the connection comes back.
        waiter = asyncio.ensure_future(pool.connection(timeout=30))
        await asyncio.sleep(0.05)
        conn.release()
        other = await asyncio.wait_for(waiter, 5)
        assert (await other.execute("SELECT 7")).fetchall() == [(7,)]
        other.release()
        pool.close()
        with pytest.raises(staunch.PoolClosed):
            await pool.connection()

    run(main())


def test_aio_cancelled_statement_is_killed_and_the_connection_goes_on(url):
    async def main():
        pool = staunch.aio.Pool(url + "?max_size=2")
        conn = await pool.connection()
        cur = conn.cursor()
        t0 = time.monotonic()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await cur.execute("SELECT SLEEP(10)")
        assert time.monotonic() - t0 <= 1.0 + SLACK
        async with pool.connection() as other:
            c = await other.execute(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(10)%%'"
            )
            assert c.fetchall() == [(0,)]
        await cur.execute("SELECT 3")
        assert cur.fetchall() == [(3,)]
        conn.release()
        pool.close()

    run(main())


def test_aio_transactions_commit_and_roll_back(url):
    async def main():
        pool = staunch.aio.Pool(url + "?max_size=2")
        async with pool.connection() as conn:
            await conn.execute("CREATE TABLE IF NOT EXISTS aio_txn (id INT PRIMARY KEY) ENGINE=InnoDB")
            await conn.execute("DELETE FROM aio_txn")
        async with pool.connection() as conn:
            await conn.execute("START TRANSACTION")
            await conn.execute("INSERT INTO aio_txn VALUES (1)")
        with pytest.raises(RuntimeError):
            async with pool.connection() as conn:
                await conn.execute("START TRANSACTION")
                await conn.execute("INSERT INTO aio_txn VALUES (2)")
                raise RuntimeError("boom")
        async with pool.connection() as conn:
            assert (await conn.execute("SELECT id FROM aio_txn ORDER BY id")).fetchall() == [(1,)]
            await conn.execute("DROP TABLE aio_txn")
        pool.close()

    run(main())


def test_aio_set_autocommit_waits_in_the_loop(url):
    """Turning autocommit on commits the open transaction, which waits while
    another session holds FLUSH TABLES WITH READ LOCK. That session's
    UNLOCK TABLES runs on the same loop meanwhile: a SET that blocked the
    loop would wait out lock_wait_timeout and fail."""

    async def main():
        pool = staunch.aio.Pool(url + "?max_size=2")
        async with pool.connection() as a, pool.connection() as b:
            await a.execute("CREATE TABLE IF NOT EXISTS aio_ac (id INT PRIMARY KEY) ENGINE=InnoDB")
            await a.execute("DELETE FROM aio_ac")
            await a.execute("SET SESSION lock_wait_timeout = 5")
            await a.set_autocommit(False)
            assert not a.autocommit
            await a.execute("INSERT INTO aio_ac VALUES (1)")
            await b.execute("FLUSH TABLES WITH READ LOCK")
            order = []

            async def commit_by_autocommit():
                await a.set_autocommit(True)
                order.append("committed")

            async def unlock():
                await asyncio.sleep(0.3)
                order.append("unlocking")
                await b.execute("UNLOCK TABLES")

            await asyncio.gather(commit_by_autocommit(), unlock())
            assert order == ["unlocking", "committed"]
            assert a.autocommit
            await a.set_autocommit(True)  # already on: nothing sent
            assert (await b.execute("SELECT id FROM aio_ac")).fetchall() == [(1,)]
            await b.rollback()
            await a.execute("DROP TABLE aio_ac")
        pool.close()

    run(main())


def test_aio_streamed_rows_arrive_exact_while_the_loop_runs(url):
    """A streaming cursor: 20,000 rows read with ``async for`` as they
    arrive (waits on the socket, no thread), then the same through a
    prepared statement with a parameter; while a stream waits for rows that
    come late, another task's statements run to their end."""

    async def main():
        async with staunch.aio.Pool(url + "?max_size=2") as pool:
            async with pool.connection() as conn:
                before = threads()
                async with conn.cursor(staunch.aio.SSCursor) as cur:
                    await cur.execute("SELECT seq, CONCAT('row ', seq), seq / 4 FROM seq_1_to_20000")
                    assert cur.rowcount == -1
                    n = 0
                    async for row in cur:
                        n += 1
                        assert row == (n, f"row {n}", decimal.Decimal(n) / 4)
                    assert n == 20000 and cur.rowcount == 20000
                assert threads() == before, "a text stream started a thread"
                async with conn.cursor(staunch.aio.SSCursor) as cur:
                    await cur.execute("SELECT seq, REPEAT('x', seq MOD 100) FROM seq_1_to_5000 WHERE seq > %s", (10,))
                    assert await cur.fetchone() == (11, "x" * 11)
                    assert len(await cur.fetchmany(9)) == 9
                    rest = await cur.fetchall()
                    assert len(rest) == 5000 - 20 and rest[-1] == (5000, "")
                    assert await cur.fetchone() is None
                # An answer half read, then closed: the connection goes on.
                cur = conn.cursor(staunch.aio.SSCursor)
                await cur.execute("SELECT seq FROM seq_1_to_100000")
                assert await cur.fetchone() == (1,)
                await cur.aclose()
                assert (await conn.execute("SELECT 7")).fetchall() == [(7,)]
            # A set whose rows come late (the server sleeps 0.1 s per row, and
            # sends nothing before its end): the loop is not held while the
            # stream waits, so the other task ends first.
            seen = []

            async def other():
                async with pool.connection() as c:
                    for i in range(5):
                        assert (await c.execute("SELECT %s", (i,))).fetchall() == [(i,)]
                seen.append("other task done")

            async with pool.connection() as conn, conn.cursor(staunch.aio.SSCursor) as cur:
                task = asyncio.create_task(other())
                await cur.execute("SELECT seq, SLEEP(0.1) FROM seq_1_to_5")
                rows = []
                async for r in cur:
                    if not rows:
                        seen.append("first row")
                    rows.append(r)
                assert rows == [(i, 0) for i in range(1, 6)]
                await task
            assert seen == ["other task done", "first row"]

    run(main())


def test_aio_buffered_answer_is_read_as_it_arrives_while_the_loop_runs(url):
    """A buffered cursor reads its answer as it arrives: while the server
    sleeps between rows, the loop runs other tasks (the answer is not read
    whole in one call that holds the loop); the rows arrive exact, a CALL's
    sets after the first are there for nextset, and an error in the middle
    of an answer is raised with the connection usable after it."""

    async def main():
        async with staunch.aio.Pool(url + "?max_size=2") as pool:
            async with pool.connection() as conn:
                ticks = 0
                stop = asyncio.Event()

                async def ticker():
                    nonlocal ticks
                    while not stop.is_set():
                        ticks += 1
                        await asyncio.sleep(0.01)

                t = asyncio.create_task(ticker())
                await asyncio.sleep(0)
                # Rows 1 and 2 (200 kB each) leave at once; row 3 after 0.5 s.
                cur = await conn.execute("SELECT seq, IF(seq = 3, SLEEP(0.5), REPEAT('x', 200000)) FROM seq_1_to_4")
                stop.set()
                await t
                assert cur.rowcount == 4
                assert cur.fetchall() == [(1, "x" * 200000), (2, "x" * 200000), (3, "0"), (4, "x" * 200000)]
                assert ticks >= 20, f"the loop ran {ticks} times during a 0.5 s wait for rows"

                cur = await conn.execute("SELECT seq, CONCAT('row ', seq), seq / 4 FROM seq_1_to_20000")
                assert cur.rowcount == 20000 and cur.rownumber == 0
                assert cur.fetchone() == (1, "row 1", decimal.Decimal("0.2500"))
                assert cur.fetchall()[-1] == (20000, "row 20000", decimal.Decimal(5000))

                await conn.execute("CREATE OR REPLACE PROCEDURE aio_two_sets() BEGIN SELECT 1; SELECT 2, 'b'; END")
                cur = await conn.execute("CALL aio_two_sets()")
                assert cur.fetchall() == [(1,)]
                assert cur.nextset() is True
                assert cur.fetchall() == [(2, "b")]

                with pytest.raises(staunch.Error, match="more than 1 row"):
                    await conn.execute("SELECT seq, IF(seq = 3000, (SELECT 1 UNION SELECT 2), seq) FROM seq_1_to_5000")
                assert (await conn.execute("SELECT 5")).fetchall() == [(5,)]

    run(main())


def test_aio_cancelled_stream_is_killed_and_the_connection_goes_on(url):
    """A task cancelled while it waits for a streamed answer's next row
    stops the statement (KILL QUERY) and leaves the connection usable."""

    async def main():
        async with staunch.aio.Pool(url + "?max_size=2") as pool:
            conn = await pool.connection()
            cur = conn.cursor(staunch.aio.SSCursor)
            # The first row (200 kB) outgrows the server's network buffer, so it is
            # sent at once; the second comes after a 10 s sleep.
            await cur.execute("SELECT seq, IF(seq = 2, SLEEP(10), REPEAT('x', 200000)) FROM seq_1_to_2")
            assert await cur.fetchone() == (1, "x" * 200000)
            t0 = time.monotonic()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await cur.fetchone()
            assert time.monotonic() - t0 <= 1.5 + SLACK
            async with pool.connection() as other:
                c = await other.execute(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%%SLEEP(10)%%'"
                    " AND ID <> CONNECTION_ID()"
                )
                assert c.fetchall() == [(0,)]
            assert (await conn.execute("SELECT 3")).fetchall() == [(3,)]
            conn.release()

    run(main())


def test_aio_waiting_borrows_reuse_the_loops_eventfds_and_close_them_with_it(url):
    """A waiting borrow signals on an eventfd its loop keeps watched for the
    next one; the loop's end closes them: 20 loops leave no descriptor."""
    import gc
    import os

    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    async def main():
        async with staunch.aio.Pool(url + "?max_size=1") as pool:
            first = await pool.connection()

            async def get():
                return await pool.connection()

            waiters = [asyncio.create_task(get()) for _ in range(3)]
            await asyncio.sleep(0.05)
            assert pool.stats().waiting == 3
            first.release()
            for t in waiters:
                (await t).release()
            assert len(staunch.aio._SIGNALS[asyncio.get_running_loop()].spare) == 3

    run(main())
    gc.collect()
    before = fds()
    for _ in range(20):
        run(main())
    gc.collect()
    assert fds() == before
    assert len(staunch.aio._SIGNALS) == 0


def test_aio_tracer_hears_every_start_and_end_in_the_loops_thread(url):
    """A pool's tracer under asyncio: each borrow's and statement's start
    and end (a text statement, a prepared streamed one read to its end, a
    text one after it), in order, dated in order, heard in the loop's
    thread as each step returns (none kept back, none lost)."""
    seen = []

    def tracer(ev):
        seen.append((ev.kind, ev.statement, ev.time_ns, threading.get_ident()))

    async def main():
        async with staunch.aio.Pool(url + "?max_size=1&interpolate_params=false", tracer=tracer) as pool:
            async with pool.connection() as conn:
                await conn.execute("SELECT 1")
                assert len(seen) == 4
                async with conn.cursor(staunch.aio.SSCursor) as cur:
                    await cur.execute("SELECT seq FROM seq_1_to_3000 WHERE seq > %s", (1000,))
                    assert len(seen) == 5  # started, not ended
                    assert len(await cur.fetchall()) == 2000
                    assert len(seen) == 6
                assert (await conn.execute("SELECT 2")).fetchall() == [(2,)]
        return threading.get_ident()

    loop_thread = run(main())
    kinds = [k for k, _, _, _ in seen]
    assert kinds == ["acquire_start", "acquire_end"] + ["statement_start", "statement_end"] * 3, kinds
    stream = "SELECT seq FROM seq_1_to_3000 WHERE seq > ?"
    assert [s for k, s, _, _ in seen if k == "statement_end"] == ["SELECT 1", stream, "SELECT 2"]
    times = [t for _, _, t, _ in seen]
    assert times == sorted(times), "events dated out of order"
    assert {t for _, _, _, t in seen} == {loop_thread}
