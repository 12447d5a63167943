"""The OCR fixtures of a test function parametrized with documents × engines (pytest finds them through
:mod:`pytest_ocrmetrics.plugin`, which imports them)."""

from __future__ import annotations

from typing import Any, Generator

import pytest

from pytest_ocrmetrics.scoring.context import current_context
from pytest_ocrmetrics.engines.base import EngineUnavailable, OcrOutput
from pytest_ocrmetrics.plugin.checks import _creation_message, _item_state, _recognize
from pytest_ocrmetrics.plugin.state import ITEM_STATE, _state
from pytest_ocrmetrics.scoring.runner import EngineCreationError, OcrCase, printable_id
from pytest_ocrmetrics.scoring.document import DocumentScore, ScoringError


@pytest.fixture
def _ocr_case(request: pytest.FixtureRequest) -> OcrCase:
    """The document × engine of this test (set by parametrization)."""
    case = getattr(request, "param", None)
    if not isinstance(case, OcrCase):
        pytest.fail(f"{request.node.nodeid}: OCR fixtures need a dataset (ocr_dataset marker or --ocr-dataset)",
                    pytrace=False)
    return case


@pytest.fixture
def ocr_document(_ocr_case: OcrCase) -> Any:
    """The :class:`~pytest_ocrmetrics.core.documents.Document` of this test: image path, reference text, fields."""
    return _ocr_case.document


@pytest.fixture
def ocr_engine(request: pytest.FixtureRequest, _ocr_case: OcrCase) -> Any:
    """The engine of this test, created once per session (per xdist worker) and shared by its tests."""
    try:
        return _state(request.config).runner.engine(_ocr_case.engine)
    except EngineUnavailable as exc:
        pytest.skip(f"engine {_ocr_case.engine.name!r} is not available: {exc}")
    except EngineCreationError as exc:
        raise pytest.fail.Exception(_creation_message(exc), pytrace=False) from None


@pytest.fixture
def ocr_output(request: pytest.FixtureRequest, _ocr_case: OcrCase) -> Generator[OcrOutput, None, None]:
    """What the engine returned for this document (:class:`~pytest_ocrmetrics.engines.base.OcrOutput`)."""
    state = _state(request.config)
    item_state = _item_state(request.node, state, _ocr_case)
    output = _recognize(request.node, state, item_state)
    if item_state.filtered:
        pytest.skip(item_state.filtered)
    token = current_context.set(item_state.context)
    try:
        yield output
    finally:
        current_context.reset(token)


@pytest.fixture
def ocr_score(request: pytest.FixtureRequest, ocr_output: OcrOutput) -> DocumentScore:
    """Every metric of this output against this document (:class:`~pytest_ocrmetrics.scoring.document.DocumentScore`); a
    document that cannot be scored errors the test with its sentence."""
    try:
        return request.node.stash[ITEM_STATE].context.score_output(ocr_output)
    except ScoringError as exc:
        raise pytest.fail.Exception(printable_id(str(exc)), pytrace=False) from None
