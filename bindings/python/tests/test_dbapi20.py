"""PEP 249's compliance suite, as published on PyPI (the ``dbapi-compliance``
package, module ``dbapi20``, pinned in scripts/python-tests.sh), through
staunch and through PyMySQL as the reference, against one test-kit server.

The suite is meant to be subclassed (its docstring: override setUp, tearDown,
driver, connect_args); these classes give it the driver, the connection and
the MySQL-specific parts it leaves to drivers: the procedures for ``nextset``
and ``callproc``, and ``setoutputsize``. Nothing of the suite is copied here.
"""

from __future__ import annotations

import pytest

dbapi20 = pytest.importorskip("dbapi20")
pymysql = pytest.importorskip("pymysql")

import staunch  # noqa: E402


@pytest.fixture(scope="class")
def _dbapi20_server(request, server):
    """The suite's tables and procedures live in the session server's database."""
    cls = request.cls
    s = server.server
    if cls.driver is staunch:
        cls.connect_args = (server.direct_url,)
    else:
        cls.connect_kw_args = dict(
            host=s["host"], port=s["port"], user="app", password="app-secret", database=server.ready["database"]
        )
    # callproc's test calls a procedure named by lower_func with ('FOO',) and
    # expects one row, the argument in lower case.
    server.sql(f"DROP PROCEDURE IF EXISTS {cls.lower_func}")
    server.sql(f"CREATE PROCEDURE {server.ready['database']}.{cls.lower_func}(s VARCHAR(20)) SELECT LOWER(s)")
    yield


class _MySQLParts:
    lower_func = "dbapi20test_lower"

    def help_nextset_setUp(self, cur):  # noqa: N802 (the suite's name)
        cur.execute(
            f"CREATE PROCEDURE deleteme() BEGIN SELECT COUNT(*) FROM {self.table_prefix}booze; "
            f"SELECT name FROM {self.table_prefix}booze; END"
        )

    def help_nextset_tearDown(self, cur):  # noqa: N802
        cur.execute("DROP PROCEDURE deleteme")

    def test_nextset(self):
        # The suite asks every driver to write this one: a CALL that returns
        # two result sets. MySQL ends a CALL with one more result, the
        # statement's own status (no columns): nextset() moves onto it, and
        # after it returns None. As mysqlclient's copy of the suite: fetchall()
        # on that status gives no rows (mysqlclient and PyMySQL), not an Error.
        con = self._connect()
        try:
            cur = con.cursor()
            self.executeDDL1(cur)
            for sql in self._populate():
                cur.execute(sql)
            self.help_nextset_setUp(cur)
            try:
                cur.callproc("deleteme")
                assert cur.fetchone()[0] == len(self.samples)
                assert cur.nextset()
                assert sorted(r[0] for r in cur.fetchall()) == sorted(self.samples)
                if cur.nextset():
                    assert cur.description is None, "a result set after the procedure's two"
                    assert len(cur.fetchall()) == 0, "non-empty result set after other result sets"
                    assert not cur.nextset()
            finally:
                self.help_nextset_tearDown(cur)
        finally:
            con.close()

    def test_setoutputsize(self):
        # MySQL drivers read whole values; setoutputsize is accepted and ignored.
        con = self._connect()
        try:
            cur = con.cursor()
            cur.setoutputsize(1000, 0)
            cur.execute(f"SELECT {self.lower_func!r}")
            assert cur.fetchall() == [(self.lower_func,)]
        finally:
            con.close()


@pytest.mark.usefixtures("_dbapi20_server")
class TestDBAPI20Staunch(_MySQLParts, dbapi20.DatabaseAPI20Test):
    driver = staunch

    def test_non_idempotent_close(self):
        pytest.skip(
            "staunch's Connection.close() returns the connection to its pool and is idempotent by design "
            "(conf_bad_input); the suite itself says 'reasonable persons differ' on this one"
        )


def _reference_fails(test, exc, reason):
    """test, expected to fail with exc (strict: passing fails the run)."""

    @pytest.mark.xfail(raises=exc, strict=True, reason=reason)
    def run(self):
        test(self)

    return run


@pytest.mark.usefixtures("_dbapi20_server")
class TestDBAPI20PyMySQL(_MySQLParts, dbapi20.DatabaseAPI20Test):
    """The reference driver, same suite, same server. Where PyMySQL departs
    from PEP 249 its tests are strict expected failures: the counts stay
    visible, and a PyMySQL that changes makes this fail."""

    driver = pymysql
    _S = dbapi20.DatabaseAPI20Test
    _NO_ROWS = "PyMySQL returns no rows, not an Error, when the statement made no result set"
    _SPELLING = "PyMySQL's cursor spells it setoutputsizes"
    test_fetchone = _reference_fails(_S.test_fetchone, AssertionError, _NO_ROWS)
    test_fetchall = _reference_fails(_S.test_fetchall, AssertionError, _NO_ROWS)
    test_setoutputsize_basic = _reference_fails(_S.test_setoutputsize_basic, AttributeError, _SPELLING)
    test_setoutputsize = _reference_fails(_MySQLParts.test_setoutputsize, AttributeError, _SPELLING)
