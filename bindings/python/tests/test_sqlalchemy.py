"""The mysql+staunch dialect with SQLAlchemy 2.x Core and ORM."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

sa = pytest.importorskip("sqlalchemy")
from sqlalchemy import orm  # noqa: E402

import staunch  # noqa: E402


@pytest.fixture
def engine(server):
    s = server.server
    e = sa.create_engine(f"mysql+staunch://app:app-secret@{s['host']}:{s['port']}/staunch_test?max_size=4")
    yield e
    e.dispose()


def test_sqlalchemy_entry_point_and_pooling(engine):
    assert engine.dialect.driver == "staunch" and engine.dialect.name == "mysql"
    assert isinstance(engine.pool, sa.pool.NullPool)
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT 1")).scalar() == 1
        raw = c.connection.dbapi_connection
        assert isinstance(raw, staunch.Connection)
    pool = staunch.shared_pool(engine.dialect.create_connect_args(engine.url)[0][0])
    before = pool.stats().acquired
    for _ in range(5):
        with engine.connect() as c:
            c.execute(sa.text("SELECT 2"))
    s = pool.stats()
    assert s.acquired == before + 5 and s.active == 0 and s.total <= 4


def test_sqlalchemy_core_crud_rowcount_found_rows(engine):
    md = sa.MetaData()
    t = sa.Table(
        "sa_core",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(50)),
        sa.Column("price", sa.Numeric(10, 2)),
        sa.Column("at", sa.DateTime),
        sa.Column("doc", sa.JSON),
    )
    md.drop_all(engine)
    md.create_all(engine)
    try:
        with engine.begin() as c:
            r = c.execute(t.insert(), {"name": "a%b", "price": Decimal("1.50"), "at": dt.datetime(2024, 1, 2, 3, 4, 5)})
            assert r.inserted_primary_key == (1,)
            c.execute(t.insert(), [{"name": "x", "doc": {"k": [1, 2]}}, {"name": "y", "doc": None}])
        with engine.connect() as c:
            rows = c.execute(sa.select(t.c.id, t.c.name, t.c.price, t.c.at, t.c.doc).order_by(t.c.id)).all()
            assert rows[0] == (1, "a%b", Decimal("1.50"), dt.datetime(2024, 1, 2, 3, 4, 5), None)
            assert rows[1].doc == {"k": [1, 2]}
            assert c.execute(sa.select(t.c.id).where(t.c.name.like("b%"))).all() == []
            assert c.execute(sa.select(t.c.id).where(t.c.name.like("a%"))).scalar() == 1
            # found_rows: an UPDATE that changes nothing still counts the rows it matched.
            r = c.execute(t.update().where(t.c.name == "x").values(name="x"))
            assert r.rowcount == 1
            c.commit()
    finally:
        md.drop_all(engine)


class Base(orm.DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "sa_items"
    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(50), unique=True)
    version: orm.Mapped[int] = orm.mapped_column(default=1)
    __mapper_args__ = {"version_id_col": version}


def test_sqlalchemy_orm_commit_and_rollback_on_exception(engine):
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    try:
        with orm.Session(engine) as s, s.begin():
            s.add_all([Item(name="one"), Item(name="two")])
        with pytest.raises(RuntimeError):
            with orm.Session(engine) as s, s.begin():
                s.add(Item(name="three"))
                s.flush()
                raise RuntimeError("boom")
        with pytest.raises(sa.exc.IntegrityError) as ei:
            with orm.Session(engine) as s, s.begin():
                s.add(Item(name="one"))
        assert isinstance(ei.value.orig, staunch.IntegrityError) and ei.value.orig.args[0] == 1062
        with orm.Session(engine) as s:
            assert sorted(i.name for i in s.scalars(sa.select(Item))) == ["one", "two"]
            item = s.scalars(sa.select(Item).where(Item.name == "one")).one()
            item.name = "uno"
            s.commit()  # versioned UPDATE: relies on a sane rowcount
            assert item.version == 2
    finally:
        Base.metadata.drop_all(engine)


def test_sqlalchemy_isolation_levels(engine):
    with engine.connect() as c:
        default = c.get_isolation_level()
    for level in ("READ COMMITTED", "SERIALIZABLE"):
        with engine.connect().execution_options(isolation_level=level) as c:
            assert c.get_isolation_level() == level
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        assert c.connection.dbapi_connection.autocommit is True
        c.execute(sa.text("CREATE TEMPORARY TABLE iso_t (id INT)"))
    with engine.connect() as c:  # the next borrower has the defaults back
        assert c.get_isolation_level() == default
        assert c.connection.dbapi_connection.autocommit is False


def test_sqlalchemy_ping_and_is_disconnect(engine, server):
    with engine.connect() as c:
        raw = c.connection.dbapi_connection
        assert engine.dialect.do_ping(raw) is True
        tid = raw.thread_id()
        server.sql(f"KILL CONNECTION {tid}")
        with pytest.raises(sa.exc.DBAPIError) as ei:
            c.execute(sa.text("SELECT 1"))
        assert ei.value.connection_invalidated
    with engine.connect() as c:  # a fresh connection from staunch
        assert c.execute(sa.text("SELECT 5")).scalar() == 5
    assert not engine.dialect.is_disconnect(staunch.ProgrammingError(1064, "syntax"), None, None)


def test_sqlalchemy_server_side_cursor(engine):
    with engine.connect() as c:
        r = c.execution_options(stream_results=True).execute(sa.text("SELECT seq FROM seq_1_to_1000"))
        total = sum(row[0] for row in r.partitions(100) for row in row)
        assert total == sum(range(1, 1001))


@pytest.mark.parametrize("stream", [False, True])
def test_sqlalchemy_call_sets_and_the_statement_as_sent(engine, stream):
    # A CALL's several sets, SQLAlchemy's way (its "Multiple Result Sets"):
    # the DBAPI cursor of raw_connection(), the dialect's own classes. It
    # moves on with nextset(), gives no rows on the status that ends the
    # CALL (as mysqlclient and PyMySQL), and keeps the statement as sent in
    # _executed (as PyMySQL).
    raw = engine.raw_connection()
    try:
        cur = raw.cursor(engine.dialect._sscursor) if stream else raw.cursor()
        assert cur.server_side is stream
        cur.execute("CREATE OR REPLACE PROCEDURE sa_two_sets(n INT) BEGIN SELECT n; SELECT n + 1; END")
        try:
            cur.callproc("sa_two_sets", (4,))
            assert cur.fetchall() == [(4,)] and cur._executed == "CALL sa_two_sets(4)"
            assert cur.nextset() and cur.fetchall() == [(5,)]
            assert cur.nextset() and cur.description is None
            assert (cur.fetchone(), cur.fetchmany(), cur.fetchall()) == (None, [], [])
            assert not cur.nextset()
        finally:
            cur.execute("DROP PROCEDURE sa_two_sets")
    finally:
        raw.close()


def test_sqlalchemy_stream_results_on_statements_without_rows(engine):
    # SQLAlchemy reads a row ahead from a server-side cursor before it looks
    # at the description: a statement without a result set must give none
    # (as with PyMySQL), not raise.
    with engine.connect() as c:
        c.execution_options(stream_results=True)
        c.exec_driver_sql("CREATE TEMPORARY TABLE sa_ss (i INT)")
        r = c.exec_driver_sql("INSERT INTO sa_ss VALUES (%s), (%s)", (1, 2))
        assert not r.returns_rows and r.rowcount == 2
        r = c.exec_driver_sql("SELECT i FROM sa_ss ORDER BY i")
        assert r.cursor.server_side and r.all() == [(1,), (2,)]
        assert not c.exec_driver_sql("DO 1").returns_rows
        c.exec_driver_sql("DROP TEMPORARY TABLE sa_ss")
