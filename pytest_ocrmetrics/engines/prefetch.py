"""Recognise documents ahead of the tests that need them, with a bounded pool of worker threads.

A remote vision-language model takes seconds per page but serves many pages at once, so a suite that sends one
request per test leaves the server idle most of the time. :class:`Prefetcher` starts recognition for every collected
document as soon as collection is done, in collection order, with at most ``concurrency`` requests in flight; a test
then only waits for its own document (:meth:`Prefetcher.result`), which is usually ready already.

* A test that asks for a document the pool has not reached yet moves it to the front of the queue.
* Engines with ``recognize_batch(documents)`` (local transformers backends) get documents in batches of the engine's
  ``batch_size``.
* Errors belong to one document: its :meth:`~Prefetcher.result` re-raises the exception; the others carry on.
  With a dead server each request fails after its retries (and later ones fast, see
  :mod:`pytest_ocrmetrics.engines.http`), so the session ends in errors, never a stall.
* :meth:`Prefetcher.close` with ``cancel=True`` (the default; what Ctrl-C and ``-x`` call) drops queued work, tells the
  engine to stop (its ``cancel()`` method, when it has one) and returns at once; workers are daemon threads, so a
  request still on the wire never keeps the interpreter alive.

Wrap the engine in :class:`~pytest_ocrmetrics.engines.cache.CachingEngine` first: a cached page then costs no request, and
is not even queued: its test reads the cache entry in its own thread (no hand-over to a worker).

Example::

    >>> prefetcher = Prefetcher(CachingEngine(engine, cache), documents, concurrency=16)  # doctest: +SKIP
    >>> prefetcher.start()                                                                 # doctest: +SKIP
    >>> prefetcher.result(documents[0]).text                                               # doctest: +SKIP
    'Invoice 2024-001 ...'
    >>> prefetcher.close()                                                                 # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Sequence

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineError, OcrEngine, OcrOutput

__all__ = ["Prefetcher", "PrefetchStats", "wants_prefetch"]

_PENDING, _RUNNING, _DONE = "pending", "running", "done"


def wants_prefetch(engine: OcrEngine, concurrency: int) -> bool:
    """Whether a session should prefetch: more than one worker asked for, or a remote/batching engine; never for
    an engine that says ``in_process = True`` (the replay engine reads a local file: a pool thread would only add
    its hand-over and contend for the GIL with the tests).

    >>> class Remote: concurrent = True
    >>> wants_prefetch(Remote(), 1)
    True
    >>> class Replay: concurrent = True; in_process = True
    >>> wants_prefetch(Replay(), 8)
    False
    """
    if getattr(engine, "in_process", False):
        return False
    return (
        concurrency > 1
        or bool(getattr(engine, "concurrent", False))
        or callable(getattr(engine, "recognize_batch", None))
    )


@dataclass(frozen=True)
class PrefetchStats:
    """A snapshot of the pool: how many documents are queued, running, done and failed."""

    total: int
    pending: int
    running: int
    done: int
    failed: int


class _Slot:
    __slots__ = ("document", "state", "output", "error", "event")

    def __init__(self, document: Document) -> None:
        self.document = document
        self.state = _PENDING
        self.output: OcrOutput | None = None
        self.error: BaseException | None = None
        self.event = threading.Event()


class Prefetcher:
    """A bounded pool that recognises ``documents`` in order, ``concurrency`` at a time.

    Only engines with ``concurrent = True`` (thread-safe ``recognize``, e.g. remote engines) get ``concurrency``
    worker threads; any other engine gets one background worker, which still runs ahead of the tests.
    Documents are identified by ``Document.id`` (duplicates are recognised once); documents with a load-time
    ``error`` are left out. ``batch_size`` defaults to the engine's ``batch_size`` attribute when the engine has
    ``recognize_batch``, else 1.
    """

    def __init__(
        self,
        engine: OcrEngine,
        documents: Sequence[Document],
        *,
        concurrency: int,
        batch_size: int | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.engine = engine
        self.concurrency = concurrency
        # the engine protocol: recognize() may run in several threads at once only when the engine says so
        self.workers = concurrency if getattr(engine, "concurrent", False) else 1
        batching = callable(getattr(engine, "recognize_batch", None))
        if batch_size is None:
            batch_size = int(getattr(engine, "batch_size", 1) or 1) if batching else 1
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.batch_size = batch_size if batching else 1
        self._slots: dict[str, _Slot] = {}
        self._in_process: set[str] = set()  # ids whose output the cache holds: read by their test, never queued
        cached = self._cached(documents)
        for document in documents:
            if document.error is None and document.id not in self._slots and document.id not in cached:
                self._slots[document.id] = _Slot(document)
        self._pending: deque[str] = deque(self._slots)
        self._urgent: deque[str] = deque()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._started = False
        self._closed = False

    def __repr__(self) -> str:
        return f"Prefetcher({self.engine!r}, {len(self._slots)} documents, concurrency={self.concurrency})"

    # -- lifecycle ------------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker threads (idempotent)."""
        with self._lock:
            if self._started or self._closed:
                return
            self._started = True
            batches = -(-len(self._slots) // self.batch_size)
            workers = min(self.workers, batches)
        for number in range(workers):
            thread = threading.Thread(target=self._work, name=f"ocr-prefetch-{number}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def add(self, documents: Sequence[Document]) -> int:
        """Queue more documents (an xdist worker learns its tests a few at a time); those already known are left as
        they are. Starts the pool, or restarts workers that ran out of work. Returns how many were queued.
        """
        added = 0
        with self._lock:
            known = set(self._slots) | self._in_process
        self._cached([document for document in documents if document.id not in known])
        with self._lock:
            if self._closed:
                return 0
            for document in documents:
                if document.error is None and document.id not in self._slots and document.id not in self._in_process:
                    self._slots[document.id] = _Slot(document)
                    self._pending.append(document.id)
                    added += 1
            if not added:
                return 0
            self._threads = [thread for thread in self._threads if thread.is_alive()]
            wanted = min(self.workers, -(-(len(self._pending) + len(self._urgent)) // self.batch_size))
            missing = max(0, wanted - len(self._threads)) if self._started else 0
        if not self._started:
            self.start()
        for _ in range(missing):
            thread = threading.Thread(target=self._work, name=f"ocr-prefetch-{len(self._threads)}", daemon=True)
            self._threads.append(thread)
            thread.start()
        return added

    def _cached(self, documents: Sequence[Document]) -> set[str]:
        """The ids of ``documents`` whose output the engine's cache already holds (an engine wrapped in
        :class:`~pytest_ocrmetrics.engines.cache.CachingEngine` says so with ``has_cached``): they are left out of the
        queue, and :meth:`result` reads each in its test's own thread, without handing it to a worker."""
        has_cached = getattr(self.engine, "has_cached", None)
        if not callable(has_cached):
            return set()
        cached = {document.id for document in documents if document.error is None and has_cached(document) is True}
        self._in_process |= cached
        return cached

    def close(self, cancel: bool = True) -> None:
        """Stop the pool.

        ``cancel=True`` drops every queued document (its result becomes an ``EngineError`` "cancelled"), calls the
        engine's ``cancel()`` when it has one, and returns without waiting for requests in flight.
        ``cancel=False`` lets the queue drain and waits for the workers.
        """
        with self._lock:
            self._closed = True
            dropped: list[_Slot] = []
            if cancel:
                for doc_id in list(self._urgent) + list(self._pending):
                    slot = self._slots[doc_id]
                    if slot.state == _PENDING:
                        slot.state = _DONE
                        slot.error = EngineError(f"recognition of document {doc_id!r} was cancelled")
                        dropped.append(slot)
                self._urgent.clear()
                self._pending.clear()
        for slot in dropped:
            slot.event.set()
        if cancel:
            engine_cancel = getattr(self.engine, "cancel", None)
            if callable(engine_cancel):
                engine_cancel()
            for thread in self._threads:
                thread.join(timeout=0.05)
        else:
            for thread in self._threads:
                thread.join()

    def __enter__(self) -> Prefetcher:
        self.start()
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(cancel=exc_type is not None)

    # -- results --------------------------------------------------------------------------------------------------

    def result(self, document: Document) -> OcrOutput:
        """The output for ``document``, waiting for it if needed; re-raises the document's exception.

        A document the pool does not know (not among the collected ones), or whose output the cache holds, is
        recognised right here, in the caller's thread. One that is still queued jumps to the front of the queue.
        """
        slot = self._slots.get(document.id)
        if slot is None:
            return self.engine.recognize(document)
        if not self._started:
            self.start()
        with self._lock:
            if slot.state == _PENDING and not self._closed:
                self._urgent.append(document.id)
            workers_alive = any(thread.is_alive() for thread in self._threads)
            orphan = slot.state == _PENDING and not workers_alive
            if orphan:
                slot.state = _RUNNING
        if orphan:  # the pool finished or was closed without cancelling this one: do it here
            self._run([slot])
        while not slot.event.wait(0.25):
            pass
        if slot.error is not None:
            raise slot.error
        assert slot.output is not None
        return slot.output

    def stats(self) -> PrefetchStats:
        """How far the pool has got."""
        with self._lock:
            states = [slot.state for slot in self._slots.values()]
            failed = sum(1 for slot in self._slots.values() if slot.state == _DONE and slot.error is not None)
        return PrefetchStats(
            total=len(states),
            pending=states.count(_PENDING),
            running=states.count(_RUNNING),
            done=states.count(_DONE),
            failed=failed,
        )

    # -- workers --------------------------------------------------------------------------------------------------

    def _take(self) -> list[_Slot]:
        with self._lock:
            taken: list[_Slot] = []
            for queue in (self._urgent, self._pending):
                while queue and len(taken) < self.batch_size:
                    slot = self._slots[queue.popleft()]
                    if slot.state == _PENDING:
                        slot.state = _RUNNING
                        taken.append(slot)
            return taken

    def _work(self) -> None:
        while True:  # close(cancel=True) empties the queues, so this ends promptly
            batch = self._take()
            if not batch:
                return
            self._run(batch)

    def _run(self, batch: list[_Slot]) -> None:
        results: list[OcrOutput | BaseException]
        try:
            if len(batch) > 1 or self.batch_size > 1:
                results = list(self.engine.recognize_batch([slot.document for slot in batch]))  # type: ignore[attr-defined]
                if len(results) != len(batch):
                    raise EngineError(
                        f"{type(self.engine).__name__}.recognize_batch returned {len(results)} results for "
                        f"{len(batch)} documents"
                    )
            else:
                results = [self.engine.recognize(batch[0].document)]
        except BaseException as exc:  # noqa: BLE001 - the error belongs to these documents, the pool goes on
            results = [exc] * len(batch)
        with self._lock:
            for slot, result in zip(batch, results):
                slot.state = _DONE
                if isinstance(result, BaseException):
                    slot.error = result
                else:
                    slot.output = result
        for slot in batch:
            slot.event.set()
