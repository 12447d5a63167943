"""``--ocr-repeats=N``: recognise every document N times with a live engine and keep all N texts.

Vision-language models sampled at temperature > 0 give a different page each time; olmOCR-bench therefore checks
its facts on several outputs of the same page and lets a strict majority decide. :class:`RepeatingEngine` wraps an
engine so that ``recognize`` runs it ``repeats`` times and returns the first output with every repeat's text in
``metadata["repeats"]`` (:mod:`pytest_ocrmetrics.scoring.document` checks each fact on each of them; text metrics use
``text``, the first repeat). ``elapsed_s`` is the sum of the repeats' times; ``cached`` is set only when every repeat
came from the cache. An error in any repeat is the document's error.

With an output cache each repeat has its own entry: repeat 1 the engine's usual key (a cache filled by a run without
repeats is reused), repeat ``r > 1`` a key whose identity also holds ``"repeat": r``
(:meth:`~pytest_ocrmetrics.engines.cache.CachingEngine.recognize`), so a rerun gives back the same N texts without calling
the engine. Engines that are not a function of the image (``cacheable = False``: the replay engine, which reads the
benchmark's own ``_repeat<r>`` files) are not wrapped.

Example::

    >>> engine = RepeatingEngine(VlmEngine(temperature=0.7), 3, cache=OutputCache(".ocr-cache"))  # doctest: +SKIP
    >>> output = engine.recognize(page)                                                          # doctest: +SKIP
    >>> len(output.metadata["repeats"]), output.text == output.metadata["repeats"][0]             # doctest: +SKIP
    (3, True)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineWrapper, OcrEngine, OcrOutput, with_image_bytes
from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache

__all__ = ["RepeatingEngine", "OcrRepeatsWarning", "combine_repeats", "not_repeated_message"]


class OcrRepeatsWarning(UserWarning):
    """``--ocr-repeats`` does not apply to an engine of the run (one that replays outputs made elsewhere)."""


def not_repeated_message(label: str, repeats: int) -> str:
    """The one line said when ``--ocr-repeats`` is given but engine ``label`` cannot be repeated."""
    return (f"--ocr-repeats={repeats} does not apply to engine {label!r}: its outputs are read, not recognised (the "
            "replay engine takes the repeats of a page from its <page>_repeat<r>.md files); it runs once per document")


def combine_repeats(outputs: Sequence[OcrOutput]) -> OcrOutput:
    """One output standing for all ``outputs`` (the repeats of one page, in order): the first, with every text in
    ``metadata["repeats"]``, the summed ``elapsed_s``, and ``cached`` only when all were cached.

    >>> combined = combine_repeats([OcrOutput("a", elapsed_s=1.0), OcrOutput("b", elapsed_s=2.0, cached=True)])
    >>> combined.text, combined.metadata["repeats"], combined.elapsed_s, combined.cached
    ('a', ['a', 'b'], 3.0, False)
    """
    first = outputs[0]
    return replace(
        first,
        elapsed_s=sum(output.elapsed_s for output in outputs),
        cached=all(output.cached for output in outputs),
        metadata={**first.metadata, "repeats": [output.text for output in outputs]},
    )


class RepeatingEngine(EngineWrapper):
    """Runs ``engine`` ``repeats`` times per document (through ``cache`` when given); see the module docstring.

    It implements the engine protocol: ``name``, ``close()`` and every other attribute (``concurrent``,
    ``batch_size``, ``cancel``, ...) pass through, ``identity()`` is the engine's plus ``"repeats": N`` (what the run
    file records; cache keys use the engine's own identity), and ``recognize_batch`` exists exactly when the engine
    has it (each repeat is one batch call, running only that repeat's cache misses). Repeats of one document run one
    after another, in the calling thread: a prefetch pool's ``--ocr-concurrency`` still bounds the requests in flight.
    """

    _own = ("engine", "_caching")  # set by __init__

    def __init__(self, engine: OcrEngine, repeats: int, *, cache: OutputCache | None = None) -> None:
        if repeats < 1:
            raise ValueError(f"repeats must be at least 1, got {repeats}")
        self.engine = engine
        self.repeats = repeats
        self.name = engine.name
        self._caching = CachingEngine(engine, cache) if cache is not None else None
        if callable(getattr(engine, "recognize_batch", None)):
            self.recognize_batch = self._recognize_batch

    def __repr__(self) -> str:
        return f"RepeatingEngine({self.engine!r}, {self.repeats}, cache={self.cache!r})"

    @property
    def cache(self) -> OutputCache | None:
        return None if self._caching is None else self._caching.cache

    def identity(self) -> Mapping[str, Any]:
        identity = self._caching.identity() if self._caching is not None else self.engine.identity()
        return {**identity, "repeats": self.repeats} if self.repeats > 1 else identity

    def _recognize_once(self, document: Document, repeat: int) -> OcrOutput:
        if self._caching is not None:
            return self._caching.recognize(document, repeat=repeat)
        return self.engine.recognize(document)

    def recognize(self, document: Document) -> OcrOutput:
        document = with_image_bytes(document)  # read (or render) once for all repeats
        return combine_repeats([self._recognize_once(document, repeat) for repeat in range(1, self.repeats + 1)])

    def _recognize_batch(self, documents: Sequence[Document]) -> list[OcrOutput | BaseException]:
        results: list[OcrOutput | BaseException | None] = [None] * len(documents)
        ready: list[Document] = []
        places: list[int] = []  # index in ``documents`` of each entry of ``ready``
        for index, document in enumerate(documents):
            try:
                ready.append(with_image_bytes(document))
                places.append(index)
            except Exception as exc:  # unreadable image: that document fails, the batch goes on
                results[index] = exc
        per_document: list[list[OcrOutput]] = [[] for _ in ready]
        failed: dict[int, BaseException] = {}
        for repeat in range(1, self.repeats + 1):
            todo = [position for position in range(len(ready)) if position not in failed]
            if not todo:
                break
            batch = [ready[position] for position in todo]
            if self._caching is not None:
                outputs = self._caching.recognize_batch(batch, repeat=repeat)
            else:
                outputs = self.engine.recognize_batch(batch)
            for position, output in zip(todo, outputs):
                if isinstance(output, OcrOutput):
                    per_document[position].append(output)
                else:
                    failed[position] = output
        for position, index in enumerate(places):
            if position in failed:
                results[index] = failed[position]
            elif len(per_document[position]) == self.repeats:
                results[index] = combine_repeats(per_document[position])
        return [r if r is not None else RuntimeError("no result") for r in results]

    def close(self) -> None:
        self.engine.close()
