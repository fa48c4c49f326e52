"""SQLAlchemy's pool events under mysql+staunch, side by side with mysql+pymysql
(issue 47): the same scenario on the same server, every event recorded."""

from __future__ import annotations

import pytest

sa = pytest.importorskip("sqlalchemy")
pytest.importorskip("pymysql")
from sqlalchemy import event  # noqa: E402

import staunch  # noqa: E402
from staunch.sqlalchemy_dialect import StaunchPool  # noqa: E402

EVENTS = (
    "connect",
    "checkout",
    "checkin",
    "reset",
    "invalidate",
    "soft_invalidate",
    "close",
    "detach",
    "close_detached",
)


class Recorder:
    """Every pool event of an engine as (name, connection, record): the DBAPI
    connection and the record named c1, c2, ... and r1, r2, ... in order of
    appearance (kept alive, so that no id is reused). An invalidate adds
    whether it carried the driver's error."""

    def __init__(self, engine):
        self.log: list = []
        self._labels: dict = {}
        self._keep: list = []
        self._error = engine.dialect.loaded_dbapi.Error
        for name in EVENTS:
            event.listen(engine, name, self._handler(name))

    def _label(self, obj, prefix: str):
        if obj is None:
            return None
        key = id(obj)
        if key not in self._labels:
            self._keep.append(obj)
            self._labels[key] = f"{prefix}{sum(v.startswith(prefix) for v in self._labels.values()) + 1}"
        return self._labels[key]

    def _handler(self, name: str):
        def on(*args):
            if name == "close_detached":  # (dbapi_connection) only
                args += (None,)
            entry = (name, self._label(args[0], "c"), self._label(args[1], "r"))
            if name in ("invalidate", "soft_invalidate"):
                entry += (isinstance(args[2], self._error),)
            self.log.append(entry)

        return on

    def mark(self, step: str) -> None:
        self.log.append(step)

    def steps(self) -> dict:
        out, cur = {}, None
        for e in self.log:
            if isinstance(e, str):
                cur = out[e] = []
            else:
                cur.append(e)
        return out


def scenario(engine, server, rec: Recorder) -> None:
    rec.mark("one")
    with engine.connect() as c:
        c.execute(sa.text("SELECT 1"))
    rec.mark("nested")
    with engine.connect() as c:
        c.execute(sa.text("SELECT 1"))
        with engine.connect() as c2:
            c2.execute(sa.text("SELECT 2"))
    rec.mark("invalidate")
    with engine.connect() as c:
        c.execute(sa.text("SELECT 1"))
        c.invalidate()
    rec.mark("disconnect")
    with engine.connect() as c:
        server.sql(f"KILL CONNECTION {c.connection.dbapi_connection.thread_id()}")
        with pytest.raises(sa.exc.DBAPIError) as ei:
            c.execute(sa.text("SELECT 1"))
        assert ei.value.connection_invalidated
    rec.mark("after")
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT 3")).scalar() == 3
    rec.mark("detach")
    raw = engine.raw_connection()
    raw.detach()
    raw.close()


@pytest.fixture
def engines(server):
    s = server.server
    made = {}
    for driver in ("pymysql", "staunch"):
        made[driver] = sa.create_engine(f"mysql+{driver}://app:app-secret@{s['host']}:{s['port']}/staunch_test")
    yield made
    for e in made.values():
        e.dispose()


# What each engine must see, step by step. QueuePool (pymysql) keeps its
# DBAPI connections and records: `connect` once per new connection (c1, c2,
# then c3 and c4 in the records of the invalidated ones), `close` only when
# one is invalidated (a detached one is closed without it). StaunchPool lends
# a new staunch.Connection and record per borrow (staunch resets a session
# changed by a borrower on return, so each borrow is a session to set up
# again): `connect` before each checkout and `close` after each checkin.
# checkout, reset, checkin, invalidate, detach and close_detached are the
# same on both.
PYMYSQL = {
    "one": [("connect", "c1", "r1"), ("checkout", "c1", "r1"), ("reset", "c1", "r1"), ("checkin", "c1", "r1")],
    "nested": [
        ("checkout", "c1", "r1"),
        ("connect", "c2", "r2"),
        ("checkout", "c2", "r2"),
        ("reset", "c2", "r2"),
        ("checkin", "c2", "r2"),
        ("reset", "c1", "r1"),
        ("checkin", "c1", "r1"),
    ],
    "invalidate": [
        ("checkout", "c2", "r2"),
        ("invalidate", "c2", "r2", False),
        ("close", "c2", "r2"),
        ("checkin", None, "r2"),
    ],
    "disconnect": [
        ("checkout", "c1", "r1"),
        ("invalidate", "c1", "r1", True),
        ("close", "c1", "r1"),
        ("checkin", None, "r1"),
    ],
    "after": [("connect", "c3", "r2"), ("checkout", "c3", "r2"), ("reset", "c3", "r2"), ("checkin", "c3", "r2")],
    "detach": [
        ("connect", "c4", "r1"),
        ("checkout", "c4", "r1"),
        ("detach", "c4", "r1"),
        ("reset", "c4", None),
        ("close_detached", "c4", None),
    ],
}


def borrow(c: str, r: str) -> list:
    return [("connect", c, r), ("checkout", c, r), ("reset", c, r), ("checkin", c, r), ("close", c, r)]


STAUNCH = {
    "one": borrow("c1", "r1"),
    "nested": [
        ("connect", "c2", "r2"),
        ("checkout", "c2", "r2"),
        *borrow("c3", "r3"),
        ("reset", "c2", "r2"),
        ("checkin", "c2", "r2"),
        ("close", "c2", "r2"),
    ],
    "invalidate": [
        ("connect", "c4", "r4"),
        ("checkout", "c4", "r4"),
        ("invalidate", "c4", "r4", False),
        ("close", "c4", "r4"),
        ("checkin", None, "r4"),
    ],
    "disconnect": [
        ("connect", "c5", "r5"),
        ("checkout", "c5", "r5"),
        ("invalidate", "c5", "r5", True),
        ("close", "c5", "r5"),
        ("checkin", None, "r5"),
    ],
    "after": borrow("c6", "r6"),
    "detach": [
        ("connect", "c7", "r7"),
        ("checkout", "c7", "r7"),
        ("detach", "c7", "r7"),
        ("reset", "c7", None),
        ("close_detached", "c7", None),
    ],
}


def per_borrow(steps: dict) -> list:
    """The events both pools must share: all but connect and close."""
    return [e[0] for step in steps.values() for e in step if e[0] not in ("connect", "close")]


def test_pool_events_as_with_pymysql(engines, server):
    assert isinstance(engines["staunch"].pool, StaunchPool)
    assert isinstance(engines["pymysql"].pool, sa.pool.QueuePool)
    spool = engines["staunch"].pool.staunch_pool
    before = spool.stats()
    seen = {}
    for driver, engine in engines.items():
        rec = Recorder(engine)
        scenario(engine, server, rec)
        seen[driver] = rec.steps()
    after = spool.stats()
    assert seen["pymysql"] == PYMYSQL
    assert seen["staunch"] == STAUNCH
    assert per_borrow(seen["staunch"]) == per_borrow(seen["pymysql"])
    # Each SQLAlchemy checkout was one borrow from staunch's pool, and each
    # invalidated connection was closed by staunch, not lent again.
    checkouts = sum(e[0] == "checkout" for step in seen["staunch"].values() for e in step)
    assert after.acquired - before.acquired == checkouts == 7
    assert after.closed_broken - before.closed_broken == 2
    assert after.active == 0


def test_invalidated_connection_is_not_lent_again(server):
    # c.invalidate() on a healthy connection: close() would return it to
    # staunch's pool; the dialect's do_terminate discards it.
    s = server.server
    engine = sa.create_engine(
        f"mysql+staunch://app:app-secret@{s['host']}:{s['port']}/staunch_test?max_size=1&pool_name=sa_inval"
    )
    try:
        for soft in (False, True):
            with engine.connect() as c:
                tid = c.connection.dbapi_connection.thread_id()
                if soft:
                    c.connection.invalidate(soft=True)  # recycled at checkin
                    c.execute(sa.text("SELECT 1"))
                else:
                    c.invalidate()
            with engine.connect() as c:
                assert c.connection.dbapi_connection.thread_id() != tid, soft
        st = engine.pool.staunch_pool.stats()
        assert st.closed_broken == 2 and st.created == 3
    finally:
        engine.dispose()


def test_staunch_pool_accessor_and_metrics(server):
    s = server.server
    url = f"mysql+staunch://app:app-secret@{s['host']}:{s['port']}/staunch_test?pool_name=sa_metrics"
    engine = sa.create_engine(url, connect_args={"max_size": 2})
    try:
        spool = engine.pool.staunch_pool
        assert isinstance(spool, staunch.Pool) and spool.name == "sa_metrics"
        assert spool.stats().total == 0  # getting it opened no connection
        assert engine.pool.staunch_pool is spool
        with engine.connect() as c:
            assert c.connection.dbapi_connection._pool_ref is spool  # the pool the engine borrows from
        # connect_args are knobs: another engine without them has another pool
        other = sa.create_engine(url)
        assert other.pool.staunch_pool is not spool
        other.dispose()

        pytest.importorskip("prometheus_client")
        from staunch.prometheus import StaunchCollector

        families = {f.name: f for f in StaunchCollector(spool).collect()}
        assert "db_client_connection_count" in families
        samples = families["db_client_connection_count"].samples
        assert {smp.labels.get("db_client_connection_pool_name") for smp in samples} == {"sa_metrics"}
    finally:
        engine.dispose()


def test_connect_listener_session_setup_holds_on_every_checkout(server):
    # Why `connect` fires per borrow: staunch resets a session changed by its
    # borrower when it comes back, so what a `connect` listener (or the
    # engine's isolation_level) set would be gone at the next borrow of the
    # same server connection if `connect` fired once per server connection.
    s = server.server
    engine = sa.create_engine(
        f"mysql+staunch://app:app-secret@{s['host']}:{s['port']}/staunch_test?max_size=1&pool_name=sa_setup",
        isolation_level="READ COMMITTED",
    )

    @event.listens_for(engine, "connect")
    def set_tz(dbapi_connection, connection_record):
        cur = dbapi_connection.cursor()
        cur.execute("SET SESSION time_zone = '+03:00'")
        cur.close()

    try:
        tids = set()
        for _ in range(3):
            with engine.connect() as c:
                tids.add(c.connection.dbapi_connection.thread_id())
                assert c.execute(sa.text("SELECT @@session.time_zone")).scalar() == "+03:00"
                assert c.get_isolation_level() == "READ COMMITTED"
        assert len(tids) == 1  # one server connection throughout (max_size=1)
        assert engine.pool.staunch_pool.stats().resets_on_return >= 2
    finally:
        engine.dispose()
