"""OpenTelemetry spans (issue 47, item 3): staunch.otel turns the library's
tracer callback into spans, read back from the SDK's in-memory exporter."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import staunch
import staunch.otel

from .conftest import url_as

SECRET = "s3cr3t-in-the-sql"


@pytest.fixture
def exporter():
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    exp.provider = provider
    yield exp
    provider.shutdown()


def one_request(pool, tracer):
    """A request: a borrow, a statement that works, one that fails (caught),
    and the with-block's COMMIT."""
    with tracer.start_as_current_span("request"):
        with pool.connection() as conn:
            cur = conn.cursor()
            cur.execute(f"SELECT 1 AS v, '{SECRET}' AS s")
            assert cur.fetchall() == [(1, SECRET)]
            with pytest.raises(staunch.ProgrammingError):
                cur.execute("SELECT * FROM no_such_table")


@pytest.mark.parametrize("record_statement", [False, True])
def test_a_request_gives_an_acquire_and_statement_spans(pool_factory, url, server, exporter, record_statement):
    # A user with a password, so that a span could show it.
    pool = pool_factory(
        "pool_name=py%20otel",
        base=url_as(url, server.ready["users"]["app"]),
        tracer=staunch.otel.Spans(exporter.provider, record_statement=record_statement),
    )
    password = server.ready["users"]["app"]["password"]
    assert password
    one_request(pool, exporter.provider.get_tracer("test"))

    spans = exporter.get_finished_spans()
    names = [s.name for s in spans]
    # Ended in this order: the acquire, the two statements, COMMIT, the request.
    assert names == ["staunch.acquire"] + ["staunch.statement"] * 3 + ["request"], names
    acquire, ok, failed, commit, request = spans
    for s in (acquire, ok, failed, commit):
        assert s.parent is not None and s.parent.span_id == request.context.span_id, s.name
        assert s.context.trace_id == request.context.trace_id
        assert s.attributes["db.system.name"] == "mysql"
        assert s.attributes["db.client.connection.pool.name"] == "py otel"
        assert s.attributes["server.address"] == "127.0.0.1"
        assert s.attributes["server.port"] == server.server["port"]
    # Siblings: the borrow is over before the first statement starts.
    assert acquire.end_time <= ok.start_time <= ok.end_time <= failed.start_time
    assert acquire.kind == SpanKind.INTERNAL and ok.kind == SpanKind.CLIENT
    for s in (acquire, ok, commit):
        assert s.status.status_code == StatusCode.UNSET, s.name
        assert "error.type" not in s.attributes and "db.response.status_code" not in s.attributes
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.attributes["db.response.status_code"] == "1146"
    assert failed.attributes["error.type"] == "1146"
    if record_statement:
        assert ok.attributes["db.query.text"] == f"SELECT 1 AS v, '{SECRET}' AS s"
        assert failed.attributes["db.query.text"] == "SELECT * FROM no_such_table"
        assert commit.attributes["db.query.text"] == "COMMIT"
        assert "no_such_table" in failed.status.description
    else:
        for s in spans:
            assert "db.query.text" not in s.attributes, s.name
        # The server's message (which may quote the statement) is left out too.
        assert failed.status.description == "MySQL error 1146"
    # No password and, unless asked, no statement text anywhere in a span.
    for s in spans:
        text = s.to_json()
        assert password not in text
        assert (SECRET in text) == (record_statement and s is ok), s.name


def test_a_failed_borrow_is_an_error_span(url, exporter):
    # Nothing listens on port 1: the borrow fails within its timeout.
    pool = staunch.Pool(
        "mysql://root@127.0.0.1:1/test", connect_timeout="200ms", tracer=staunch.otel.Spans(exporter.provider)
    )
    try:
        with pytest.raises(staunch.PoolTimeout):
            pool.connection(timeout=0.5)
    finally:
        pool.close()
    (acquire,) = exporter.get_finished_spans()
    assert acquire.name == "staunch.acquire"
    assert acquire.status.status_code == StatusCode.ERROR
    assert acquire.attributes["error.type"] == "staunch.error"
    assert "server.address" not in acquire.attributes
    assert acquire.status.description  # staunch's own message


def test_instrument_gives_spans_to_pools_opened_after_it(pool_factory, exporter):
    before = pool_factory()
    staunch.otel.instrument(tracer_provider=exporter.provider)
    try:
        after = pool_factory()
    finally:
        staunch.otel.uninstrument()
    untraced = pool_factory()
    for pool in (before, untraced):
        with pool.connection() as conn:
            conn.cursor().execute("DO 1")
    assert exporter.get_finished_spans() == ()
    with after.connection() as conn:
        conn.cursor().execute("DO 1")
    # The borrow and DO 1; DO 1 opened no transaction, so the with-block sent no COMMIT.
    assert [s.name for s in exporter.get_finished_spans()] == ["staunch.acquire", "staunch.statement"]


class BrokenProvider:
    """A tracer provider whose tracer fails at every span."""

    def get_tracer(self, *args, **kwargs):
        return self

    def start_span(self, *args, **kwargs):
        raise RuntimeError("the tracer is broken")


def test_a_failing_tracer_does_not_break_the_statements(pool_factory, caplog):
    pool = pool_factory(tracer=staunch.otel.Spans(BrokenProvider()))
    with caplog.at_level(logging.ERROR, logger="staunch"):
        for _ in range(2):
            with pool.connection() as conn:
                cur = conn.cursor()
                cur.execute("SELECT 41 + 1")
                assert cur.fetchone() == (42,)
                with pytest.raises(staunch.ProgrammingError):
                    cur.execute("SELECT * FROM no_such_table")
    # Logged once, with the tracer's own error.
    logged = [r for r in caplog.records if r.name == "staunch"]
    assert len(logged) == 1 and "the tracer is broken" in logged[0].exc_text

    def raises(ev):
        raise ValueError(ev.kind)

    pool2 = pool_factory(tracer=raises)
    with pool2.connection() as conn:
        cur = conn.cursor()
        cur.execute("SELECT 2")
        assert cur.fetchone() == (2,)


def test_a_streamed_statement_ends_when_its_rows_are_read(pool_factory, exporter):
    pool = pool_factory(tracer=staunch.otel.Spans(exporter.provider))
    with pool.connection() as conn:
        cur = conn.cursor(staunch.SSCursor)
        cur.execute("SELECT seq FROM seq_1_to_3")
        names = [s.name for s in exporter.get_finished_spans()]
        assert names == ["staunch.acquire"], names  # the statement is still open
        assert [r[0] for r in cur.fetchall()] == [1, 2, 3]
        assert [s.name for s in exporter.get_finished_spans()] == ["staunch.acquire", "staunch.statement"]
        cur.close()


def test_a_streamed_statement_left_unread_ends_when_its_cursor_closes(pool_factory, exporter):
    pool = pool_factory(tracer=staunch.otel.Spans(exporter.provider))
    with pool.connection() as conn:
        cur = conn.cursor(staunch.SSCursor)
        cur.execute("SELECT seq FROM seq_1_to_100000")
        assert cur.fetchone() == (1,)
        assert [s.name for s in exporter.get_finished_spans()] == ["staunch.acquire"]
        cur.close()
        assert [s.name for s in exporter.get_finished_spans()] == ["staunch.acquire", "staunch.statement"]
        cur = conn.cursor()
        cur.execute("SELECT 7")
        assert cur.fetchone() == (7,)
    # The acquire, the streamed statement, SELECT 7 (no COMMIT: neither opened a
    # transaction): each ended once.
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["staunch.acquire"] + ["staunch.statement"] * 2
    assert len({s.context.span_id for s in spans}) == 3


def test_each_thread_s_spans_are_children_of_its_own_request(pool_factory, exporter):
    pool = pool_factory("max_size=4", tracer=staunch.otel.Spans(exporter.provider, record_statement=True))
    tracer = exporter.provider.get_tracer("test")
    barrier = threading.Barrier(4)
    errors = []

    def work(i):
        try:
            barrier.wait(10)
            for _ in range(5):
                with tracer.start_as_current_span(f"request {i}"):
                    with pool.connection() as conn:
                        conn.cursor().execute(f"SELECT {i}")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    requests = [s for s in spans if s.name.startswith("request")]
    assert len(requests) == 20
    for s in spans:
        if s.name.startswith("staunch."):
            parent = by_id[s.parent.span_id]
            assert parent.name.startswith("request"), s.name
            i = parent.name.split()[1]
            if s.name == "staunch.statement":
                assert s.attributes["db.query.text"] == f"SELECT {i}"
    assert sum(s.name == "staunch.acquire" for s in spans) == 20
    # SELECT i opens no transaction: no COMMIT at the end of the block.
    assert sum(s.name == "staunch.statement" for s in spans) == 20


def test_a_tracer_hears_each_event_as_its_call_returns_dated_when_it_happened(pool_factory):
    """The library keeps a thread's events until its call returns (where the
    thread holds the GIL): a statement's start is heard after its answer,
    but dated when it was sent, and its end when the answer came."""
    heard = []
    pool = pool_factory(tracer=lambda ev: heard.append((ev.kind, ev.time_ns, time.time_ns())))
    with pool.connection() as conn:
        cur = conn.cursor()
        sent = time.time_ns()
        cur.execute("SELECT SLEEP(0.3)")
        answered = time.time_ns()
    assert [k for k, _, _ in heard] == ["acquire_start", "acquire_end", "statement_start", "statement_end"]
    (_, start, start_heard), (_, end, end_heard) = heard[2], heard[3]
    ms = 1_000_000
    assert start_heard >= sent + 300 * ms, "the start was heard during the call"
    # Dated when it happened, not when heard: before the 300 ms the server
    # slept (less a microsecond: held_us is whole microseconds).
    assert sent <= start and start_heard - start >= 299 * ms, (start - sent) / ms
    assert start + 300 * ms <= end <= end_heard <= answered


def test_tracer_must_be_callable(url):
    with pytest.raises(staunch.ConfigError, match="tracer"):
        staunch.Pool(url, tracer=42)
