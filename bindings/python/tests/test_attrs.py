"""Connection attributes (the knob ``connect_attrs``, PyMySQL's ``program_name``)
read back from ``performance_schema.session_connect_attrs``, on a server of this
module's own (``ps_server``: the test kit's ``--performance-schema``)."""

from __future__ import annotations

import os
import sys

import pytest

import staunch


def attrs_of(conn) -> dict:
    cur = conn.cursor()
    cur.execute(
        "SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_connect_attrs "
        "WHERE PROCESSLIST_ID = CONNECTION_ID()"
    )
    rows = dict(cur.fetchall())
    cur.close()
    return rows


def test_connect_attrs_reach_performance_schema(ps_server):
    url = ps_server.direct_url
    with staunch.Pool(url, connect_attrs={"service": "billing api", "shard": 7}) as pool:
        with pool.connection() as c:
            a = attrs_of(c)
    assert a["service"] == "billing api", a
    assert a["shard"] == "7", a
    assert a["staunch_version"] == staunch.library_version(), a
    # The interpreter's own argv[0], as libmysqlclient's clients name themselves.
    assert a["program_name"] == os.path.basename(sys.orig_argv[0]), a
    # staunch's own engine opens the connection and names itself.
    assert a["_client_name"] == "staunch", a
    assert a["_client_version"], a
    assert a["_pid"] == str(os.getpid()), a
    assert "app-secret" not in a.values(), a

    # PyMySQL's program_name, through connect() and the URL's knob.
    c = staunch.connect(url + "?connect_attrs=team:payments", program_name="billing-worker")
    try:
        a = attrs_of(c)
    finally:
        c.close()
    assert a["program_name"] == "billing-worker", a
    assert a["team"] == "payments", a

    # The MySQLdb face takes PyMySQL's names too.
    from staunch import mysqldb

    app = ps_server.ready["users"]["app"]
    c = mysqldb.connect(
        host="127.0.0.1",
        port=ps_server.server["port"],
        user=app["user"],
        password=app["password"],
        database="staunch_test",
        program_name="billing-django",
        connect_attrs={"team": "web"},
    )
    try:
        a = attrs_of(c)
    finally:
        c.close()
    assert (a["program_name"], a["team"]) == ("billing-django", "web"), a


def test_bad_connect_attrs_name_the_knob(ps_server):
    for bad in ({"a,b": "1"}, "team", {"pw": "app-secret"}):
        with pytest.raises(staunch.ConfigError) as e:
            staunch.Pool(ps_server.direct_url, connect_attrs=bad)
        assert "connect_attrs" in str(e.value), e.value
        assert "app-secret" not in str(e.value), e.value
