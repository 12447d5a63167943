"""Runs of the olmOCR-bench facts plugin tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ocrmetrics.runfile.read import validate_run


def run_facts(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "-p", "no:randomly", *args)


def read_run_file(path: Path) -> dict:
    run = json.loads(path.read_text(encoding="utf-8"))
    validate_run(run, str(path))
    return run
