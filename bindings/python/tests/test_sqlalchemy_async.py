"""The mysql+staunch_async dialect under SQLAlchemy's asyncio extension."""

from __future__ import annotations

import asyncio
import threading
from decimal import Decimal

import pytest

sa = pytest.importorskip("sqlalchemy")
pytest.importorskip("greenlet")
from sqlalchemy import orm  # noqa: E402
from sqlalchemy.dialects import registry  # noqa: E402
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine  # noqa: E402

import staunch  # noqa: E402

# As the package's entry point registers it (for a checkout not installed).
registry.register("mysql.staunch_async", "staunch.sqlalchemy_async", "StaunchAsyncDialect")


class Base(orm.DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "sa_async_items"
    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(40))
    price: orm.Mapped[Decimal] = orm.mapped_column(sa.Numeric(10, 2))


def url_of(server, knobs: str = "max_size=4") -> str:
    s = server.server
    return f"mysql+staunch_async://app:app-secret@{s['host']}:{s['port']}/staunch_test?{knobs}"


def test_sqlalchemy_async_core_orm_and_rollback(server):
    async def main():
        engine = create_async_engine(url_of(server))
        assert engine.dialect.driver == "staunch_async" and engine.dialect.is_async
        async with engine.begin() as conn:
            assert (await conn.execute(sa.text("SELECT 1"))).scalar() == 1
            await conn.run_sync(Base.metadata.drop_all)
            await conn.run_sync(Base.metadata.create_all)
        async with AsyncSession(engine) as session:
            session.add_all([Item(id=1, name="a'b", price=Decimal("1.10")), Item(id=2, name="c", price=Decimal("2"))])
            await session.commit()
        with pytest.raises(RuntimeError):
            async with AsyncSession(engine) as session, session.begin():
                session.add(Item(id=3, name="lost", price=Decimal("0")))
                await session.flush()
                raise RuntimeError("boom")
        async with AsyncSession(engine) as session:
            items = (await session.execute(sa.select(Item).order_by(Item.id))).scalars().all()
            assert [(i.id, i.name, i.price) for i in items] == [(1, "a'b", Decimal("1.10")), (2, "c", Decimal("2.00"))]
            r = await session.execute(sa.update(Item).where(Item.id == 1).values(name="a'b"))
            assert r.rowcount == 1  # found_rows: matched, not changed
        async with engine.connect() as conn:
            raw = await conn.get_raw_connection()
            assert isinstance(raw.driver_connection._conn, staunch.aio.Connection)
            await conn.execute(sa.text("DROP TABLE sa_async_items"))
            await conn.commit()
        await engine.dispose()

    asyncio.run(main())


def test_sqlalchemy_async_checkouts_wait_in_the_event_loop(server):
    """64 tasks on an engine over a staunch pool of 2: served in turn, no
    thread started for them, and a task cancelled while it waits gives up."""

    async def main():
        engine = create_async_engine(url_of(server, "max_size=2"))
        async with engine.connect() as conn:
            await conn.execute(sa.text("SELECT 1"))
        before = threading.active_count()
        peak = before

        async def one(i):
            nonlocal peak
            async with engine.connect() as conn:
                v = (await conn.execute(sa.text("SELECT :i + SLEEP(0.01)"), {"i": i})).scalar()
                peak = max(peak, threading.active_count())
                return v

        got = await asyncio.gather(*(one(i) for i in range(64)))
        assert sorted(got) == list(range(64))
        assert peak <= before, (peak, before)
        async with engine.connect() as held1, engine.connect() as held2:
            await held1.execute(sa.text("SELECT 1"))
            await held2.execute(sa.text("SELECT 1"))
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    async with engine.connect() as conn:
                        await conn.execute(sa.text("SELECT 1"))
            pool = engine.pool.staunch_pool
            assert pool.stats().waiting == 0
        await engine.dispose()

    asyncio.run(main())


def test_sqlalchemy_async_stream_results_reads_rows_as_they_arrive(server):
    """``AsyncConnection.stream`` (stream_results) runs on staunch.aio's
    streaming cursor: 10,000 exact rows, partitioned, and the connection
    usable afterwards, including after a stream left half read."""

    async def main():
        engine = create_async_engine(url_of(server))
        async with engine.connect() as conn:
            result = await conn.stream(sa.text("SELECT seq, seq / 8 FROM seq_1_to_10000"))
            assert isinstance(result._real_result.cursor._cursor._c, staunch.aio.SSCursor)
            n = 0
            async for part in result.partitions(1000):
                for row in part:
                    n += 1
                    assert tuple(row) == (n, Decimal(n) / 8)
            assert n == 10000
            result = await conn.stream(sa.text("SELECT seq FROM seq_1_to_100000"))
            assert (await result.fetchone()) == (1,)
            await result.close()
            assert (await conn.execute(sa.text("SELECT 2"))).scalar() == 2
        await engine.dispose()

    asyncio.run(main())
