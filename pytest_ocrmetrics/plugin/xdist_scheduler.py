"""pytest-xdist's ``--dist load`` that keeps each worker's prefetch pool fed to the end of the run.

pytest-xdist's load scheduler hands a worker more tests when it has fewer than a quarter of its share of the pending
ones left, and only up to half of that share: as the run nears its end a worker is given one or two tests at a time.
A worker recognises ahead only the documents of the tests it was given, so against a remote engine the last part of
a run had one or two requests in flight per worker however high ``--ocr-concurrency`` was (64 pages at 100 ms: the
requests took 1.2 s with ``-n 2`` instead of 0.4 s). This scheduler is the same, but a worker is topped up to twice
``--ocr-concurrency`` tests while tests are pending: its pool's requests in flight, and as many queued behind them (a
test handed over while the worker waits for a result is only seen when the next test starts; with no backlog the
pool would idle meanwhile, and half the requests would be in flight). It replaces xdist's only for ``--dist load``
(the default with ``-n``) without ``--maxschedchunk``, in a run with an engine and ``--ocr-concurrency`` of 2 or
more: another distribution mode, or a chunk limit, is kept exactly as chosen. The cost: at the very end one worker
may still hold up to that many tests while another has none (recognised ahead, they take a few round trips).
"""

from __future__ import annotations

from typing import Any

__all__ = ["prefetching_load_scheduler"]


def prefetching_load_scheduler(config: Any, log: Any, minimum: int) -> Any:
    """An instance of xdist's ``LoadScheduling`` that tops each worker up to ``minimum`` pending tests, or None
    (xdist then makes its own) when this xdist lacks what it relies on."""
    try:
        from xdist.scheduler.load import LoadScheduling
    except ImportError:  # pragma: no cover - an xdist without the module: its own scheduler
        return None
    if not all(callable(getattr(LoadScheduling, name, None)) for name in ("check_schedule", "_send_tests")):
        return None  # pragma: no cover - a future xdist

    class PrefetchingLoadScheduling(LoadScheduling):
        def check_schedule(self, node: Any, duration: float = 0) -> None:
            pending_here = self.node2pending.get(node)
            if not node.shutting_down and self.pending and pending_here is not None and len(pending_here) < minimum:
                self._send_tests(node, min(minimum - len(pending_here), len(self.pending)))
            super().check_schedule(node, duration)  # xdist's own rule on top (and the shutdown once none is left)

    return PrefetchingLoadScheduling(config, log)
