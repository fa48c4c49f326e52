"""PEP 249 surface: globals, errors with MySQL numbers, cursors, result sets."""

from __future__ import annotations

import datetime as dt
import gc
import threading
import time
from decimal import Decimal

import pytest

import staunch


def test_module_globals():
    assert staunch.apilevel == "2.0"
    assert staunch.threadsafety == 2
    assert staunch.paramstyle == "format"
    for name in (
        "Warning Error InterfaceError DatabaseError DataError OperationalError IntegrityError "
        "InternalError ProgrammingError NotSupportedError"
    ).split():
        assert issubclass(getattr(staunch, name), Exception)
    assert issubclass(staunch.IntegrityError, staunch.DatabaseError)
    assert issubclass(staunch.DatabaseError, staunch.Error)
    assert issubclass(staunch.PoolExhausted, staunch.OperationalError)
    assert issubclass(staunch.DatabaseUnreachable, staunch.OperationalError)
    assert issubclass(staunch.StatementTimeout, staunch.OperationalError)
    assert staunch.NUMBER == staunch.FIELD_TYPE.LONGLONG and staunch.STRING != staunch.FIELD_TYPE.LONG


@pytest.fixture
def conn(pool_factory):
    pool = pool_factory()
    c = pool.connection()
    yield c
    c.close()


@pytest.mark.parametrize(
    "setup, sql, cls, errno",
    [
        ("CREATE TEMPORARY TABLE e1 (id INT PRIMARY KEY)", "INSERT INTO e1 VALUES (1), (1)", "IntegrityError", 1062),
        ("CREATE TEMPORARY TABLE e2 (id INT NOT NULL)", "INSERT INTO e2 VALUES (NULL)", "IntegrityError", 1048),
        (None, "SELEC 1", "ProgrammingError", 1064),
        (None, "SELECT * FROM no_such_table", "ProgrammingError", 1146),
        (None, "SELECT no_such_column", "ProgrammingError", 1054),
        ("CREATE TEMPORARY TABLE e3 (n TINYINT)", "INSERT INTO e3 VALUES (1000)", "DataError", 1264),
        ("CREATE TEMPORARY TABLE e4 (s VARCHAR(3))", "INSERT INTO e4 VALUES ('abcd')", "DataError", 1406),
        # Numbers the library's table does not name: the SQLSTATE's class
        # decides, then PyMySQL's rule (below 1000 internal, else operational).
        (None, "SIGNAL SQLSTATE '23001' SET MYSQL_ERRNO = 30001", "IntegrityError", 30001),
        (None, "SIGNAL SQLSTATE '0A001' SET MYSQL_ERRNO = 30002", "NotSupportedError", 30002),
        (None, "SIGNAL SQLSTATE '45000'", "OperationalError", 1644),
        (None, "SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 999", "InternalError", 999),
    ],
)
def test_error_mapping(conn, setup, sql, cls, errno):
    """Each server error lands in the class of the library's category for it
    (staunch_error_category): one table for every face."""
    cur = conn.cursor()
    cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
    if setup:
        cur.execute(setup)
    with pytest.raises(getattr(staunch, cls)) as ei:
        cur.execute(sql)
    e = ei.value
    assert e.args[0] == errno and e.errno == errno
    assert len(e.sqlstate) == 5 and e.status_name == "STAUNCH_SERVER_ERROR"
    cur.execute("SELECT 1")  # the connection stays usable
    assert cur.fetchone() == (1,)


def test_deadlock_is_a_conflict(pool_factory):
    """Two connections take the same two row locks in opposite orders: the
    server rolls one back with 1213, which is ConflictError (an
    OperationalError, as PyMySQL raises), as a Galera certification failure
    is; that connection stays usable."""
    pool = pool_factory("max_size=2")
    a, b = pool.connection(), pool.connection()
    try:
        ca, cb = a.cursor(), b.cursor()
        ca.execute("CREATE TABLE IF NOT EXISTS py_dl (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB")
        ca.execute("DELETE FROM py_dl")
        ca.execute("INSERT INTO py_dl VALUES (1, 0), (2, 0)")
        a.commit()
        ca.execute("UPDATE py_dl SET v = 1 WHERE id = 1")
        cb.execute("UPDATE py_dl SET v = 2 WHERE id = 2")
        got = {}

        def wait_for_row_1():
            try:
                cb.execute("UPDATE py_dl SET v = 2 WHERE id = 1")
            except staunch.Error as e:
                got["b"] = e

        t = threading.Thread(target=wait_for_row_1)
        t.start()
        time.sleep(0.3)
        try:
            ca.execute("UPDATE py_dl SET v = 1 WHERE id = 2")
            a.commit()  # b lost: its rollback freed row 1
        except staunch.Error as e:
            got["a"] = e
        t.join(30)
        assert not t.is_alive()
        assert len(got) == 1, got
        (e,) = got.values()
        assert isinstance(e, staunch.ConflictError), repr(e)
        assert isinstance(e, staunch.OperationalError)
        assert e.args[0] == e.errno == 1213
        assert e.sqlstate == "40001" and e.status_name == "STAUNCH_CONFLICT"
        if "a" in got:
            b.commit()
        for c in (ca, cb):  # both sessions stay usable
            c.execute("SELECT 7")
            assert c.fetchone() == (7,)
    finally:
        a.rollback()
        b.rollback()
        a.cursor().execute("DROP TABLE IF EXISTS py_dl")
        a.close()
        b.close()


def test_foreign_key_errors(conn):
    cur = conn.cursor()
    cur.execute("CREATE TABLE IF NOT EXISTS fk_p (id INT PRIMARY KEY) ENGINE=InnoDB")
    cur.execute("CREATE TABLE IF NOT EXISTS fk_c (p INT, FOREIGN KEY (p) REFERENCES fk_p(id)) ENGINE=InnoDB")
    try:
        with pytest.raises(staunch.IntegrityError) as ei:
            cur.execute("INSERT INTO fk_c VALUES (%s)", (9,))
        assert ei.value.args[0] == 1452
        cur.execute("INSERT INTO fk_p VALUES (1)")
        cur.execute("INSERT INTO fk_c VALUES (1)")
        with pytest.raises(staunch.IntegrityError) as ei:
            cur.execute("DELETE FROM fk_p")
        assert ei.value.args[0] == 1451
    finally:
        conn.rollback()
        cur.execute("DROP TABLE fk_c")
        cur.execute("DROP TABLE fk_p")


def test_lastrowid_outlives_the_result_it_came_from(conn):
    # It is read from the result set when first asked: closing the cursor,
    # or moving past its last result set, must keep it.
    cur = conn.cursor()
    try:
        cur.execute("CREATE TEMPORARY TABLE li (id INT PRIMARY KEY AUTO_INCREMENT, s INT)")
        cur.execute("INSERT INTO li (s) VALUES (1), (2), (3)")
        cur.execute("INSERT INTO li (s) VALUES (4)")
        cur.close()
        assert cur.lastrowid == 4
        cur = conn.cursor()
        cur.execute("INSERT INTO li (s) VALUES (5)")
        assert cur.nextset() is None
        assert cur.lastrowid == 5
        cur.execute("INSERT INTO li (s) VALUES (6), (7)")
        assert cur.lastrowid == 6  # the first id of a multi-row INSERT
    finally:
        conn.cursor().execute("DROP TEMPORARY TABLE IF EXISTS li")


def test_cursor_description_rowcount_lastrowid(conn):
    cur = conn.cursor()
    cur.execute(
        "CREATE TEMPORARY TABLE d (id INT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(20) NOT NULL, m DECIMAL(8,3), b BLOB)"
    )
    assert cur.description is None
    assert cur.execute("INSERT INTO d (s) VALUES (%s), (%s)", ("a", "b")) == 2
    assert cur.lastrowid == 1
    cur.executemany("INSERT INTO d (s, m) VALUES (%(s)s, %(m)s)", [{"s": "c", "m": 1}, {"s": "d", "m": None}])
    assert cur.rowcount == 2 and cur.lastrowid == 4
    assert cur.execute("SELECT id, s, m, b FROM d ORDER BY id") == 4
    names = [d[0] for d in cur.description]
    codes = [d[1] for d in cur.description]
    assert names == ["id", "s", "m", "b"]
    assert codes == [staunch.FIELD_TYPE.LONG, staunch.FIELD_TYPE.VAR_STRING, staunch.FIELD_TYPE.NEWDECIMAL, 252]
    assert cur.description[1][6] is False and cur.description[2][6] is True
    assert cur.description[2][5] == 3
    assert codes[0] == staunch.NUMBER and codes[1] == staunch.STRING and codes[3] == staunch.BINARY
    assert cur.fetchone() == (1, "a", None, None)
    cur.arraysize = 2
    assert [r[0] for r in cur.fetchmany()] == [2, 3]
    assert [r[0] for r in cur] == [4]
    assert cur.fetchone() is None and cur.fetchall() == []
    cur.execute("UPDATE d SET s = s WHERE id = 1")
    assert cur.rowcount == 0  # no found_rows: changed rows
    d = conn.cursor(staunch.DictCursor)
    d.execute("SELECT id, s FROM d WHERE id = %s", (2,))
    assert d.fetchall() == [{"id": 2, "s": "b"}]


def test_found_rows_knob(pool_factory):
    pool = pool_factory("found_rows=true")
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute("CREATE TEMPORARY TABLE fr (id INT, v INT)")
        cur.execute("INSERT INTO fr VALUES (1, 1), (2, 1)")
        assert cur.execute("UPDATE fr SET v = 1") == 2  # matched, not changed


def test_callproc_and_nextset(conn):
    cur = conn.cursor()
    cur.execute("DROP PROCEDURE IF EXISTS two_sets")
    cur.execute("CREATE PROCEDURE two_sets(IN n INT) BEGIN SELECT n; SELECT n + 1, 'x'; END")
    try:
        assert cur.callproc("two_sets", (41,)) == (41,)
        assert cur.fetchall() == [(41,)]
        assert cur.nextset() is True
        assert cur.fetchall() == [(42, "x")]
        while cur.nextset():
            assert cur.description is None
        assert cur.nextset() is None
        with pytest.raises(staunch.ProgrammingError):
            cur.callproc("x; DROP TABLE y")
    finally:
        cur.execute("DROP PROCEDURE two_sets")


@pytest.mark.parametrize("cls", [staunch.Cursor, staunch.SSCursor, staunch.DictCursor])
def test_fetch_after_nextset_gives_no_rows_where_the_statement_gave_none(conn, cls):
    # The status that ends a CALL is a set without columns: once nextset()
    # is on it (or past the last set), fetch* give no rows, as mysqlclient
    # and PyMySQL (and mysqlclient's dbapi20 test_nextset) expect. Right
    # after a statement that made no result set they still raise (PEP 249).
    setup = conn.cursor()
    setup.execute("DROP PROCEDURE IF EXISTS one_set")
    setup.execute("CREATE PROCEDURE one_set() SELECT 7 AS n")
    try:
        cur = conn.cursor(cls)
        cur.callproc("one_set")
        assert cur.fetchall() in ([(7,)], [{"n": 7}])
        assert cur.nextset() is True and cur.description is None
        assert cur.fetchone() is None
        assert cur.fetchmany(3) == []
        assert cur.fetchall() == []
        assert list(cur) == []
        assert cur.nextset() is None
        assert cur.fetchone() is None and cur.fetchmany() == [] and cur.fetchall() == []
        # The next statement starts afresh: no result set is an error again.
        cur.execute("DO 1")
        for fetch in (cur.fetchone, cur.fetchmany, cur.fetchall):
            with pytest.raises(staunch.ProgrammingError, match="returned no rows"):
                fetch()
        cur.close()
        with pytest.raises(staunch.ProgrammingError, match="execute a query first"):
            conn.cursor(cls).fetchall()
    finally:
        setup.execute("DROP PROCEDURE one_set")


def test_executed_is_the_statement_with_its_values_written_in(conn):
    # PyMySQL keeps the statement as sent in cursor._executed (a str); staunch
    # binds the values, so it writes them in as literals when asked, and the
    # text runs as the statement did.
    cur = conn.cursor()
    assert cur._executed is None
    values = ("it's", "C:\\x", 'a"b %s ?', "ü🍵", b"\x00\xff", 12, True, None, Decimal("-1.50"), 2.5)
    cur.execute("SELECT " + ", ".join(["%s"] * len(values)) + ", '100%%', '?'", values)
    sent = cur._executed
    assert sent == (
        "SELECT 'it''s', _utf8mb4 X'433a5c78', 'a\"b %s ?', 'ü🍵', X'00ff', 12, 1, NULL, -1.50, 2.5, '100%', '?'"
    )
    expected = cur.fetchall()
    assert expected == [(*values[:6], 1, None, Decimal("-1.50"), 2.5, "100%", "?")]
    cur.execute(sent)
    assert cur.fetchall() == expected and cur._executed == sent
    args = {"id": 5, "when": dt.datetime(2024, 2, 29, 1, 2, 3, 4), "d": dt.date(2024, 2, 29)}
    cur.execute("SELECT %(id)s, %(when)s, %(d)s, %(id)s + 1", args)
    assert cur._executed == "SELECT 5, '2024-02-29 01:02:03.000004', '2024-02-29', 5 + 1"
    args["id"] = 6  # what was sent stays what it was
    assert cur._executed.startswith("SELECT 5,")
    cur.execute("SELECT '100%%'", ())
    assert cur._executed == "SELECT '100%'" and cur.fetchall() == [("100%",)]
    cur.execute("SELECT 1")
    assert cur._executed == "SELECT 1"


def test_server_side_cursor_streams(pool_factory):
    pool = pool_factory("max_size=1")
    with pool.connection() as conn:
        cur = conn.cursor(staunch.SSCursor)
        cur.execute("SELECT seq, CONCAT('row', seq) FROM seq_1_to_100000")
        assert cur.rowcount == -1
        assert cur.fetchone() == (1, "row1")
        assert len(cur.fetchmany(999)) == 999
        with pytest.raises(staunch.InterfaceError):  # busy until the set is read
            conn.cursor().execute("SELECT 1")
        rest = cur.fetchall()
        assert len(rest) == 99000 and rest[-1] == (100000, "row100000")
        assert cur.rowcount == 100000
        cur.close()
        other = conn.cursor()
        other.execute("SELECT 2")
        assert other.fetchone() == (2,)
        # Closing a half-read streaming cursor gives the connection back.
        cur = conn.cursor(staunch.SSCursor)
        cur.execute("SELECT seq FROM seq_1_to_100000")
        cur.fetchmany(10)
        cur.close()
        other.execute("SELECT 3")
        assert other.fetchone() == (3,)


def test_implicit_transaction_of_a_select_ends_before_the_next_borrower(pool_factory):
    pool = pool_factory("max_size=1")
    with pool.connection() as conn:
        conn.cursor().execute("CREATE TABLE IF NOT EXISTS it (v INT) ENGINE=InnoDB")
        conn.commit()
    for sql, args in [("INSERT INTO it VALUES (%s) RETURNING v", (1,)), ("SELECT * FROM it", None)]:
        conn = pool.connection()
        cur = conn.cursor()
        cur.execute(sql, args)
        cur.execute("SELECT @@in_transaction")
        assert cur.fetchone() == (1,)
        conn.close()
        with pool.connection() as conn:
            cur = conn.cursor()
            cur.execute("SELECT @@in_transaction")
            assert cur.fetchone() == (0,)
            cur.execute("SELECT COUNT(*) FROM it")
            assert cur.fetchone() == (0,)
    with pool.connection() as conn:
        conn.cursor().execute("DROP TABLE it")


def test_autocommit_and_begin(pool_factory):
    pool = pool_factory()
    with pool.connection() as conn:
        assert conn.autocommit is False
        conn.autocommit = True
        assert conn.autocommit is True and conn.get_autocommit() is True
        conn.begin(isolation="read committed", read_only=True)
        cur = conn.cursor()
        cur.execute("SELECT @@in_transaction")
        assert cur.fetchone() == (1,)
        conn.rollback()
    with pool.connection() as conn:  # the session was reset
        assert conn.autocommit is False
    auto = pool_factory(autocommit=True)
    with auto.connection() as conn:
        assert conn.autocommit is True


def test_init_sql_of_the_url_or_a_keyword_is_kept_with_autocommit_off(pool_factory):
    # autocommit=False (PEP 249's default) once replaced the URL's init_sql
    # with its own SET autocommit=0: both hold now, after a reset too.
    for pool in (
        pool_factory("init_sql=SET time_zone='%2B03:00'"),
        pool_factory(init_sql="SET time_zone='+03:00'"),
    ):
        for _ in range(2):
            with pool.connection() as conn:
                cur = conn.cursor()
                cur.execute("SELECT @@session.time_zone, @@session.autocommit")
                assert cur.fetchone() == ("+03:00", 0)
                assert conn.autocommit is False
                cur.execute("SET @dirty = 1")  # the return resets the session


def test_the_end_of_a_block_sends_commit_only_when_the_server_says_a_transaction_is_open(pool_factory):
    # Com_commit counts the COMMIT statements the session ran.
    def commits(cur) -> int:
        cur.execute("SHOW SESSION STATUS LIKE 'Com_commit'")
        return int(cur.fetchone()[1])

    pool = pool_factory("max_size=1")
    with pool.connection() as conn:
        conn.cursor().execute("CREATE TABLE IF NOT EXISTS ec (v INT) ENGINE=InnoDB")
    with pool.connection() as conn:
        cur = conn.cursor()
        c0 = commits(cur)
        conn.commit()  # the SHOW opened no transaction (the server's status flags): nothing sent
        conn.rollback()
        assert commits(cur) == c0
        cur.execute("SELECT v FROM ec")  # a read of an InnoDB table under autocommit=0 opens one
        conn.commit()
        conn.commit()  # nothing ran since: nothing sent
        assert commits(cur) == c0 + 1
        cur.execute("INSERT INTO ec VALUES (%s)", (1,))  # DML: COMMIT, and it holds
        conn.commit()
        assert commits(cur) == c0 + 2
        cur.execute("SELECT v FROM ec")  # a transaction open again
        conn.autocommit = True  # set through the property; the server commits, and the core knows
        c1 = commits(cur)
        conn.commit()  # nothing open: nothing sent
        conn.commit()  # under autocommit=1 a statement leaves no transaction: nothing sent
        cur.execute("INSERT INTO ec VALUES (%s)", (2,))
        conn.commit()
        assert commits(cur) == c1
        conn.autocommit = False
        cur.execute("INSERT INTO ec VALUES (%s)", (3,))
        conn.rollback()
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute("SELECT v FROM ec ORDER BY v")
        assert cur.fetchall() == [(1,), (2,)]
        cur.execute("DROP TABLE ec")


def test_connection_read_on_a_single_server_uses_it(pool_factory):
    pool = pool_factory()
    with pool.connection_read(timeout=5) as conn:
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


def test_connect_uses_a_shared_pool_per_url(url):
    a = staunch.connect(url, max_size=2)
    b = staunch.connect(url, max_size=2)
    pool = staunch.shared_pool(url, max_size=2)
    assert pool.stats().active == 2
    a.close()
    b.close()
    assert pool.stats().active == 0 and pool.stats().idle == 2


def test_pool_close_is_idempotent_context_manager_and_finalizer(url):
    with staunch.Pool(url) as pool:
        with pool.connection() as conn:
            conn.ping()
    assert pool.closed
    pool.close()
    # A pool dropped without close(): its finalizer frees it without blocking.
    p = staunch.Pool(url)
    p.connection().close()
    del p
    gc.collect()
    # A connection dropped without close(): discarded, never handed out half-used.
    p = staunch.Pool(url, max_size=1)
    c = p.connection()
    c.cursor().execute("SET @leak = 1")
    del c
    gc.collect()
    with p.connection(timeout=2) as c2:
        cur = c2.cursor()
        cur.execute("SELECT @leak")
        assert cur.fetchone() == (None,)
    p.close()


def test_a_checkout_leaves_no_reference_cycle_for_the_gc(pool_factory):
    """A borrow, a statement (each cursor kind), a transaction and the
    return free everything by reference counting: nothing is left for the
    cyclic GC, whose collections a busy pool would otherwise set off (a
    ctypes.cast of the handle once left two objects a borrow)."""
    pool = pool_factory(max_size=2)

    def checkout(cls):
        with pool.connection() as conn:
            cur = conn.cursor(cls)
            cur.execute("SELECT %s AS a, %s AS b", (1, "x"))
            cur.fetchall()
            cur.close()
            conn.begin()
            conn.cursor().execute("SELECT 1")
            conn.commit()

    for cls in (staunch.Cursor, staunch.DictCursor, staunch.SSCursor):
        for _ in range(5):
            checkout(cls)
        gc.collect()
        gc.disable()
        try:
            for _ in range(100):
                checkout(cls)
            left = gc.collect()
        finally:
            gc.enable()
        assert left < 50, (cls.__name__, left)


def test_many_threads_share_one_pool_with_transactions(pool_factory):
    pool = pool_factory("max_size=3")
    with pool.connection() as conn:
        conn.cursor().execute("CREATE TABLE IF NOT EXISTS mt (w INT, i INT) ENGINE=InnoDB")
        conn.cursor().execute("DELETE FROM mt")
    errors = []

    def worker(w):
        try:
            for i in range(40):
                with pool.connection(timeout=20) as conn:
                    cur = conn.cursor()
                    cur.execute("INSERT INTO mt VALUES (%s, %s)", (w, i))
                    if i % 2:
                        conn.rollback()
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute("SELECT COUNT(*), SUM(i % 2) FROM mt")
        assert cur.fetchone() == (6 * 20, 0)
        cur.execute("DROP TABLE mt")


@pytest.mark.parametrize("prepare_selects", [True, False])
def test_plain_selects_by_either_protocol(pool_factory, prepare_selects):
    pool = pool_factory(prepare_selects=prepare_selects)
    with pool.connection() as conn:
        cur = conn.cursor()
        cur.execute(
            "SELECT NULL, -9223372036854775808, 18446744073709551615, 2.5e-3, CAST(-1.50 AS DECIMAL(6,2)),"
            " 'ü', x'00ff', DATE '2024-02-29', TIMESTAMP '2024-02-29 01:02:03.000004', TIME '-838:59:59'"
        )
        assert cur.fetchone() == (
            None,
            -(2**63),
            2**64 - 1,
            2.5e-3,
            Decimal("-1.50"),
            "ü",
            b"\x00\xff",
            dt.date(2024, 2, 29),
            dt.datetime(2024, 2, 29, 1, 2, 3, 4),
            -dt.timedelta(hours=838, minutes=59, seconds=59),
        )

        # Many different statements (each prepared one is cached, then evicted).
        def prepares():
            cur.execute("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")
            return int(cur.fetchone()[1])

        before = prepares()
        for i in range(100):
            cur.execute(f"SELECT {i} + 1")
            assert cur.fetchone() == (i + 1,)
        # Prepared only when asked for; as text (PyMySQL's way) otherwise.
        assert prepares() - before == (100 if prepare_selects else 0)
        # Several statements in one text still work (sent as text).
        cur.execute("SELECT 1; SELECT 2")
        assert cur.fetchall() == [(1,)]
        assert cur.nextset() and cur.fetchall() == [(2,)]


def test_answers_read_in_the_statements_call_and_beyond_it(conn):
    """The statement's own call (staunch_conn_query_batch) brings the types
    and the first rows; what does not fit is read on, wide results take
    their types apart, and each previous answer is freed by the next call
    (a streamed one before it)."""
    cur = conn.cursor()
    # More rows than the first batch holds (4,096 values): read on, in order.
    cur.execute("SELECT seq, CONCAT('r', seq) FROM seq_1_to_5000 WHERE seq > %s", (0,))
    rows = cur.fetchall()
    assert cur.rowcount == 5000 and len(rows) == 5000
    assert rows[0] == (1, "r1") and rows[2047] == (2048, "r2048") and rows[2048] == (2049, "r2049")
    assert rows[-1] == (5000, "r5000")
    # Exactly a full batch: the empty read after it ends the set.
    cur.execute("SELECT seq FROM seq_1_to_4096")
    assert [r[0] for r in cur.fetchall()] == list(range(1, 4097))
    # More columns than the types buffer (64): their types read apart.
    cols = ", ".join(f"{i} + %s AS c{i}" for i in range(70))
    cur.execute(f"SELECT {cols}", (1,) * 70)
    assert cur.fetchall() == [tuple(range(1, 71))]
    assert [d[0] for d in cur.description] == [f"c{i}" for i in range(70)]
    # No rows: the figures come from the same call.
    cur.execute("CREATE TEMPORARY TABLE qb (id INT AUTO_INCREMENT PRIMARY KEY, s TEXT)")
    cur.execute("INSERT INTO qb (s) VALUES (%s), (%s)", ("a", "b"))
    assert cur.rowcount == 2 and cur.lastrowid == 1 and cur.description is None
    cur.execute("SELECT s FROM qb WHERE id = %s", (2,))
    assert cur.fetchall() == [("b",)] and cur.lastrowid == 0
    # A bad statement after an answer: the answer is freed, the cursor usable.
    with pytest.raises(staunch.ProgrammingError):
        cur.execute("SELECT nope FROM qb")
    cur.execute("SELECT COUNT(*) FROM qb")
    assert cur.fetchone() == (2,)
    cur.close()
    ss = conn.cursor(staunch.SSCursor)
    ss.execute("SELECT seq FROM seq_1_to_300")
    assert ss.fetchone() == (1,)
    ss.execute("SELECT seq FROM seq_1_to_3")
    assert ss.fetchall() == [(1,), (2,), (3,)]
    ss.close()


@pytest.mark.parametrize(
    ("query", "knobs", "prepared"),
    [
        ("", {}, False),  # Python's default, PyMySQL's: interpolated
        ("interpolate_params=false", {}, True),  # the URL's knob wins
        ("interpolate_params=true", {}, False),
        ("", {"interpolate_params": False}, True),  # so does a keyword
    ],
)
def test_interpolate_params_default_yields_to_the_user(pool_factory, query, knobs, prepared):
    """The Python default (interpolate_params=true) is a default of the
    core's (staunch_options_set_default): the URL's knob, or a keyword,
    wins. Seen through the server: a statement with parameters prepares
    server-side only when interpolation is off."""
    pool = pool_factory(query, **knobs)
    with pool.connection() as conn:
        cur = conn.cursor()

        def prepares():
            cur.execute("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")
            return int(cur.fetchone()[1])

        before = prepares()
        cur.execute("SELECT CONCAT(%s, 'x', %s)", ("it's", 7))
        assert cur.fetchone() == ("it'sx7",)
        assert (prepares() > before) == prepared, (query, knobs)
