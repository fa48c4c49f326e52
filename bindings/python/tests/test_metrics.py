"""The pool's figures through prometheus_client (issue 47): the collector
hands the library's Prometheus text to the registry, read back with the
client's own exposition and parser."""

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
