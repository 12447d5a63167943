"""Hooks other plugins and ``conftest.py`` files can implement.

Each hook is documented with a runnable example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_ocrmetrics.engines.registry import EngineRegistry


def pytest_ocrmetrics_register_engines(registry: EngineRegistry) -> None:
    """Register third-party OCR engines; called once per session, before any engine is created.

    Example ``conftest.py``::

        from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

        class UpperEngine:
            name = "upper"
            def identity(self): return {"engine": "upper", "version": 1}
            def recognize(self, document): return OcrOutput(text=document.reference_text.upper(), engine="upper")
            def close(self): pass

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("upper", lambda arg, options: UpperEngine(), description="uppercases the truth"))

    Then ``pytest --ocr-engine=upper --ocr-dataset=data``. An installed package can do the same with no
    configuration through the entry-point group ``pytest_ocrmetrics.engines``.
    """


@pytest.hookspec(firstresult=True)
def pytest_ocrmetrics_process_output(document: Any, output: Any, engine: str) -> Any:
    """Return a replacement :class:`~pytest_ocrmetrics.engines.base.OcrOutput` before it is scored, or ``None``.

    Use it for pipeline steps that belong to the system under test (spell correction, case mapping). The first
    non-``None`` result wins. Example: score only the first line of every output::

        import dataclasses

        def pytest_ocrmetrics_process_output(document, output, engine):
            return dataclasses.replace(output, text=output.text.splitlines()[0] if output.text else "")
    """
