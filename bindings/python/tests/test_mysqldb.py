"""staunch.mysqldb, mysqlclient's API over staunch (what Django's backend calls)."""

from __future__ import annotations

import datetime as dt
import sys
from decimal import Decimal

import pytest

import staunch
from staunch import mysqldb


@pytest.fixture
def kw(server):
    s = server.server
    return dict(host=s["host"], port=s["port"], user="app", password="app-secret", database=server.ready["database"])


@pytest.mark.parametrize("sql_mode", ["", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"])
def test_escape_is_exact_under_every_sql_mode(kw, sql_mode):
    values = ["it's", "C:\\", 'a"b?%s', "\x00\n\x1a", "ü🍵", b"\xff\x00A", 12, -3, Decimal("1.50"), None]
    conn = mysqldb.connect(sql_mode=sql_mode or "STRICT_TRANS_TABLES", **kw)
    try:
        cur = conn.cursor()
        cur.execute("SELECT @@sql_mode")
        assert (sql_mode or "STRICT_TRANS_TABLES") in cur.fetchone()[0]
        cur.execute("SELECT " + ", ".join(conn.escape(v) for v in values))
        assert cur.fetchone() == tuple(values)
        cur.execute("SELECT CAST(" + conn.escape(dt.date(2012, 10, 15)) + " AS DATE)")
        assert cur.fetchone() == (dt.date(2012, 10, 15),)
    finally:
        conn.close()


def test_connect_arguments_conv_and_one_pool_per_argument_set(kw):
    def as_time(text):
        h, m, s = text.split(":")
        return dt.time(int(h), int(m), int(s))

    conv = {**mysqldb.converters.conversions, mysqldb.FIELD_TYPE.TIME: as_time}
    a = mysqldb.connect(conv=conv, client_flag=mysqldb.constants.CLIENT.FOUND_ROWS, **kw)
    b = mysqldb.connect(conv=conv, client_flag=mysqldb.constants.CLIENT.FOUND_ROWS, **kw)
    try:
        assert a._pool_ref is b._pool_ref and a.thread_id() != b.thread_id()
        assert mysqldb.version_info >= (1, 4, 3) and "MariaDB" in a.get_server_info()
        cur = a.cursor()
        cur.execute("SELECT CAST('09:30:05' AS TIME), 1 UNION ALL SELECT NULL, 2")
        assert cur.fetchall() == ((dt.time(9, 30, 5), 1), (None, 2))  # tuples, as mysqlclient's
        assert cur.fetchmany(5) == ()
        a.autocommit(True)
        assert a.get_autocommit() is True
        a.autocommit(False)
        assert a.get_autocommit() is False
        a.ping()
    finally:
        a.close()
        b.close()
    with pytest.raises(staunch.NotSupportedError, match="ssl"):
        mysqldb.connect(ssl={"ca": "x"}, **kw)
    with pytest.raises(TypeError, match="bogus"):
        mysqldb.connect(bogus=1, **kw)


def test_install_as_mysqldb():
    saved = {k: v for k, v in sys.modules.items() if k == "MySQLdb" or k.startswith("MySQLdb.")}
    try:
        staunch.install_as_MySQLdb()
        import MySQLdb
        from MySQLdb.constants import CLIENT, ER, FIELD_TYPE
        from MySQLdb.converters import conversions

        assert MySQLdb is mysqldb and CLIENT.FOUND_ROWS == 2 and ER.DUP_ENTRY == 1062
        assert conversions[FIELD_TYPE.TIME] is dt.timedelta
        assert issubclass(MySQLdb.IntegrityError, MySQLdb.DatabaseError)
    finally:
        for k in [k for k in sys.modules if k == "MySQLdb" or k.startswith("MySQLdb.")]:
            del sys.modules[k]
        sys.modules.update(saved)


@pytest.mark.parametrize("cursorclass", [mysqldb.cursors.Cursor, mysqldb.cursors.SSCursor, mysqldb.cursors.DictCursor])
def test_executed_is_the_statement_as_sent_in_bytes(kw, cursorclass):
    # Django's last_executed_query (connection.queries, CaptureQueriesContext,
    # the debug toolbar) shows cursor._executed, which mysqlclient keeps as the
    # statement it sent, in bytes. staunch binds the values: they are written
    # in as literals, and the text runs as the statement did.
    conn = mysqldb.connect(**kw)
    try:
        cur = conn.cursor(cursorclass)
        assert cur._executed is None
        cur.execute("SELECT %s, %s, %s, _binary %s, %s", ("it's", "C:\\", "ü", b"\x00\xff", 3))
        sent = cur._executed
        assert sent == "SELECT 'it''s', _utf8mb4 X'433a5c', 'ü', X'00ff', 3".encode(), sent

        def values():  # (a DictCursor's keys are the columns' names, which differ)
            return [tuple(r.values()) if isinstance(r, dict) else r for r in cur.fetchall()]

        assert values() == [("it's", "C:\\", "ü", b"\x00\xff", 3)]
        cur.execute(sent.decode())
        assert values() == [("it's", "C:\\", "ü", b"\x00\xff", 3)] and cur._executed == sent
        cur.execute("SELECT 1")
        assert cur._executed == b"SELECT 1"
        cur.fetchall()
        cur.close()
    finally:
        conn.close()


def test_fetch_on_the_status_that_ends_a_call(kw, server):
    # mysqlclient: no rows there (None, (), ()), not an Error.
    server.sql(f"CREATE OR REPLACE PROCEDURE {kw['database']}.mysqldb_one_set() SELECT 7")
    conn = mysqldb.connect(**kw)
    try:
        cur = conn.cursor()
        cur.callproc("mysqldb_one_set")
        assert cur.fetchall() == ((7,),) and cur.nextset()
        assert cur.description is None
        assert (cur.fetchone(), cur.fetchmany(), cur.fetchall()) == (None, (), ())
        assert not cur.nextset()
    finally:
        conn.close()
        server.sql(f"DROP PROCEDURE {kw['database']}.mysqldb_one_set")
