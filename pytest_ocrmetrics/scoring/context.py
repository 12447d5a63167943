"""The running OCR test's context: what the plugin knows about it (the document, the engine, the scoring
options), its score computed once, and the checks the assertion helpers record on it.

The plugin makes one :class:`OcrTestContext` per OCR test and sets :data:`current_context` while the test runs;
the assertion helpers (:mod:`pytest_ocrmetrics.assertions`) read it to score an ``OcrOutput`` against the test's
document and to record each check, pass or fail.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.scoring.document import DocumentScore, ScoringError, ScoringOptions, score_document

__all__ = ["OcrTestContext", "current_context"]


@dataclass
class OcrTestContext:
    """What the plugin knows about the running OCR test; lets helpers score an ``OcrOutput`` and record checks."""

    document: Document
    engine: str
    options: ScoringOptions
    score: DocumentScore | None = None
    checks: list[dict[str, Any]] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # metrics of thresholds this document could not be judged on
    score_error: tuple[OcrOutput, ScoringError] | None = None  # the output that could not be scored, and why

    def score_output(self, output: OcrOutput) -> DocumentScore:
        """The score of ``output``, computed once; :class:`ScoringError` (computed once too: a schema pattern may
        take its full time limit) when the document cannot be scored."""
        if self.score is None or self.score.output is not output:
            if self.score_error is not None and self.score_error[0] is output:
                raise self.score_error[1]
            try:
                self.score = score_document(self.document, output, engine=self.engine, options=self.options)
            except ScoringError as exc:
                self.score_error = (output, exc)
                raise
        return self.score


current_context: ContextVar[OcrTestContext | None] = ContextVar("ocrmetrics_test_context", default=None)
