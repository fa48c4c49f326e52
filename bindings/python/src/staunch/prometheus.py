"""A ``prometheus_client`` collector for a staunch pool.

    from prometheus_client import REGISTRY
    from staunch.prometheus import StaunchCollector

    REGISTRY.register(StaunchCollector(pool))

Each scrape reads the pool's one Prometheus text (``Pool.metrics_text()``,
written by the library, so every face exports the same names: OpenTelemetry's
``db_client_connection_*`` and ``db_client_operation_duration_seconds``, and
staunch's own ``staunch_*``) and hands its families to ``prometheus_client``
as they are. Nothing is kept between scrapes and nothing runs between them.
Needs ``prometheus_client`` (``pip install staunch[prometheus]``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from ._core import Pool

__all__ = ["StaunchCollector"]


class StaunchCollector:
    """Collects one pool's figures at each scrape (``prometheus_client``'s
    custom-collector protocol). A closed pool yields nothing."""

    def __init__(self, pool: Pool):
        self._pool = pool

    def describe(self) -> list:
        # No families up front: registering then costs no scrape.
        return []

    def collect(self) -> Iterator[Metric]:
        if self._pool.closed:
            return iter(())
        return text_string_to_metric_families(self._pool.metrics_text())
