"""The benchmark protocol's results layout (specification document 000): config.json, results.json, summary.json."""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.reporting.benchmark import BENCHMARK_FILES, benchmark_files
from tests.helpers.plugin import make_dataset


def _two_engine_run() -> dict[str, Any]:
    docs = [make_doc("doc_001.png", {"cer": 0.0714, "wer": 0.25}, engine="deepseek", image="data/images/doc_001.png"),
            make_doc("doc_002.png", {"cer": 0.02, "wer": 0.1}, engine="deepseek", image="data/images/doc_002.png"),
            make_doc("doc_001.png", {"cer": 0.10, "wer": 0.25}, engine="tesseract", image="data/images/doc_001.png"),
            make_doc("doc_002.png", {"cer": 0.30, "wer": 0.5}, engine="tesseract", image="data/images/doc_002.png",
                     outcome="failed", message="cer above 0.2")]
    run = make_run(docs)
    run["environment"]["engines"]["deepseek"]["selected_as"] = "deepseek"
    return run


def test_the_three_files_of_a_two_engine_run() -> None:
    files = benchmark_files(_two_engine_run(), "2025-01-01-deepseek-vs-tesseract")
    assert list(files) == list(BENCHMARK_FILES) == ["config.json", "results.json", "summary.json"]
    config = files["config.json"]
    assert config["run_id"] == "2025-01-01-deepseek-vs-tesseract" and config["models"] == ["deepseek", "tesseract"]
    assert config["engines"]["tesseract"] == {"name": "tesseract", "version": "1.0"}  # the engine identities
    assert config["datasets"] == {"receipts": {"path": "data", "documents": 2}}  # images/ folder: the dataset's
    assert config["command"] == ("pytest --ocr-dataset=data --ocr-engine=deepseek --ocr-engine=tesseract "
                                 "--ocr-json=run.json")
    results = files["results.json"]
    assert [(r["id"], r["engine"]) for r in results] == [("doc_001.png", "deepseek"), ("doc_001.png", "tesseract"),
                                                         ("doc_002.png", "deepseek"), ("doc_002.png", "tesseract")]
    assert results[0]["metrics"] == {"cer": 0.0714, "wer": 0.25} and results[0]["predicted"] == "TOTAL 12.S0"
    assert results[3]["outcome"] == "failed" and results[3]["ground_truth"] == "TOTAL 12.50"
    summary = files["summary.json"]
    rows = {row["engine"]: row for row in summary["by_engine_dataset"]}
    assert rows["tesseract"]["failed"] == 1 and rows["deepseek"]["metrics"]["cer"]["mean"] == pytest.approx(0.0457)
    comparison = {c["metric"]: c for c in summary["comparison"]}
    assert comparison["cer"]["best"] == "deepseek" and comparison["cer"]["better"] == "lower"
    assert comparison["wer"]["values"]["deepseek"] < comparison["wer"]["values"]["tesseract"]


def test_equal_engines_tie_and_one_engine_has_no_comparison() -> None:
    docs = [make_doc("a", {"cer": 0.1}, engine="x"), make_doc("a", {"cer": 0.1}, engine="y")]
    assert benchmark_files(make_run(docs), "r")["summary.json"]["comparison"][0]["best"] == "tie"
    assert benchmark_files(make_run(docs[:1]), "r")["summary.json"]["comparison"] == []


def test_hostile_text_is_written_as_valid_json(tmp_path: Path) -> None:
    run = make_run([make_doc("a\x00\ud800", {"cer": 0.1}, reference="x\x1b[2J" * 1000, hypothesis="\ud83d")])
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    assert main(["report", str(tmp_path / "run.json"), "--benchmark-dir", str(tmp_path / "out" / "r1")],
                stdout=io.StringIO()) == 0
    results = json.loads((tmp_path / "out" / "r1" / "results.json").read_text(encoding="utf-8"))
    assert results[0]["ground_truth"].startswith("x\x1b[2J") and results[0]["predicted"] == "\ufffd"


def test_a_folder_that_cannot_be_written_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run.json").write_text(json.dumps(_two_engine_run()), encoding="utf-8")
    (tmp_path / "blocked").write_text("a file where the folder should be")
    code = main(["report", str(tmp_path / "run.json"), "--benchmark-dir", str(tmp_path / "blocked")],
                stdout=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and "cannot write" in err and "Traceback" not in err


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_one_pytest_command_and_one_report_command_reproduce_the_benchmark(pytester: pytest.Pytester,
                                                                           xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    make_dataset(pytester.path)
    second = pytester.path / "second"
    second.mkdir()
    for stem, text in {"doc_001": "INVOICE #12345\nTOTAL: 150.00", "doc_002": "Hello", "doc_003": "Quick"}.items():
        (second / f"{stem}.txt").write_text(text, encoding="utf-8")
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-engine=replay:second",
                       "--ocr-metric=crr", "--ocr-json=run.json", "-p", "no:cacheprovider", *xdist)
    out = io.StringIO()
    assert main(["report", str(pytester.path / "run.json"), "--benchmark-dir",
                 str(pytester.path / "results" / "benchmarks" / "run-1")], stdout=out) == 0
    folder = pytester.path / "results" / "benchmarks" / "run-1"
    assert sorted(p.name for p in folder.iterdir()) == sorted(BENCHMARK_FILES)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["models"] == ["replay:preds", "replay:second"] and "--ocr-metric=crr" in config["command"]
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert len(results) == 6 and {r["engine"] for r in results} == {"replay:preds", "replay:second"}
    # the recorded command, run again from another folder, gives the same per-image metrics (issue 20 C7: the
    # replay folders stayed relative, so the command only worked where the benchmark had been run)
    words = shlex.split(config["command"])
    assert words[0] == "pytest"
    assert f"--ocr-engine=replay:{pytester.path / 'preds'}" in words
    assert f"--ocr-engine=replay:{pytester.path / 'second'}" in words
    elsewhere = pytester.mkdir("elsewhere")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(elsewhere)
        pytester.runpytest(*[w.replace("run.json", str(elsewhere / "again.json")) for w in words[1:]],
                           "-p", "no:cacheprovider", f"--rootdir={elsewhere}")
    again = json.loads((elsewhere / "again.json").read_text(encoding="utf-8"))
    first = {(d["id"], d["engine"]): d["metrics"] for d in json.loads((pytester.path / "run.json").read_text())["documents"]}
    assert {(d["id"], d["engine"]): d["metrics"] for d in again["documents"]} == first
