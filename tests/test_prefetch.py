"""The prefetching pool: order, bounds, errors per document, priority, batching and cancellation."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineError, OcrOutput
from pytest_ocrmetrics.engines.prefetch import Prefetcher, wants_prefetch


class GatedEngine:
    """A fake engine whose calls can be held at a gate; records order and the most calls in flight at once."""

    name = "gated"
    concurrent = True

    def __init__(self, *, fail: set[str] | None = None, hold_until: int | None = None) -> None:
        self.order: list[str] = []
        self.fail = fail or set()
        self.lock = threading.Condition()
        self.in_flight = 0
        self.max_in_flight = 0
        self.gate = threading.Event()
        self.hold_until = hold_until
        if hold_until is None:
            self.gate.set()
        self.cancelled = False

    def identity(self) -> Mapping[str, Any]:
        return {"engine": "gated"}

    def recognize(self, document: Document) -> OcrOutput:
        with self.lock:
            self.order.append(document.id)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.hold_until is not None and self.in_flight >= self.hold_until:
                self.gate.set()
        try:
            self.gate.wait(10)
            if document.id in self.fail:
                raise EngineError(f"server said no to {document.id}")
            return OcrOutput(text=f"text:{document.id}", engine=self.name)
        finally:
            with self.lock:
                self.in_flight -= 1

    def cancel(self) -> None:
        self.cancelled = True

    def close(self) -> None:
        return None


class BatchEngine(GatedEngine):
    concurrent = False

    def __init__(self, batch_size: int) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.batches: list[list[str]] = []

    def recognize_batch(self, documents: Sequence[Document]) -> list[OcrOutput | BaseException]:
        self.batches.append([d.id for d in documents])
        return [EngineError("bad page") if d.id == "d3" else OcrOutput(text=f"batch:{d.id}") for d in documents]


def wait_for(condition, timeout: float = 10.0) -> None:
    """Poll ``condition`` until it holds; fail (instead of hanging) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def docs(n: int, tmp_path: Path | None = None) -> list[Document]:
    return [Document(id=f"d{i}", dataset="x", image_path=None) for i in range(n)]


def test_results_come_back_for_every_document_each_recognised_once():
    engine = GatedEngine()
    documents = docs(20)
    with Prefetcher(engine, documents + documents[:3], concurrency=4) as prefetcher:
        texts = [prefetcher.result(d).text for d in documents]
    assert texts == [f"text:d{i}" for i in range(20)]
    assert sorted(engine.order) == sorted(d.id for d in documents)


@pytest.mark.parametrize("concurrency", [1, 3, 8])
def test_no_more_than_concurrency_calls_run_at_once(concurrency):
    engine = GatedEngine(hold_until=concurrency)
    with Prefetcher(engine, docs(24), concurrency=concurrency) as prefetcher:
        for document in docs(24):
            prefetcher.result(document)
    assert engine.max_in_flight == concurrency


def test_an_engine_that_is_not_thread_safe_gets_one_worker():
    engine = GatedEngine()
    engine.concurrent = False  # type: ignore[misc]
    with Prefetcher(engine, docs(12), concurrency=8) as prefetcher:
        assert prefetcher.workers == 1
        for document in docs(12):
            prefetcher.result(document)
    assert engine.max_in_flight == 1 and engine.order == [f"d{i}" for i in range(12)]


def test_work_starts_in_collection_order_with_one_worker():
    engine = GatedEngine()
    with Prefetcher(engine, docs(10), concurrency=1) as prefetcher:
        prefetcher.result(docs(10)[-1])
    assert engine.order == [f"d{i}" for i in range(10)]


def test_an_error_belongs_to_its_document_only():
    engine = GatedEngine(fail={"d2"})
    with Prefetcher(engine, docs(5), concurrency=2) as prefetcher:
        with pytest.raises(EngineError, match="server said no to d2"):
            prefetcher.result(docs(5)[2])
        assert [prefetcher.result(d).text for d in docs(5) if d.id != "d2"] == ["text:d0", "text:d1", "text:d3", "text:d4"]
        assert prefetcher.stats().failed == 1


def test_a_document_asked_for_early_jumps_the_queue():
    engine = GatedEngine(hold_until=99)  # the first call waits at the gate
    documents = docs(8)
    prefetcher = Prefetcher(engine, documents, concurrency=1)
    prefetcher.start()
    results: list[str] = []
    waiter = threading.Thread(target=lambda: results.append(prefetcher.result(documents[6]).text))
    waiter.start()
    wait_for(lambda: bool(prefetcher._urgent))  # white-box: the request for d6 is registered
    engine.gate.set()
    waiter.join(10)
    prefetcher.close(cancel=False)
    assert results == ["text:d6"]
    assert engine.order[:2] == ["d0", "d6"] and sorted(engine.order) == sorted(d.id for d in documents)


def test_batching_engines_get_batches_in_order_and_errors_stay_per_document():
    engine = BatchEngine(batch_size=3)
    documents = docs(7)
    with Prefetcher(engine, documents, concurrency=1) as prefetcher:
        assert prefetcher.batch_size == 3
        assert prefetcher.result(documents[0]).text == "batch:d0"
        with pytest.raises(EngineError, match="bad page"):
            prefetcher.result(documents[3])
        assert prefetcher.result(documents[6]).text == "batch:d6"
    assert engine.batches == [["d0", "d1", "d2"], ["d3", "d4", "d5"], ["d6"]]


def test_a_batch_that_raises_fails_all_its_documents_but_not_the_pool():
    class Broken(BatchEngine):
        def recognize_batch(self, documents):
            if documents[0].id == "d0":
                raise RuntimeError("CUDA out of memory")
            return super().recognize_batch(documents)

    with Prefetcher(Broken(batch_size=2), docs(4), concurrency=1) as prefetcher:
        for document in docs(2):
            with pytest.raises(RuntimeError, match="out of memory"):
                prefetcher.result(document)
        assert prefetcher.result(docs(4)[2]).text == "batch:d2"


def test_close_with_cancel_drops_queued_work_and_returns_while_a_call_is_stuck():
    engine = GatedEngine(hold_until=99)  # every call hangs until the gate opens
    documents = docs(6)
    prefetcher = Prefetcher(engine, documents, concurrency=2)
    prefetcher.start()
    wait_for(lambda: len(engine.order) >= 2)
    prefetcher.close()  # returns although two calls are still stuck in the engine
    assert engine.cancelled
    for document in documents[2:]:
        with pytest.raises(EngineError, match="cancelled"):
            prefetcher.result(document)
    assert engine.order == ["d0", "d1"]  # nothing new was started
    engine.gate.set()
    assert prefetcher.result(documents[0]).text == "text:d0"  # in-flight work still finishes


def test_close_without_cancel_drains_the_queue():
    engine = GatedEngine()
    prefetcher = Prefetcher(engine, docs(9), concurrency=2)
    prefetcher.start()
    prefetcher.close(cancel=False)
    assert prefetcher.stats().done == 9 and not engine.cancelled


def test_unknown_and_broken_documents_are_recognised_on_demand():
    engine = GatedEngine()
    broken = Document(id="broken", dataset="x", image_path=None, error="image missing")
    with Prefetcher(engine, [*docs(2), broken], concurrency=2) as prefetcher:
        assert prefetcher.stats().total == 2  # the broken one is not prefetched
        extra = Document(id="extra", dataset="x", image_path=None)
        assert prefetcher.result(extra).text == "text:extra"


def test_result_before_start_starts_the_pool():
    engine = GatedEngine()
    prefetcher = Prefetcher(engine, docs(3), concurrency=2)
    assert prefetcher.result(docs(3)[1]).text == "text:d1"
    prefetcher.close()


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        Prefetcher(GatedEngine(), docs(1), concurrency=0)


def test_wants_prefetch():
    class Local:
        name = "local"

    assert not wants_prefetch(Local(), 1)
    assert wants_prefetch(Local(), 4)
    assert wants_prefetch(GatedEngine(), 1)  # concurrent = True
    assert wants_prefetch(BatchEngine(2), 1)  # can batch
