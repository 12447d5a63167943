"""Real engines through the whole plugin: the README's first command, and real scans from ../shared/data."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "pytest_ocrmetrics" / "runfile" / "run_schema.json").read_text(encoding="utf-8"))


def _need_tesseract() -> None:
    if importlib.util.find_spec("pytesseract") is None:
        pytest.skip('pytesseract is not installed: pip install "pytest-ocrmetrics[tesseract]"')
    if shutil.which("tesseract") is None:
        pytest.skip("the tesseract binary is not installed: apt-get install tesseract-ocr")


def _need_rapidocr() -> None:
    if importlib.util.find_spec("rapidocr") is None or importlib.util.find_spec("onnxruntime") is None:
        pytest.skip('rapidocr is not installed: pip install "pytest-ocrmetrics[rapidocr]"')


def _pytest(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    run_file = tmp_path / "run.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "--ocr-no-cache", f"--ocr-json={run_file}", "-p", "no:cacheprovider",
         "-p", "no:randomly", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert run_file.exists(), proc.stdout[-4000:] + proc.stderr[-4000:]
    run = json.loads(run_file.read_text(encoding="utf-8"))
    jsonschema.validate(run, SCHEMA)
    return proc, run


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["tesseract", "rapidocr"])
def test_readme_first_command_passes(tmp_path: Path, engine: str) -> None:
    (_need_tesseract if engine == "tesseract" else _need_rapidocr)()
    proc, run = _pytest(tmp_path, "example_suites", f"--ocr-engine={engine}")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "OCR metrics" in proc.stdout
    datasets = {row["dataset"] for row in run["summary"]}
    assert datasets == {"pages", "plates", "receipts"}
    for row in run["summary"]:
        assert row["failed"] == 0 and row["errors"] == 0
        assert row["metrics"]["cer"]["micro"] < 0.05


@pytest.mark.slow
def test_tesseract_on_real_pages_and_lines(shared_data: Path, tmp_path: Path) -> None:
    _need_tesseract()
    proc, run = _pytest(tmp_path, str(shared_data / "ocr_pages_lines"), f"--ocr-dataset={shared_data / 'ocr_pages_lines'}",
                        "--ocr-engine=tesseract")
    documents = {d["id"]: d for d in run["documents"]}
    assert len(documents) == 10
    assert documents["page-tesseract-phototest.tif"]["metrics"]["cer"] < 0.02  # Tesseract's own test page
    fraktur = documents["page-ocrd-kant_aufklaerung_1784_0017.tif"]["metrics"]["cer"]
    assert fraktur > 0.05  # the stock eng model cannot read Fraktur: the metric must show it
    assert {d["outcome"] for d in documents.values()} == {"passed"}  # no thresholds given


@pytest.mark.slow
def test_tesseract_on_real_receipts_with_casefold_and_fields(shared_data: Path, tmp_path: Path) -> None:
    _need_tesseract()
    dataset = shared_data / "sroie_receipts"
    proc, plain = _pytest(tmp_path, str(dataset), f"--ocr-dataset={dataset}", "--ocr-engine=tesseract", "--ocr-limit=4")
    proc, folded = _pytest(tmp_path, str(dataset), f"--ocr-dataset={dataset}", "--ocr-engine=tesseract", "--ocr-limit=4",
                           "--ocr-normalize=nfc+casefold")
    # the ground truth is uppercase, the receipts are not: case folding must lower CER a lot (SOURCE.md: 0.34 -> 0.05-0.25)
    assert folded["summary"][0]["metrics"]["cer"]["micro"] < plain["summary"][0]["metrics"]["cer"]["micro"] - 0.05
    assert folded["summary"][0]["metrics"]["field_f1"]["n"] == 4
