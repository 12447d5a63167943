"""Hostile dataset files in a whole pytest run (issue 20, A2, A8, A13): the bad document errors with one sentence,
every other document is still scored, no traceback, and nothing outside the dataset reaches a report."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.helpers.plugin import PNG_1X1

pytest_plugins = ["pytester"]

# a cacheable engine whose text is the ground truth (every readable document passes); it logs the documents it saw
COUNTING_ENGINE = """
from pathlib import Path
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput, read_image

class Counting:
    name = "counting"
    def identity(self):
        return {"engine": "counting"}
    def recognize(self, document):
        read_image(document)
        with open(Path(__file__).parent / "calls.txt", "a") as log:
            log.write(document.id + "\\n")
        return OcrOutput(text=document.reference_text or "", engine="counting")
    def close(self):
        pass

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("counting", lambda arg, options: Counting()))
"""
SECRET = "root:x:0:0:words from outside the dataset"
RUN_TIMEOUT_S = 180  # a run that blocks on a FIFO fails the test instead of hanging the suite


def _sidecars(root: Path, *names: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / f"{name}.png").write_bytes(PNG_1X1 + name.encode())
        (root / f"{name}.gt.txt").write_text(f"text of {name}\n", encoding="utf-8")
    return root


def _outcomes(pytester: pytest.Pytester) -> dict[str, str]:
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    return {document["id"]: document["outcome"] for document in run["documents"]}


def _calls(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "calls.txt"
    return sorted(path.read_text().splitlines()) if path.exists() else []


def test_a_sidecar_linked_out_of_the_dataset_errors_its_document_and_never_reaches_a_report(
    pytester: pytest.Pytester,
) -> None:
    secret = pytester.path / "elsewhere" / "passwd"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    pages = _sidecars(pytester.path / "pages", "a", "b", "c")
    (pages / "b.gt.txt").unlink()
    os.symlink(secret, pages / "b.gt.txt")
    pytester.makeconftest(COUNTING_ENGINE)
    result = pytester.runpytest("--ocr-dataset=pages", "--ocr-engine=counting", "--ocr-json=run.json",
                                "--junitxml=out.xml")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([f"*b.gt.txt: ground-truth file is a symbolic link to '{secret}', outside the dataset "
                                 "folder *; copy the file into the dataset folder*"])
    assert _outcomes(pytester) == {"a.png": "passed", "b.png": "error", "c.png": "passed"}
    assert _calls(pytester) == ["a.png", "c.png"]
    reports = [(pytester.path / name).read_text(encoding="utf-8") for name in ("run.json", "out.xml")]
    for text in (result.stdout.str(), *reports):
        assert SECRET not in text and "Traceback" not in text


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_fifo_sidecar_and_a_fifo_cache_entry_never_hang_the_run(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    if not hasattr(os, "mkfifo"):
        pytest.skip("this system has no FIFOs (os.mkfifo)")
    pages = _sidecars(pytester.path / "pages", "a", "b", "c")
    (pages / "b.gt.txt").unlink()
    os.mkfifo(pages / "b.gt.txt")
    pytester.makeconftest(COUNTING_ENGINE)
    args = ["--ocr-dataset=pages", "--ocr-engine=counting", "--ocr-cache-dir=ocrcache", "--ocr-json=run.json",
            "-W", "always::pytest_ocrmetrics.engines.cache.OcrCacheWarning", *xdist]
    first = pytester.runpytest_subprocess(*args, timeout=RUN_TIMEOUT_S)
    first.assert_outcomes(passed=2, errors=1)
    first.stdout.fnmatch_lines(["*b.gt.txt: ground-truth file is a FIFO (named pipe), not a regular file; replace it*"])
    entries = {json.loads(path.read_text(encoding="utf-8"))["document"]: path
               for path in (pytester.path / "ocrcache").rglob("*.json")}
    assert sorted(entries) == ["a.png", "c.png"]
    entries["a.png"].unlink()
    os.mkfifo(entries["a.png"])  # what a CI cache restore can leave behind

    second = pytester.runpytest_subprocess(*args, timeout=RUN_TIMEOUT_S)
    second.assert_outcomes(passed=2, errors=1)
    output = second.stdout.str() + second.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output
    if not xdist:  # warnings raised in xdist workers are not always shown by the controller
        assert output.count("it is a FIFO (named pipe), not a regular file") == 1
    assert _outcomes(pytester) == {"a.png": "passed", "b.png": "error", "c.png": "passed"}
    assert _calls(pytester) == ["a.png", "a.png", "c.png"]  # a.png recomputed, c.png served from the cache
    assert stat.S_ISREG(entries["a.png"].lstat().st_mode)  # the FIFO was replaced, not written through


def test_a_deep_entry_and_a_300_character_file_name_error_only_their_documents(pytester: pytest.Pytester) -> None:
    data = pytester.path / "invoices"
    (data / "images").mkdir(parents=True)
    long_name = "n" * 300 + ".png"
    deep = "[" * 100_000 + "]" * 100_000
    (data / "ground_truth.json").write_text(
        '{"a.png": {"full_text": "A"}, "b.png": {"full_text": "B", "meta": ' + deep + '}, '
        f'"{long_name}": {{"full_text": "L"}}, "c.png": {{"full_text": "C"}}}}', encoding="utf-8")
    for name in ("a.png", "b.png", "c.png"):
        (data / "images" / name).write_bytes(PNG_1X1 + name.encode())
    pytester.makeconftest(COUNTING_ENGINE)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-json=run.json")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*entry 'b.png': the entry is nested deeper than Python's JSON parser allows*"])
    result.stdout.fnmatch_lines(["*cannot be looked at: its name is too long for this system (File name too long)*"])
    assert "Traceback" not in result.stdout.str() and "RecursionError" not in result.stdout.str()
    assert _outcomes(pytester) == {"a.png": "passed", "b.png": "error", long_name: "error", "c.png": "passed"}
    assert _calls(pytester) == ["a.png", "c.png"]
