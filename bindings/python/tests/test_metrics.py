"""Observability (issue 47): the pool's figures through prometheus_client
(the collector hands the library's Prometheus text to the registry, read
back with the client's own exposition and parser), and leak reports that
name the Python code that borrowed."""

import time

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from staunch.prometheus import StaunchCollector


def test_collector_exports_the_pool_through_prometheus_client(pool_factory, server):
    pool = pool_factory("max_size=2&pool_name=py%20orders")
    assert pool.name == "py orders"
    registry = CollectorRegistry()
    registry.register(StaunchCollector(pool))
    for _ in range(3):
        with pool.connection() as conn:
            conn.cursor().execute("DO 1")
    # The first scrape turned timings on: these borrows are timed.
    generate_latest(registry)
    for _ in range(2):
        with pool.connection() as conn:
            conn.cursor().execute("DO SLEEP(0.02)")

    text = generate_latest(registry).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    port = str(server.server["port"])
    host = {
        "db_client_connection_pool_name": "py orders",
        "server_address": "127.0.0.1",
        "server_port": port,
    }
    value = registry.get_sample_value
    assert value("staunch_acquires_total", host) == 5
    assert value("db_client_connection_wait_time_seconds_count", host) == 5
    assert value("db_client_connection_use_time_seconds_count", host) == 2
    assert value("db_client_connection_use_time_seconds_sum", host) >= 0.04
    # Python's end of block commits: a statement too.
    assert value("db_client_operation_duration_seconds_count", host) >= 2
    assert value("db_client_connection_max", host) == 2
    assert families["db_client_connection_wait_time_seconds"].type == "histogram"
    assert families["staunch_connections_created"].type == "counter"
    idle = value("db_client_connection_count", {**host, "db_client_connection_state": "idle"})
    assert idle == value("staunch_connections_created_total", host)

    pool.close()
    assert generate_latest(registry) == b""


def leaky_handler(pool):
    """Borrows and holds the connection past the leak threshold."""
    conn = pool.connection()
    time.sleep(0.3)
    conn.close()


def test_a_leak_report_names_the_python_code_that_borrowed(pool_factory):
    seen = []
    pool = pool_factory("leak_detection_threshold=50ms&max_size=1", on_event=seen.append)
    leaky_handler(pool)
    deadline = time.monotonic() + 5
    while not any(e.kind == "leak_suspected" for e in seen) and time.monotonic() < deadline:
        time.sleep(0.01)
    leaks = [e.message for e in seen if e.kind == "leak_suspected"]
    assert len(leaks) == 1, seen
    # The borrower's own frames, not staunch's or the foreign call's.
    assert "possible leak; borrowed at:" in leaks[0]
    assert 'test_metrics.py", line' in leaks[0] and "in leaky_handler" in leaks[0], leaks[0]
    assert "_core.py" not in leaks[0], leaks[0]
