"""The scenarios of CONFORMANCE.md through the Python binding,
each with its id in the test's name, against the test kit's servers."""

from __future__ import annotations

import datetime as dt
import threading
import time
from decimal import Decimal

import pytest

import staunch

from .conftest import url_as

# Generous slack for a 2-core machine shared with other builds.
SLACK = 1.0


def one(conn, sql, args=None):
    cur = conn.cursor()
    cur.execute(sql, args)
    row = cur.fetchone()
    cur.close()
    return row[0]


def test_conf_basic(pool_factory):
    pool = pool_factory()
    with pool.connection() as conn:
        assert one(conn, "SELECT 1") == 1
    assert pool.stats().active == 0
    pool.close()
    pool.close()  # idempotent
    assert pool.closed


def test_conf_types(pool_factory, row_converter):
    pool = pool_factory()
    values = [
        None,
        -(2**63),
        2**63 - 1,
        2**64 - 1,
        0,
        1.5e300,
        -0.1,
        "héllo wörld ✓ 𝄞",
        b"",
        b"a\x00b\xff",
        Decimal("-12345678901234567890.123456789"),
        dt.date(1999, 12, 31),
        dt.datetime(2024, 2, 29, 23, 59, 58, 123456),
        dt.timedelta(hours=-838, minutes=-59, seconds=-59),
        dt.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=500000),
        True,
        '{"a": [1, 2, null]}',
    ]
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute(
            "CREATE TEMPORARY TABLE t_types (id INT PRIMARY KEY, n INT NULL, i BIGINT, i2 BIGINT,"
            " u BIGINT UNSIGNED, z INT, d DOUBLE, d2 DOUBLE, s VARCHAR(100) CHARACTER SET utf8mb4,"
            " e VARBINARY(10), b BLOB, m DECIMAL(40,9), dd DATE, ts DATETIME(6), t1 TIME, t2 TIME(6),"
            " bo BOOL, j JSON)"
        )
        cur.execute(
            "INSERT INTO t_types VALUES (1, " + ", ".join(["%s"] * len(values)) + ")",
            values,
        )
        cur.execute("SELECT n, i, i2, u, z, d, d2, s, e, b, m, dd, ts, t1, t2, bo, j FROM t_types")
        row = cur.fetchone()
        expected = list(values)
        expected[15] = 1  # BOOL is TINYINT(1)
        assert list(row) == expected
        assert type(row[10]) is Decimal and type(row[12]) is dt.datetime and type(row[11]) is dt.date
        assert type(row[13]) is dt.timedelta and type(row[9]) is bytes and type(row[16]) is str
        # Literal values typed by their columns, through the text protocol too.
        cur.execute("SELECT NULL, 18446744073709551615, -9223372036854775808, 'ü', TIME'12:00:01'")
        assert cur.fetchone() == (None, 2**64 - 1, -(2**63), "ü", dt.timedelta(hours=12, seconds=1))
        # Past a TIME's range: refused by the library, not clipped by the
        # server (a prepared 839:00:00 would be stored as 838:59:59).
        with pytest.raises(staunch.DataError, match="839:00:00 is above 838:59:59"):
            cur.execute("SELECT %s", (dt.timedelta(hours=-839),))
        cur.execute("SELECT %s", (dt.timedelta(hours=-838, minutes=-59, seconds=-59),))
        assert cur.fetchone() == (dt.timedelta(hours=-838, minutes=-59, seconds=-59),)


def test_conf_params(pool_factory):
    pool = pool_factory()
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute("CREATE TEMPORARY TABLE t_params (id INT PRIMARY KEY, s TEXT)")
        evil = "'); DROP TABLE t_params; --"
        cur.execute("INSERT INTO t_params VALUES (%s, %s)", (1, evil))
        cur.execute("INSERT INTO t_params VALUES (%(id)s, %(s)s)", {"id": 2, "s": "100%"})
        cur.execute("SELECT s FROM t_params WHERE id = %s", [1])
        assert cur.fetchone() == (evil,)
        cur.execute("SELECT s FROM t_params WHERE s = %s", ("100%%",))  # bound as is
        assert cur.fetchall() == []
        cur.execute("SELECT s FROM t_params WHERE s LIKE '100%%' AND id = %s", (2,))
        assert cur.fetchall() == [("100%",)]
        with pytest.raises(staunch.ProgrammingError, match="2 placeholders but 1 parameter was given"):
            cur.execute("SELECT %s, %s", (1,))
        with pytest.raises(staunch.ProgrammingError, match="1 placeholder but 3 parameters"):
            cur.execute("SELECT %s", (1, 2, 3))
        with pytest.raises(staunch.ProgrammingError, match=r"no value for placeholder %\(nope\)s"):
            cur.execute("SELECT %(nope)s", {"id": 1})
        with pytest.raises(staunch.ParameterTypeError, match="parameter 2: cannot bind a value of type object"):
            cur.execute("SELECT %s, %s", (1, object()))
        with pytest.raises(TypeError):  # the same error is a TypeError too
            cur.execute("SELECT %s", ({1, 2},))
        with pytest.raises(staunch.DataError, match="does not fit in 64 bits"):
            cur.execute("SELECT %s", (2**64,))
        with pytest.raises(staunch.ProgrammingError, match="unsupported format character 'd'"):
            cur.execute("SELECT %d", (1,))
        # Still usable, and the table is still there with its two rows.
        cur.execute("SELECT COUNT(*) FROM t_params")
        assert cur.fetchone() == (2,)


def test_conf_txn(pool_factory):
    pool = pool_factory("max_size=1")
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE IF NOT EXISTS t_txn (id INT PRIMARY KEY) ENGINE=InnoDB")
        cur.execute("DELETE FROM t_txn")
        conn.commit()
        conn.begin()
        cur.execute("INSERT INTO t_txn VALUES (1)")
        conn.rollback()
        conn.begin()
        cur.execute("INSERT INTO t_txn VALUES (2)")
        conn.commit()
        # Implicit transactions too (autocommit is off by default, PEP 249).
        cur.execute("INSERT INTO t_txn VALUES (3)")
        conn.rollback()
        cur.execute("INSERT INTO t_txn VALUES (4)")
        conn.commit()
        cur.execute("SELECT id FROM t_txn ORDER BY id")
        assert cur.fetchall() == [(2,), (4,)]
    # Returned mid-transaction: rolled back before the next borrower.
    conn = pool.connection()
    cur = conn.cursor()
    cur.execute("INSERT INTO t_txn VALUES (5)")
    conn.close()
    with pool.connection() as conn:
        assert one(conn, "SELECT COUNT(*) FROM t_txn WHERE id = 5") == 0
    assert pool.stats().rollbacks_on_return == 1
    # The context manager: rolled back on an exception, committed otherwise.
    with pytest.raises(ZeroDivisionError):
        with pool.connection() as conn:
            conn.cursor().execute("INSERT INTO t_txn VALUES (6)")
            1 / 0  # noqa: B018
    with pool.connection() as conn:
        conn.cursor().execute("INSERT INTO t_txn VALUES (7)")
    with pool.connection() as conn:
        assert one(conn, "SELECT GROUP_CONCAT(id ORDER BY id) FROM t_txn") == "2,4,7"
        conn.cursor().execute("DROP TABLE t_txn")


def _commits_and_rollbacks(admin) -> tuple:
    """The server's Com_commit and Com_rollback (every session's: the
    asking session's own statements are none of them)."""
    cur = admin.cursor()
    cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')")
    got = {name: int(v) for name, v in cur.fetchall()}
    return got["Com_commit"], got["Com_rollback"]


def test_conf_readonly_return(pool_factory):
    """The PEP 249 block (autocommit off) ends a transaction only where the
    server says one is open: nothing for SELECT 1; a COMMIT per block for a
    read of an InnoDB table, which opens one."""
    admin = pool_factory(autocommit=True).connection()
    admin.cursor().execute("CREATE TABLE IF NOT EXISTS t_readonly (v INT) ENGINE=InnoDB")
    admin.cursor().execute("DELETE FROM t_readonly")
    admin.cursor().execute("INSERT INTO t_readonly VALUES (1)")
    pool = pool_factory("max_size=2")
    try:
        for sql, commits in (("SELECT 1", 0), ("SELECT v FROM t_readonly", 200)):
            before = _commits_and_rollbacks(admin)
            for _ in range(200):
                with pool.connection() as conn:
                    cur = conn.cursor()
                    cur.execute(sql)
                    assert cur.fetchall() == [(1,)]
            after = _commits_and_rollbacks(admin)
            assert (after[0] - before[0], after[1] - before[1]) == (commits, 0), sql
    finally:
        admin.cursor().execute("DROP TABLE t_readonly")
        admin.close()


def test_conf_threads(pool_factory):
    pool = pool_factory("max_size=4")
    errors = []

    def worker(w):
        try:
            for i in range(500):
                tag = w * 1000 + i
                with pool.connection(timeout=30) as conn:
                    got = one(conn, "SELECT %s", (tag,))
                    if got != tag:
                        errors.append(f"thread {w}: sent {tag}, got {got}")
        except Exception as e:  # noqa: BLE001
            errors.append(f"thread {w}: {e!r}")

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    s = pool.stats()
    assert s.active == 0 and s.acquired == 8 * 500 and s.total <= 4 and s.violations == 0


def test_conf_timeout_exhausted(pool_factory):
    pool = pool_factory("max_size=1")
    held = pool.connection()
    t0 = time.monotonic()
    with pytest.raises(staunch.PoolExhausted) as ei:
        pool.connection(timeout=0.2)
    took = time.monotonic() - t0
    assert 0.19 <= took <= 0.2 + SLACK
    assert "exhausted" in str(ei.value)
    assert isinstance(ei.value, staunch.PoolTimeout) and isinstance(ei.value, staunch.OperationalError)
    assert ei.value.status_name == "STAUNCH_POOL_EXHAUSTED"
    assert one(held, "SELECT 1") == 1
    held.close()
    assert pool.stats().acquire_timeouts == 1


def test_conf_a1_conf_a2_incident_a(server, proxy_pass):
    """conf_a1: a black hole (accepts TCP, never greets); conf_a2: it starts forwarding."""
    server.cmd("mode blackhole")
    endpoint = f"{server.ready['proxy']['host']}:{server.ready['proxy']['port']}"
    pool = staunch.Pool(server.url_with("connect_timeout=500ms&max_size=2"))
    try:
        t0 = time.monotonic()
        with pytest.raises(staunch.DatabaseUnreachable) as ei:
            pool.connection(timeout=1.5)
        took = time.monotonic() - t0
        msg = str(ei.value)
        assert endpoint in msg and "greeting" in msg, msg
        assert 1.49 <= took <= 1.5 + SLACK
        # No thread stays stuck: every connect ends by its deadline.
        deadline = time.monotonic() + 0.5 + SLACK + 0.2
        while pool.stats().connecting and time.monotonic() < deadline:
            time.sleep(0.02)
        s = pool.stats()
        assert s.connecting == 0 and s.connect_failures >= 1 and s.total == 0
        # conf_a2
        server.cmd("mode pass")
        t0 = time.monotonic()
        with pool.connection(timeout=3.5) as conn:
            took = time.monotonic() - t0
            assert one(conn, "SELECT 1") == 1
        assert took <= 0.5 + 1.0 + SLACK, f"recovery took {took:.2f} s"
        with pool.connection(timeout=2) as a, pool.connection(timeout=2) as b:
            assert one(a, "SELECT 2") == 2 and one(b, "SELECT 3") == 3
    finally:
        pool.close()


def test_conf_server_kill(server, pool_factory):
    pool = pool_factory("max_size=4")
    conns = [pool.connection() for _ in range(4)]
    ids = {c.thread_id() for c in conns}
    for c in conns:
        c.close()
    assert pool.stats().idle == 4
    killed = server.cmd("kill-connections app")["killed"]
    assert killed >= 4
    time.sleep(0.6)  # past alive_bypass_window: a borrow validates the idle connection
    conns = [pool.connection(timeout=5) for _ in range(4)]
    for c in conns:
        assert one(c, "SELECT 7") == 7
        assert c.thread_id() not in ids
        c.close()
    s = pool.stats()
    assert s.validation_failures >= 4 and s.closed_broken >= 4


def test_conf_bad_input(pool_factory, url):
    with pytest.raises(staunch.ConfigError, match="needs a URL"):
        staunch.connect(None)
    with pytest.raises(staunch.ConfigError, match="url must be a str"):
        staunch.Pool(42)
    with pytest.raises(staunch.ConfigError):
        staunch.Pool("postgres://nope@127.0.0.1/x")
    with pytest.raises(staunch.ConfigError, match="max_sise"):
        staunch.Pool(url, max_sise=3)
    with pytest.raises(staunch.ConfigError, match="max_size"):
        staunch.Pool(url, max_size=0)
    with pytest.raises(staunch.ConfigError, match="connect_timeout"):
        staunch.Pool(url + "?connect_timeout=soon")
    with pytest.raises(ValueError):  # ConfigError is a ValueError too
        staunch.Pool(url, max_size=[1])
    pool = pool_factory()
    with pytest.raises(staunch.ConfigError, match="must not be negative"):
        pool.connection(timeout=-1)
    with pytest.raises(staunch.ConfigError, match="seconds"):
        pool.connection(timeout="1s")
    conn = pool.connection()
    cur = conn.cursor()
    conn.close()
    conn.close()  # idempotent
    with pytest.raises(staunch.InterfaceError, match="returned to its pool"):
        cur.execute("SELECT 1")
    with pytest.raises(staunch.InterfaceError):
        conn.cursor()
    with pytest.raises(staunch.InterfaceError):
        conn.commit()
    with pytest.raises(staunch.ProgrammingError, match="must be a str"):
        pool.connection().cursor().execute(None)
    kept = pool.connection()
    pool.close()
    with pytest.raises(staunch.PoolClosed):
        pool.connection()
    with pytest.raises(staunch.PoolClosed):
        pool.stats()
    with pytest.raises(staunch.Error) as ei:
        kept.cursor().execute("SELECT 1")
    assert ei.value.status_name == "STAUNCH_CLOSED"
    kept.close()
    with pytest.raises(staunch.ConnectRejected):
        staunch.Pool(url.replace("app-secret", "wrong"), connect_timeout="1s").connection(timeout=3)
    with pytest.raises(staunch.ConfigError, match="isolation"):
        pool_factory().connection().begin(isolation="SOMETIMES")


def test_conf_stats(pool_factory):
    pool = pool_factory("max_size=2&min_idle=0")

    def expect(total, active, idle, acquired, created, timeouts):
        s = pool.stats()
        got = (s.total, s.active, s.idle, s.acquired, s.created, s.acquire_timeouts)
        assert got == (total, active, idle, acquired, created, timeouts)
        assert s.waiting == 0 and s.violations == 0 and s.connect_failures == 0

    expect(0, 0, 0, 0, 0, 0)
    a = pool.connection()
    expect(1, 1, 0, 1, 1, 0)
    b = pool.connection()
    expect(2, 2, 0, 2, 2, 0)
    a.close()
    expect(2, 1, 1, 2, 2, 0)
    x = pool.try_connection()
    assert x is not None
    expect(2, 2, 0, 3, 2, 0)
    assert pool.try_connection() is None
    expect(2, 2, 0, 3, 2, 0)
    with pytest.raises(staunch.PoolExhausted):
        pool.connection(timeout=0.1)
    expect(2, 2, 0, 3, 2, 1)
    b.begin()
    b.close()  # inside a transaction: rolled back
    x.close()
    expect(2, 0, 2, 3, 2, 1)
    s = pool.stats()
    assert s.rollbacks_on_return == 1 and s.acquire_count == 3 and s.connect_count == 2
    pool.soft_evict()
    deadline = time.monotonic() + 3 + SLACK
    while time.monotonic() < deadline:
        s = pool.stats()
        if s.total == 0 and s.closed_evicted == 2:
            break
        time.sleep(0.01)
    assert s.total == 0 and s.closed_evicted == 2
    with pool.connection():
        expect(1, 1, 0, 4, 3, 1)
    expect(1, 0, 1, 4, 3, 1)
    assert pool.stats().as_dict()["acquired"] == 4


def test_conf_events(server, proxy_pass):
    events = []
    threads = set()
    lock = threading.Lock()

    def on_event(ev):
        with lock:
            events.append(ev)
            threads.add(threading.current_thread().name)

    def kinds():
        with lock:
            return [e.kind for e in events]

    server.cmd("mode blackhole")
    pool = staunch.Pool(server.url_with("connect_timeout=300ms&max_size=1"), on_event=on_event)
    try:
        with pytest.raises(staunch.DatabaseUnreachable):
            pool.connection(timeout=0.8)
        server.cmd("mode pass")
        with pool.connection(timeout=3) as conn:
            assert one(conn, "SELECT 1") == 1
        deadline = time.monotonic() + 2
        while "recovered" not in kinds() and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        pool.close()
    deadline = time.monotonic() + 2
    while "pool_closed" not in kinds() and time.monotonic() < deadline:
        time.sleep(0.01)
    k = kinds()
    assert "connect_failed" in k and "acquire_timeout" in k and "recovered" in k and "connected" in k, k
    assert k.count("pool_closed") == 1
    with lock:
        failed = next(e for e in events if e.kind == "connect_failed")
        recovered = next(e for e in events if e.kind == "recovered")
    port = str(server.ready["proxy"]["port"])
    assert port in failed.message and failed.status == 203 and recovered.count >= 1
    assert threads == {"staunch-events"}


def test_conf_cancel_get(pool_factory):
    pool = pool_factory("max_size=1")
    held = pool.connection()
    token = staunch.CancelToken()
    result = {}

    def waiter():
        t0 = time.monotonic()
        try:
            pool.connection(timeout=10, cancel=token)
            result["error"] = None
        except staunch.Error as e:
            result["error"] = e
        result["took"] = time.monotonic() - t0

    t = threading.Thread(target=waiter)
    t.start()
    deadline = time.monotonic() + 5
    while pool.stats().waiting == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert pool.stats().waiting == 1
    time.sleep(0.1)
    t0 = time.monotonic()
    token.cancel()
    t.join(5)
    after_cancel = time.monotonic() - t0
    assert isinstance(result["error"], staunch.Cancelled), result
    assert after_cancel <= 0.1 + SLACK
    assert token.cancelled
    s = pool.stats()
    assert s.waiting == 0 and s.active == 1 and s.acquires_cancelled == 1
    assert one(held, "SELECT 1") == 1
    held.close()
    with pool.connection(timeout=1) as conn:  # the pool is whole again
        assert one(conn, "SELECT 2") == 2
    token.close()


def test_conf_cancel_statement(pool_factory):
    pool = pool_factory("max_size=2")
    conn = pool.connection()
    other = pool.connection()
    assert conn.cancel() is False  # nothing running: nothing sent
    assert one(conn, "SELECT 1") == 1
    outcome = {}

    def cancel_later():
        time.sleep(0.5)
        outcome["cancelled"] = conn.cancel()

    t = threading.Thread(target=cancel_later)
    t0 = time.monotonic()
    t.start()
    with pytest.raises(staunch.Cancelled):
        conn.cursor().execute("SELECT SLEEP(10)")
    took = time.monotonic() - t0
    t.join()
    assert outcome["cancelled"] is True
    assert took <= 1.0 + SLACK
    assert (
        one(other, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(10)%%'", ()) == 0
    )
    assert not conn.is_broken
    assert one(conn, "SELECT 1") == 1
    assert conn.cancel() is False
    conn.cursor().execute("DO SLEEP(0.3)")
    assert one(conn, "SELECT 3") == 3
    conn.close()
    other.close()


def test_conf_statement_timeout(pool_factory):
    pool = pool_factory()
    with pool.connection() as conn:
        conn.set_timeout(0.3)
        t0 = time.monotonic()
        with pytest.raises(staunch.StatementTimeout) as ei:
            conn.cursor().execute("SELECT SLEEP(5)")
        took = time.monotonic() - t0
        assert took <= 1.0 + SLACK
        assert isinstance(ei.value, staunch.OperationalError)
        assert "time" in str(ei.value).lower()
        assert not conn.is_broken
        assert one(conn, "SELECT 1") == 1


def test_conf_no_crossed_answer(pool_factory):
    pool = pool_factory("query_timeout=300ms&max_size=1")
    conn = pool.connection()
    t0 = time.monotonic()
    with pytest.raises(staunch.StatementTimeout):
        conn.cursor().execute("SET STATEMENT max_statement_time=0 FOR SELECT 111 + SLEEP(3)")
    took = time.monotonic() - t0
    assert 1.2 <= took <= 2.5 + SLACK
    assert conn.is_broken
    time.sleep(2.0)  # the late answer (111) has arrived by now
    with pytest.raises(staunch.BrokenConnection):
        conn.cursor().execute("SELECT 222")
    with pytest.raises(staunch.BrokenConnection):
        conn.ping()
    conn.close()
    with pool.connection() as conn:
        assert not conn.is_broken
        assert one(conn, "SELECT 222") == 222
    s = pool.stats()
    assert s.closed_broken == 1 and s.statements_cut == 1


def test_conf_session_reset(pool_factory):
    pool = pool_factory("max_size=1")
    with pool.connection() as conn:
        tz_default = one(conn, "SELECT @@time_zone")
    with pool.connection() as conn:
        session = conn.thread_id()
        cur = conn.cursor()
        cur.execute("SET @x = 42")
        cur.execute("SET time_zone = '+05:17'")
        assert one(conn, "SELECT @x") == 42
        assert one(conn, "SELECT @@time_zone") == "+05:17"
    with pool.connection() as conn:
        assert conn.thread_id() == session
        assert one(conn, "SELECT @x IS NULL") == 1
        assert one(conn, "SELECT @@time_zone") == tz_default
        assert conn.autocommit is False  # the pool's own setting survives the reset
        # What the server's tracker does not report is undone too: a
        # user-level lock, a variable set inside a SELECT.
        assert one(conn, "SELECT GET_LOCK('conf', 0) + (@y := 7)") == 8
    with pool.connection() as conn:
        assert one(conn, "SELECT IS_USED_LOCK('conf') IS NULL") == 1
        assert one(conn, "SELECT @y IS NULL") == 1


def test_conf_decimal_exact(pool_factory):
    for how in ("interpolate_params=true", "interpolate_params=false"):
        pool = pool_factory(how)
        with pool.connection() as conn:
            cur = conn.cursor()
            cur.execute("CREATE TEMPORARY TABLE t_dec (id INT PRIMARY KEY, bal DECIMAL(30,2))")
            cur.execute("INSERT INTO t_dec VALUES (1, %s)", (Decimal("1234567890123456789.01"),))
            cur.execute("UPDATE t_dec SET bal = bal + %s WHERE id = 1", (Decimal("0.01"),))
            cur.execute("SELECT bal FROM t_dec")
            assert cur.fetchone() == (Decimal("1234567890123456789.02"),), how
            cur.execute("SELECT %s", (Decimal("15.7563"),))
            assert cur.fetchone() == (Decimal("15.7563"),), how
            assert cur.description[0][1] == staunch.FIELD_TYPE.NEWDECIMAL, how


def test_conf_unpreparable(pool_factory):
    pool = pool_factory()  # interpolation: the Python default, as PyMySQL's
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute("CREATE TEMPORARY TABLE t_w (x INT)")
        cur.execute("INSERT INTO t_w VALUES (1), (2), (3)")
        cur.execute(
            "SELECT SUM(x) OVER (ORDER BY x ROWS BETWEEN %s PRECEDING AND %s FOLLOWING) FROM t_w ORDER BY x", (1, 1)
        )
        assert [int(r[0]) for r in cur.fetchall()] == [3, 6, 5]
        cur.execute("WITH c(a,b) AS (VALUES (%s, %s), (%s, %s)) SELECT a, b FROM c", ("a", 2, "b", 3))
        assert cur.fetchall() == [("a", 2), ("b", 3)]


@pytest.mark.parametrize("mode", ["NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"])
@pytest.mark.parametrize("how", ["interpolate_params=true", "interpolate_params=false"])
def test_conf_sql_modes(pool_factory, mode, how):
    pool = pool_factory(how)
    text = 'it\'s \\ "q" ?'
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute(f"SET SESSION sql_mode = '{mode}'")
        # the same literal C:\ written as each mode reads it
        literal = "'C:\\'" if mode == "NO_BACKSLASH_ESCAPES" else "'C:\\\\'"
        cur.execute(f"SELECT {literal}, %s, 'why?', %s", (b"\xff\x00A", text))
        assert cur.fetchone() == ("C:\\", b"\xff\x00A", "why?", text)


def test_conf_frozen_statement(server, own_server, pool_factory):
    """At the defaults: the server frozen 1 s into SELECT SLEEP(3) fails
    within the liveness bound (threshold 5 s + connect_timeout 3 s +
    validation_timeout 1 s) with ServerUnresponsive, an OperationalError;
    the pool serves after the thaw. Meanwhile SELECT SLEEP(25) on a healthy
    server returns its answer."""
    healthy = own_server
    long_result = {}

    def long_statement():
        p = staunch.Pool(healthy.direct_url)
        try:
            with p.connection() as c:
                long_result["v"] = one(c, "SELECT 25 + SLEEP(25)")
        except Exception as e:  # noqa: BLE001 (reported below)
            long_result["e"] = e
        finally:
            p.close()

    t = threading.Thread(target=long_statement)
    t.start()
    try:
        pool = pool_factory()
        conn = pool.connection()
        threading.Timer(1.0, lambda: server.cmd("freeze")).start()
        t0 = time.monotonic()
        try:
            with pytest.raises(staunch.ServerUnresponsive) as ei:
                conn.cursor().execute("SELECT SLEEP(3)")
            after_freeze = time.monotonic() - t0 - 1.0
        finally:
            server.cmd("thaw")
        assert isinstance(ei.value, staunch.OperationalError)
        assert "the server stopped answering during this statement" in str(ei.value)
        assert after_freeze <= 9.0 + SLACK + 0.5
        assert conn.is_broken
        conn.close()
        with pool.connection() as c:
            assert one(c, "SELECT 1") == 1
    finally:
        t.join()
    assert long_result.get("v") == 25, long_result


# --- conf_least_privilege (issue 49) ----------------------------------------------------
#
# The pool over a primary + replica and over a 3-node Galera cluster as the
# test kit's `least` user (ALL ON staunch_test.* and nothing global: no SLAVE
# MONITOR), no monitor_user. Bounds as tests/topology.rs and tests/galera.rs:
# 1.5 s of slack on 2 loaded cores; the first write after a promotion within
# 1 s; Galera: the end of its own stall (evs.suspect_timeout, 5 s, and the
# view change; measured by a single-host pool writing straight to a survivor)
# + one probe (1 s).

LP_SLACK = 1.5
LP_FOLLOW = 1.0
LP_DETECT = 1.0


class _Writer:
    """Writes through the pool's writer path (`connection()`) in a thread of
    its own, each attempt recorded as (start, end, port that took it or
    None)."""

    def __init__(self, pool):
        self.pool = pool
        self.log = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="lp-writer", daemon=True)
        self.thread.start()

    def _run(self):
        seq = 0
        while not self.stopping.is_set():
            seq += 1
            start, port = time.monotonic(), None
            try:
                with self.pool.connection(timeout=1) as conn:
                    cur = conn.cursor()
                    cur.execute("INSERT INTO lp (v) VALUES (%s)", (seq,))
                    cur.execute("SELECT @@port")
                    port = cur.fetchone()[0]
            except staunch.Error:
                port = None
            with self.lock:
                self.log.append((start, time.monotonic(), port))
            time.sleep(0.01)

    def first_elsewhere(self, since, not_port):
        """The end of the first write started at `since` or later and taken by
        a node other than `not_port` (None if none yet)."""
        with self.lock:
            ends = [e for s, e, p in self.log if s >= since and p is not None and p != not_port]
        return min(ends, default=None)

    def stall(self, since):
        """The longest write ending after `since` and starting within 20 s
        of it, and its end."""
        with self.lock:
            spans = [(e - s, e) for s, e, _ in self.log if e >= since and s <= since + 20]
        return max(spans)

    def failed_since(self, since):
        with self.lock:
            return sum(1 for _, e, p in self.log if e >= since and p is None)

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def _wait(what, timeout, cond):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.02)


def _least_pool(url):
    """A pool as `least`, and the events it sends (Event objects)."""
    events = []
    lock = threading.Lock()

    def on_event(ev):
        with lock:
            events.append(ev)

    def told():
        with lock:
            return [e for e in events if "SLAVE MONITOR" in e.message]

    def everything():
        with lock:
            return list(events)

    return staunch.Pool(url, on_event=on_event), told, everything


def _writes_and_reads_flow(pool):
    """A row written through the writer path is read back through the read
    path (`connection_read()`) within 10 s; returns the port the read came
    from."""
    with pool.connection(timeout=10) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE IF NOT EXISTS lp (id BIGINT AUTO_INCREMENT PRIMARY KEY, v BIGINT)")
        cur.execute("INSERT INTO lp (v) VALUES (-1)")
    seen = []

    def read_back():
        with pool.connection_read(timeout=5) as conn:
            seen[:] = [one(conn, "SELECT @@port"), one(conn, "SELECT COUNT(*) FROM lp WHERE v = -1")]
        return seen[1] >= 1

    _wait("the row read back through the read path", 10 + LP_SLACK, read_back)
    return seen[0]


def _check_told_once(told, everything):
    ev = told()
    print("EVENT", ev[0].message if ev else None)
    assert len(ev) == 1, ev
    assert ev[0].kind == "other"
    for word in (
        "user 'least'@'",
        "SHOW SLAVE STATUS",
        "SLAVE MONITOR",
        "GRANT SLAVE MONITOR ON *.* TO 'least'@'",
        "monitor_user=",
    ):
        assert word in ev[0].message, word
    assert not [e for e in everything() if "least-secret" in e.message or "least-secret" in repr(e)]


def test_conf_least_privilege_replication(topology1):
    """Writes and reads flow as `least`; the missing SLAVE MONITOR is told
    once; `kill 0`, `promote 1` 1.5 s later: the first write on the promoted
    replica within 1 s + slack, none on the killed primary."""
    tk = topology1
    primary = tk.ready["servers"][0]["port"]
    replica = tk.ready["servers"][1]["port"]
    pool, told, everything = _least_pool(url_as(tk.ready["topology_url"], tk.ready["users"]["least"]))
    try:
        # Without SLAVE MONITOR replication lag is unknown: under the default
        # max_replication_lag reads come from the writer (read_fallback), as
        # the event says.
        read_port = _writes_and_reads_flow(pool)
        assert read_port in (primary, replica)
        _wait("the missing privilege told", 10 + LP_SLACK, lambda: told())
        w = _Writer(pool)
        try:
            _wait("writes flowing", 10, lambda: w.first_elsewhere(0, None) is not None)
            faulted = time.monotonic()
            tk.cmd("kill 0")
            time.sleep(max(0.0, 1.5 - (time.monotonic() - faulted)))
            tk.cmd("promote 1")
            promoted = time.monotonic()
            _wait("a write on the promoted replica", 15, lambda: w.first_elsewhere(promoted, primary) is not None)
            time.sleep(0.5)  # still told once, however many probes ran since
        finally:
            w.stop()
        first = w.first_elsewhere(promoted, primary) - promoted
        with pool.connection_read(timeout=5) as conn:
            assert one(conn, "SELECT COUNT(*) FROM lp WHERE v = -1") == 1
    finally:
        pool.close()
    print(
        f"TIMELINE Python least privilege, replication: reads from port {read_port}; kill 0 at 0, "
        f"promote 1 at {promoted - faulted:.3f} s; first write on the promoted replica "
        f"{first:.3f} s after the promotion; failed writes from the kill on: {w.failed_since(faulted)}"
    )
    _check_told_once(told, everything)
    assert first <= LP_FOLLOW + LP_SLACK, first
    assert not [r for r in w.log if r[0] >= faulted and r[2] == primary]


def test_conf_least_privilege_galera(galera):
    """Writes and reads flow as `least` over the cluster's multi-host URL;
    the missing SLAVE MONITOR is told once; the node the writer path answers
    from killed: the first write on a survivor within the end of Galera's
    stall (a single-host pool on a survivor measures it) + one probe +
    slack."""
    tk = galera
    url = tk.ready["url"]
    assert "," in url
    ports = [s["port"] for s in tk.ready["servers"]]
    pool, told, everything = _least_pool(url_as(url, tk.ready["users"]["least"]))
    try:
        _writes_and_reads_flow(pool)
        _wait("the missing privilege told", 10 + LP_SLACK, lambda: told())
        w = _Writer(pool)
        try:
            _wait("writes flowing", 10, lambda: w.first_elsewhere(0, None) is not None)
            with pool.connection(timeout=5) as conn:
                writer_port = one(conn, "SELECT @@port")
            node = ports.index(writer_port)
            survivor = tk.ready["servers"][(node + 1) % 3]
            direct_pool = staunch.Pool(url_as(survivor["url"], tk.ready["users"]["least"]))
            direct = _Writer(direct_pool)
            try:
                _wait("direct writes flowing", 10, lambda: direct.first_elsewhere(0, None) is not None)
                killed = time.monotonic()
                tk.cmd(f"kill {node}")
                _wait("a write on a survivor", 30, lambda: w.first_elsewhere(killed, writer_port) is not None)
                time.sleep(0.5)
            finally:
                direct.stop()
                direct_pool.close()
        finally:
            w.stop()
        first = w.first_elsewhere(killed, writer_port) - killed
        stall, stall_end = direct.stall(killed)
        stall_end -= killed
        with pool.connection(timeout=5) as conn:
            assert one(conn, "SELECT @@port") != writer_port
        with pool.connection_read(timeout=5) as conn:
            assert one(conn, "SELECT @@port") != writer_port
            assert one(conn, "SELECT COUNT(*) FROM lp WHERE v = -1") == 1
    finally:
        pool.close()
    print(
        f"TIMELINE Python least privilege, Galera: writer node {node} (port {writer_port}) killed at 0; "
        f"Galera's stall {stall:.3f} s ending at {stall_end:.3f} s; first write on a survivor at {first:.3f} s "
        f"({first - stall_end:.3f} s after the stall); failed writes from the kill on: {w.failed_since(killed)}"
    )
    _check_told_once(told, everything)
    assert first <= stall_end + LP_DETECT + LP_SLACK, (first, stall_end)


def test_conf_auth_plugins(own_server):
    """Users of mysql_native_password and ed25519 connect; a user of a plugin
    staunch does not speak (PAM asks for "dialog") gets ConnectRejected naming
    the plugin at once, not "unreachable" at the acquire timeout."""
    tk = own_server
    tk.sql("INSTALL PLUGIN IF NOT EXISTS ed25519 SONAME 'auth_ed25519'")
    tk.sql("INSTALL PLUGIN IF NOT EXISTS pam SONAME 'auth_pam'")
    tk.sql("CREATE USER native@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('n-secret')")
    tk.sql("CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-secret')")
    tk.sql("CREATE USER pamuser@'%' IDENTIFIED VIA pam")
    tk.sql("GRANT ALL ON staunch_test.* TO native@'%', ed@'%', pamuser@'%'")
    port = tk.server["port"]
    for user, password in [("native", "n-secret"), ("ed", "e-secret")]:
        with staunch.Pool(f"mysql://{user}:{password}@127.0.0.1:{port}/staunch_test?min_idle=0") as pool:
            with pool.connection() as conn:
                assert one(conn, "SELECT CURRENT_USER()") == f"{user}@%"
    pam = f"mysql://pamuser:p-secret@127.0.0.1:{port}/staunch_test?min_idle=0&connection_timeout=20s"
    with staunch.Pool(pam) as pool:
        t0 = time.monotonic()
        with pytest.raises(staunch.ConnectRejected) as e:
            pool.connection()
        waited = time.monotonic() - t0
    assert '"dialog"' in str(e.value)
    assert "p-secret" not in str(e.value)
    assert waited < 5 + SLACK, f"the refusal took {waited:.1f} s: {e.value}"


def test_conf_auth_plugins_caching_sha2():
    """The test kit's second server (Vitess's go/mysql, a MySQL 8 greeting):
    its caching_sha2_password user connects over TLS and answers."""
    from .conftest import Testkit

    tk = Testkit("mysql8", "--tls")
    try:
        with staunch.Pool(tk.url) as pool:
            with pool.connection() as conn:
                assert one(conn, "SELECT CURRENT_USER()") == "sha2@%"
    finally:
        tk.close()


def _with_tls_ca(url: str, ca: str) -> str:
    """`url` with its `tls_ca` (the test kit's last parameter) naming `ca`."""
    head, sep, tail = url.partition("tls_ca=")
    assert sep and "&" not in tail, url
    return f"{head}tls_ca={ca}"


def test_conf_tls_exact():
    """A server presenting a self-signed CA:TRUE certificate, pinned by
    tls_mode=verify_ca&tls_ca=<that certificate>: connects, answers, and the
    session is encrypted. The same URL with tls_ca naming an unrelated CA is
    refused at once (ConnectRejected, well within connection_timeout) with a
    message naming tls_ca: under verify_ca only the given CA is trusted."""
    from .conftest import Testkit

    tk = Testkit("server", "--tls-self-signed")
    try:
        assert "tls_mode=verify_ca" in tk.url, tk.url
        with staunch.Pool(tk.url) as pool:
            with pool.connection() as conn:
                assert one(conn, "SELECT 1") == 1
                cur = conn.cursor()
                cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
                (name, cipher) = cur.fetchone()
                cur.close()
                assert name == "Ssl_cipher" and cipher, f"Ssl_cipher is {cipher!r}: not encrypted"
        bad = _with_tls_ca(tk.url, tk.ready["tls"]["other_ca"]) + "&connection_timeout=5s&min_idle=0"
        with staunch.Pool(bad) as pool:
            t0 = time.monotonic()
            with pytest.raises(staunch.ConnectRejected) as e:
                pool.connection()
            took = time.monotonic() - t0
        message = str(e.value)
        assert "tls_ca" in message, message
        assert "app-secret" not in message, message
        assert took < 3 + SLACK, f"the refusal took {took:.1f} s: {message}"
    finally:
        tk.close()
