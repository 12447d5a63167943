"""Fixtures of the plugin tests (the helpers they share live in tests/helpers/plugin.py)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.plugin import make_dataset


@pytest.fixture
def dataset(pytester: pytest.Pytester) -> Path:
    return make_dataset(pytester.path)


@pytest.fixture(autouse=True)
def validated_run_files(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every run file (and baseline) a plugin test's pytester run writes in this process is checked against the run
    file's JSON Schema when it is written, not only when a later run reads it back; the test fails at its end when one
    is not valid. Yields the list of the paths checked."""
    from pytest_ocrmetrics.runfile.read import RunFileError, load_run

    # the module in sys.modules, which a pytester run imports: after an earlier in-process run, the package's
    # ``files`` attribute may still name a module object that run's clean-up took out of sys.modules
    files = importlib.import_module("pytest_ocrmetrics.reporting.files")

    checked: list[Path] = []
    invalid: list[str] = []
    write_reports = files.write_reports

    def validating(*args: Any, **kwargs: Any) -> Any:
        try:
            written = write_reports(*args, **kwargs)
        except files.ReportError as exc:  # some report failed: the files that were written are still checked
            written = getattr(exc, "written", {}) or {}
            _check(written)
            raise
        _check(written)
        return written

    def _check(written: Any) -> None:
        for key in ("json", "baseline"):  # a file that failed to write keeps its previous content: not checked
            path = written.get(key) if isinstance(written, dict) else None
            if path is not None and Path(path).is_file():
                checked.append(Path(path))
                try:
                    load_run(path)  # the schema, and finite numbers only
                except RunFileError as exc:
                    invalid.append(str(exc))

    monkeypatch.setattr(files, "write_reports", validating)
    yield checked
    assert not invalid, invalid
