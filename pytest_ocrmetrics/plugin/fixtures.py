"""The OCR fixtures of a test function parametrized with documents × engines (pytest finds them through
:mod:`pytest_ocrmetrics.plugin`, which imports them).

Every pytest run imports this module (the fixtures must exist), so it imports nothing of the OCR code at module
level: a fixture imports what it needs when a test asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

import pytest

from pytest_ocrmetrics.plugin.keys import CASE_ARG, ITEM_STATE, plugin_state

if TYPE_CHECKING:
    from pytest_ocrmetrics.engines.base import OcrOutput
    from pytest_ocrmetrics.scoring.document import DocumentScore
    from pytest_ocrmetrics.scoring.runner import OcrCase

__all__ = ["ocr_case", "ocr_document", "ocr_engine", "ocr_output", "ocr_score"]


@pytest.fixture(name=CASE_ARG)
def ocr_case(request: pytest.FixtureRequest) -> OcrCase:
    """The document × engine of this test (set by parametrization); the fixture is named ``_ocr_case``."""
    from pytest_ocrmetrics.scoring.runner import OcrCase

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
    from pytest_ocrmetrics.engines.base import EngineUnavailable
    from pytest_ocrmetrics.plugin.checks import engine_creation_message
    from pytest_ocrmetrics.scoring.runner import EngineCreationError

    try:
        return plugin_state(request.config).run_config.runner.engine(_ocr_case.engine)
    except EngineUnavailable as exc:
        pytest.skip(f"engine {_ocr_case.engine.name!r} is not available: {exc}")
    except EngineCreationError as exc:
        raise pytest.fail.Exception(engine_creation_message(exc), pytrace=False) from None


@pytest.fixture
def ocr_output(request: pytest.FixtureRequest, _ocr_case: OcrCase) -> Generator[OcrOutput, None, None]:
    """What the engine returned for this document (:class:`~pytest_ocrmetrics.engines.base.OcrOutput`)."""
    from pytest_ocrmetrics.assertions import current_context
    from pytest_ocrmetrics.plugin.checks import item_state_for, recognize

    state = plugin_state(request.config)
    item_state = item_state_for(request.node, state, _ocr_case)
    output = recognize(request.node, state, item_state)
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
    from pytest_ocrmetrics.scoring.document import ScoringError
    from pytest_ocrmetrics.scoring.runner import printable_id

    try:
        return request.node.stash[ITEM_STATE].context.score_output(ocr_output)
    except ScoringError as exc:
        raise pytest.fail.Exception(printable_id(str(exc)), pytrace=False) from None
