"""OpenTelemetry spans for staunch's borrows and statements.

    import staunch
    import staunch.otel

    pool = staunch.Pool(url, tracer=staunch.otel.Spans())
    # or, for every pool opened from now on (staunch.connect()'s, SQLAlchemy's too):
    staunch.otel.instrument()

Each borrow (``pool.connection()`` and its variants) becomes a span
``staunch.acquire`` and each statement (COMMIT and ROLLBACK included) a span
``staunch.statement`` (kind CLIENT), children of the span current on the
calling thread, with OpenTelemetry's database attributes: ``db.system.name``
("mysql"), ``db.client.connection.pool.name``, ``server.address``,
``server.port``; on failure the status ERROR, ``error.type`` and, for the
server's errors, ``db.response.status_code`` (e.g. "1146"). The statement's
text (``db.query.text``) and the server's error messages (which may quote
the statement and its values, as a syntax error or a duplicate key does) are
recorded only with ``record_statement=True``.

The library calls the pool's tracer on the borrowing thread, for the start
and the end of each, as the call returns, each span given the times they
happened (a streamed statement's end comes when its rows are read or
freed). Needs ``opentelemetry-api``
(``pip install staunch[otel]``); without a tracer nothing is called.
"""

from __future__ import annotations

import threading

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from . import __version__, _core

__all__ = ["Spans", "instrument", "uninstrument"]

_SYSTEM = "mysql"


def _address(server: str) -> dict:
    """``host:port`` as OpenTelemetry's attributes (a socket path: no port)."""
    host, sep, port = server.rpartition(":")
    if sep and port.isdigit():
        return {"server.address": host, "server.port": int(port)}
    return {"server.address": server}


class Spans:
    """A pool's ``tracer`` (``staunch.Pool(url, tracer=Spans())``) that makes
    OpenTelemetry spans of its borrows and statements.

    ``tracer_provider``: the provider to take the tracer from (default: the
    global one). ``record_statement``: record each statement's text as
    ``db.query.text``, and the server's error messages, which may quote it
    (default False: the text may hold what the application put in it).
    One ``Spans`` may serve several pools."""

    def __init__(self, tracer_provider=None, record_statement: bool = False):
        self.record_statement = bool(record_statement)
        self._tracer = trace.get_tracer(__name__, __version__, tracer_provider=tracer_provider)
        # A borrow starts and ends during one call, on one thread (the
        # tracer must not use the pool, so borrows do not nest): a stack per
        # thread. A statement may end later than its call (a streamed
        # answer, ending when its rows are read or freed, perhaps by the
        # garbage collector on another thread), but a connection runs one
        # statement at a time: its span is kept under (pool, connection).
        self._acquires = threading.local()
        self._statements: dict = {}

    def __call__(self, ev: _core.TraceEvent) -> None:
        kind = ev.kind
        if kind == "statement_start":
            attributes = {"db.system.name": _SYSTEM, "db.client.connection.pool.name": ev.pool}
            if ev.server:
                attributes.update(_address(ev.server))
            if self.record_statement and ev.statement is not None:
                attributes["db.query.text"] = ev.statement
            span = self._tracer.start_span(
                "staunch.statement", kind=SpanKind.CLIENT, attributes=attributes, start_time=ev.time_ns
            )
            old = self._statements.pop((ev.pool_id, ev.connection_id), None)
            if old is not None:  # its end was missed (the tracer failed then): close it
                old.end(end_time=ev.time_ns)
            self._statements[ev.pool_id, ev.connection_id] = span
        elif kind == "statement_end":
            span = self._statements.pop((ev.pool_id, ev.connection_id), None)
            if span is not None:
                if ev.error is not None:
                    self._failed(span, ev)
                span.end(end_time=ev.time_ns)
        elif kind == "acquire_start":
            span = self._tracer.start_span(
                "staunch.acquire",
                kind=SpanKind.INTERNAL,
                attributes={"db.system.name": _SYSTEM, "db.client.connection.pool.name": ev.pool},
                start_time=ev.time_ns,
            )
            stack = self._acquires.__dict__.setdefault("stack", [])
            stack.append(span)
        elif kind == "acquire_end":
            stack = self._acquires.__dict__.get("stack")
            if stack:
                span = stack.pop()
                if ev.server:
                    span.set_attributes(_address(ev.server))
                if ev.error is not None:
                    self._failed(span, ev)
                span.end(end_time=ev.time_ns)

    def _failed(self, span, ev: _core.TraceEvent) -> None:
        if ev.error_code:
            code = str(ev.error_code)
            span.set_attribute("db.response.status_code", code)
            span.set_attribute("error.type", code)
            # The server's message may quote the statement (1064) or a value (1062).
            message = ev.error if self.record_statement else f"MySQL error {code}"
        else:
            # staunch's own (a timeout, a lost connection): no statement in it.
            span.set_attribute("error.type", "staunch.error")
            message = ev.error
        span.set_status(Status(StatusCode.ERROR, message))


def instrument(tracer_provider=None, record_statement: bool = False) -> Spans:
    """Gives every pool opened from now on without a ``tracer`` of its own
    (those ``staunch.connect()`` and SQLAlchemy's dialect open too) a
    ``Spans(tracer_provider, record_statement)``, returned. Pools already
    open are not changed."""
    spans = Spans(tracer_provider=tracer_provider, record_statement=record_statement)
    _core.default_tracer = spans
    return spans


def uninstrument() -> None:
    """Pools opened from now on have no tracer unless given one."""
    _core.default_tracer = None
