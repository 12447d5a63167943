"""An xdist worker killed mid-run (as the out-of-memory killer does) must not cost its document: every report still
holds every document, the crashed one errored with the crash said, and the run fails."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.helpers.plugin import make_dataset

pytest.importorskip("xdist")

# an engine that kills its own process (SIGKILL: nothing is cleaned up, nothing sent) on one document
KILLING_ENGINE = """
import os, signal
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

VICTIM = {victim!r}

class Killing:
    name = "killing"
    in_process = True  # not recognised ahead: only the victim's own test kills its worker
    def identity(self):
        return {{"engine": "killing"}}
    def recognize(self, document):
        if document.id == VICTIM:
            os.kill(os.getpid(), signal.SIGKILL)
        return OcrOutput(text=document.reference_text, engine="killing")
    def close(self):
        pass

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("killing", lambda arg, options: Killing()))
"""
DOCS = {f"doc_{n:02d}.png": {"full_text": f"page {n} text"} for n in range(1, 9)}


def _check_reports(pytester: pytest.Pytester, victim: str, result: pytest.RunResult) -> dict[str, object]:
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert sorted(d["id"] for d in run["documents"]) == sorted(DOCS)  # every document, the crashed one too
    crashed = next(d for d in run["documents"] if d["id"] == victim)
    assert crashed["outcome"] == "error" and crashed["engine"] == "killing" and crashed["dataset"] == "invoices"
    assert "worker crashed" in crashed["message"]
    assert all(d["outcome"] == "passed" for d in run["documents"] if d["id"] != victim)
    assert run["summary"][0]["documents"] == len(DOCS) and run["summary"][0]["errors"] == 1
    cases = list(ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"))
    errored = [c for c in cases if c.find("error") is not None]
    assert len(errored) == 1 and victim in errored[0].get("name", "")
    csv_text = (pytester.path / "docs.csv").read_text(encoding="utf-8")
    assert all(name in csv_text for name in DOCS)
    return crashed


@pytest.mark.parametrize(("victim", "extra"), [("doc_03.png", []), ("doc_08.png", []),
                                               ("doc_03.png", ["--ocr-concurrency=1"])],
                         ids=["mid-run", "last", "xdist-own-scheduler"])
def test_a_crashed_worker_s_document_is_recorded_as_errored(pytester: pytest.Pytester, victim: str,
                                                             extra: list[str]) -> None:
    make_dataset(pytester.path, DOCS, {})
    pytester.makeconftest(KILLING_ENGINE.format(victim=victim))
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=killing", "-n", "2", "--ocr-json=run.json",
                                "--junitxml=junit.xml", "--ocr-csv=docs.csv", "-p", "no:randomly", *extra)
    crashed = _check_reports(pytester, victim, result)
    assert crashed["image"] == f"images/{victim}" and crashed["nodeid"] == f"invoices::killing-{victim}"
    result.stdout.fnmatch_lines(["*killing*invoices*8*1*"])  # the summary counts it: 8 documents, 1 error


def test_a_crashed_worker_s_test_function_document_is_recorded(pytester: pytest.Pytester) -> None:
    """A Python test function's documents (an ``ocr_dataset`` marker the controller never sees) too."""
    make_dataset(pytester.path, DOCS, {})
    pytester.makeconftest(KILLING_ENGINE.format(victim="doc_05.png"))
    pytester.makepyfile(test_marked="""
        import pytest

        pytestmark = pytest.mark.ocr_dataset("invoices", name="invoices")

        def test_text(ocr_score):
            pass
    """)
    result = pytester.runpytest("--ocr-engine=killing", "-n", "2", "--ocr-json=run.json", "--junitxml=junit.xml",
                                "--ocr-csv=docs.csv", "-p", "no:randomly")
    _check_reports(pytester, "doc_05.png", result)


def test_without_a_replacement_worker_the_document_is_named_from_the_test_id(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, DOCS, {})
    pytester.makeconftest(KILLING_ENGINE.format(victim="doc_02.png"))
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=killing", "-n", "2", "--ocr-json=run.json",
                                "--max-worker-restart=0", "-p", "no:randomly")
    assert result.ret != pytest.ExitCode.OK
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    crashed = next(d for d in run["documents"] if d["id"] == "doc_02.png")
    assert crashed["outcome"] == "error" and crashed["engine"] == "killing" and crashed["dataset"] == "invoices"
    assert "worker crashed" in crashed["message"] and "read from the test id" in crashed["message"]
