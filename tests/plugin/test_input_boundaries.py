"""Inputs that must never poison a run: damaged cache entries and dataset files that are not images of the dataset."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers.plugin import make_dataset
from tests.helpers.servers import load_fake_server

pytest_plugins = ["pytester"]

# a cacheable engine (replay is not cacheable): its text is the ground truth; it logs each call and the bytes it read
COUNTING_ENGINE = """
from pathlib import Path
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput, read_image

class Counting:
    name = "counting"
    def identity(self):
        return {"engine": "counting"}
    def recognize(self, document):
        data = read_image(document)
        with open(Path(__file__).parent / "calls.txt", "a") as log:
            log.write(document.id + "\\n")
        return OcrOutput(text=document.reference_text or "", engine="counting", confidence=0.5, elapsed_s=0.25)
    def close(self):
        pass

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("counting", lambda arg, options: Counting()))
"""


def _calls(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


POISONS = {  # each of the three documents' entries gets one
    "text-number": lambda entry: {**entry, "output": {**entry["output"], "text": 12345}},
    "null": lambda entry: None,
    "confidence-string": lambda entry: {**entry, "output": {**entry["output"], "confidence": "high"}},
    "elapsed-nan": lambda entry: {**entry, "output": {**entry["output"], "elapsed_s": float("nan")}},
    "list": lambda entry: [entry],
    "words-wrong-shape": lambda entry: {**entry, "output": {**entry["output"], "words": [{"text": ["w"]}]}},
}
POISON_GROUPS = [list(POISONS)[:3], list(POISONS)[3:]]


@pytest.mark.parametrize("poisons", POISON_GROUPS, ids=["+".join(group) for group in POISON_GROUPS])
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_poisoned_cache_entry_is_recomputed_with_a_warning_never_an_internal_error(
    pytester: pytest.Pytester, poisons: list[str], xdist: list[str]
) -> None:
    if xdist:
        pytest.importorskip("xdist")
    make_dataset(pytester.path)
    pytester.makeconftest(COUNTING_ENGINE)
    args = ["--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-cache-dir=ocrcache", "--ocr-max=cer:0.1",
            "--ocr-json=run.json", "--junitxml=out.xml", *xdist]
    pytester.runpytest(*args).assert_outcomes(passed=3)
    entries = sorted((pytester.path / "ocrcache").rglob("*.json"))
    assert len(entries) == 3 and len(_calls(pytester)) == 3
    for entry, poison in zip(entries, poisons):
        entry.write_text(json.dumps(POISONS[poison](json.loads(entry.read_text(encoding="utf-8")))), encoding="utf-8")

    result = pytester.runpytest(*args, "-W", "always::pytest_ocrmetrics.engines.cache.OcrCacheWarning")
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    if not xdist:  # warnings raised in xdist workers are not always shown by the controller
        assert "OcrCacheWarning" in output and "is not a valid entry" in output
    assert len(_calls(pytester)) == 6  # recomputed
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert sorted(d["outcome"] for d in run["documents"]) == ["passed"] * 3

    pytester.runpytest(*args).assert_outcomes(passed=3)  # rewritten: the third run is served from the cache
    assert len(_calls(pytester)) == 6
    assert (pytester.path / "out.xml").read_text().count('name="ocr.cached" value="true"') == 3


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_file_that_is_not_an_image_and_a_link_out_of_the_dataset_error_only_their_documents(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    if xdist:
        pytest.importorskip("xdist")
    dataset = make_dataset(pytester.path)
    secret = pytester.path / "outside" / "secret.png"
    secret.parent.mkdir()
    secret.write_bytes((dataset / "images" / "doc_003.png").read_bytes())  # a real image, but outside the folder
    listing = pytester.path / "outside" / "listed.txt"
    listing.write_text("private words\n", encoding="utf-8")
    # tesseract would read this "image" as a list of image paths and OCR the file it names
    (dataset / "images" / "doc_001.png").write_text(f"{listing}\n", encoding="utf-8")
    (dataset / "images" / "doc_003.png").unlink()
    os.symlink(secret, dataset / "images" / "doc_003.png")
    pytester.makeconftest(COUNTING_ENGINE)
    result = pytester.runpytest(
        "--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-json=run.json", "--junitxml=out.xml", *xdist
    )
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*doc_001.png' is not an image (it starts with *, not with the signature of an image*"])
    result.stdout.fnmatch_lines(["*doc_003.png' is a symbolic link to *secret.png', outside the dataset folder *"])
    text = result.stdout.str()
    assert "Traceback" not in text
    assert _calls(pytester) == ["doc_002.png"]  # the engine never saw the two refused files
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    outcomes = {d["id"]: d["outcome"] for d in run["documents"]}
    assert outcomes == {"doc_001.png": "error", "doc_002.png": "passed", "doc_003.png": "error"}


def test_a_link_inside_the_dataset_folder_is_fine(pytester: pytest.Pytester) -> None:
    dataset = make_dataset(pytester.path)
    shared = dataset / "shared"
    shared.mkdir()
    (dataset / "images" / "doc_002.png").rename(shared / "doc_002.png")
    os.symlink(shared / "doc_002.png", dataset / "images" / "doc_002.png")
    pytester.makeconftest(COUNTING_ENGINE)
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=counting").assert_outcomes(passed=3)


API_KEY = "sk-ocrmetrics-test-0123456789abcdef"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_server_echoing_the_api_key_never_puts_it_in_the_terminal_or_a_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    if xdist:
        pytest.importorskip("xdist")
    make_dataset(pytester.path)
    monkeypatch.setenv("OCRMETRICS_TEST_API_KEY", API_KEY)
    with load_fake_server().FakeChatServer() as server:
        server.fail_next("echo-key-401", "echo-key-500", "echo-key-text")
        result = pytester.runpytest(
            "--ocr-dataset=invoices", "--ocr-engine=openai", f"--ocr-engine-option=openai.base_url={server.base_url}",
            "--ocr-engine-option=openai.model=fake-vlm", "--ocr-engine-option=openai.retries=0",
            "--ocr-engine-option=openai.api_key_env=OCRMETRICS_TEST_API_KEY", "--ocr-no-cache",
            "--ocr-json=run.json", "--junitxml=out.xml", "-rA", *xdist,
        )
        assert all(r.headers.get("Authorization") == f"Bearer {API_KEY}" for r in server.chat_requests)
    result.assert_outcomes(errors=3)
    texts = {
        "terminal": result.stdout.str() + result.stderr.str(),
        "junit": (pytester.path / "out.xml").read_text(encoding="utf-8"),
        "run file": (pytester.path / "run.json").read_text(encoding="utf-8"),
    }
    for where, text in texts.items():
        assert API_KEY not in text and API_KEY[10:] not in text, where
        assert "invalid credentials" in text and "[redacted]" in text, where


# returns each document's reference text, except a runaway output for doc_002 (one past MAX_SCORED_CHARACTERS)
RUNAWAY_ENGINE = COUNTING_ENGINE.replace(
    'return OcrOutput(text=document.reference_text or ""',
    'return OcrOutput(text="x" * 2_000_001 if document.id == "doc_002.png" else document.reference_text or ""',
)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_an_image_with_too_many_pixels_and_a_runaway_output_error_only_their_documents(
    pytester: pytest.Pytester, xdist: list[str]
) -> None:
    from tests.test_memory_bounds import png_header

    if xdist:
        pytest.importorskip("xdist")
    dataset = make_dataset(pytester.path)
    (dataset / "images" / "doc_001.png").write_bytes(png_header(30000, 30000))  # 58 bytes declaring 900 M pixels
    pytester.makeconftest(RUNAWAY_ENGINE)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-json=run.json", *xdist)
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines([
        "*doc_001.png' of document 'doc_001.png' * is 30000 × 30000 pixels (900,000,000), more than the 89,478,485 "
        "allowed (set by --ocr-max-image-pixels, *"])
    result.stdout.fnmatch_lines([
        "*counting: the output is 2,000,001 characters, more than the 2,000,000 scored (set by --ocr-max-output-chars*"
        "(document 'doc_002.png')*"])
    text = result.stdout.str()
    assert "Traceback" not in text and "MemoryError" not in text
    assert sorted(_calls(pytester)) == ["doc_002.png", "doc_003.png"]  # the engine never got the huge image
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    outcomes = {d["id"]: d["outcome"] for d in run["documents"]}
    assert outcomes == {"doc_001.png": "error", "doc_002.png": "error", "doc_003.png": "passed"}


def test_tesseract_never_decodes_an_image_with_too_many_pixels(pytester: pytest.Pytester) -> None:
    """Tesseract would decode a 30,000 × 30,000 PNG (about 4 GB); the pixel limit stops it first, and the other
    documents are still recognised."""
    import importlib.util
    import shutil

    from tests.test_memory_bounds import blank_png, png_header

    # not imported here (as tests/plugin/test_real_engines.py does): pytester's module snapshot would drop pytesseract
    # and numpy after this test, and numpy cannot be imported twice in one process
    if importlib.util.find_spec("pytesseract") is None or shutil.which("tesseract") is None:
        pytest.skip("pytesseract or the tesseract binary is not installed")
    dataset = make_dataset(pytester.path)
    for name in ("doc_002.png", "doc_003.png"):  # small blank pages tesseract can decode
        (dataset / "images" / name).write_bytes(blank_png(200 + len(name), 60))
    (dataset / "images" / "doc_001.png").write_bytes(png_header(30000, 30000))
    # in a subprocess, as tests/plugin/test_real_engines.py does: numpy (imported by the engine) cannot be imported
    # again in this process once pytester's module snapshot drops it
    result = pytester.runpytest_subprocess("--ocr-dataset=invoices", "--ocr-engine=tesseract", "--ocr-json=run.json")
    outcomes = result.parseoutcomes()  # the blank pages are scored: doc_003's own cer threshold fails it
    assert outcomes.get("errors") == 1 and outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2
    result.stdout.fnmatch_lines(["*tesseract*doc_001.png* is 30000 × 30000 pixels (900,000,000), more than the "
                                 "89,478,485 allowed*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    outcomes = {d["id"]: d["outcome"] for d in run["documents"]}
    assert outcomes["doc_001.png"] == "error" and "error" not in (outcomes["doc_002.png"], outcomes["doc_003.png"])
