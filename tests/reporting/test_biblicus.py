"""Biblicus's grouped report of a run and its two-pipeline comparison (specification document 001)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.reporting.biblicus import (
    BIBLICUS_METRICS,
    BiblicusError,
    biblicus_report,
    compare_pipelines,
    render_comparison,
)

# the document's example report, and its comparison scenario (Heron's values the table does not give are made up)
PADDLE = {"pipeline_name": "PaddleOCR", "metrics": {
    "set_based": {"avg_precision": 0.792, "avg_recall": 0.782, "avg_f1": 0.787},
    "order_aware": {"avg_wer": 0.533, "avg_sequence_accuracy": 0.031, "avg_lcs_ratio": 0.621},
    "ngram": {"avg_bigram_overlap": 0.521, "avg_trigram_overlap": 0.412}}}
HERON = {"pipeline_name": "Heron", "metrics": {
    "set_based": {"avg_precision": 0.384, "avg_recall": 0.810, "avg_f1": 0.519},
    "order_aware": {"avg_wer": 0.612, "avg_sequence_accuracy": 0.031, "avg_lcs_ratio": 0.600},
    "ngram": {"avg_bigram_overlap": 0.561, "avg_trigram_overlap": 0.4121}}}
EXAMPLE_VALUES = {"set_precision": 0.792, "set_recall": 0.782, "set_f1": 0.787, "wer": 0.533,
                  "sequence_accuracy": 0.031, "lcs_ratio": 0.621, "bigram_overlap": 0.521, "trigram_overlap": 0.412}


def _run(engines: dict[str, dict[str, float]], *, datasets: tuple[str, ...] = ("forms",)) -> dict[str, Any]:
    docs = []
    for engine, values in engines.items():
        for dataset in datasets:
            docs += [make_doc(f"{dataset}-{i}", {name: value + (0.1 if i else -0.1) for name, value in values.items()},
                              engine=engine, dataset=dataset) for i in range(2)]
    return make_run(docs)


def test_the_grouped_report_of_the_documents_example() -> None:
    report = biblicus_report(_run({"paddleocr": EXAMPLE_VALUES}))
    assert report["pipeline_name"] == "paddleocr"
    assert list(report) == ["pipeline_name", "metrics"]
    assert list(report["metrics"]) == ["set_based", "order_aware", "ngram"]
    expected = {group: {key: pytest.approx(value) for key, value in values.items()}
                for group, values in PADDLE["metrics"].items()}
    assert report["metrics"] == expected  # each avg is the mean over documents (0.1 below and above here)


def test_averages_are_means_over_documents_across_datasets() -> None:
    docs = [make_doc("a", {**EXAMPLE_VALUES, "set_f1": 1.0}, dataset="forms"),
            make_doc("b", {**EXAMPLE_VALUES, "set_f1": 0.4}, dataset="papers"),
            make_doc("c", {**EXAMPLE_VALUES, "set_f1": 0.1}, dataset="papers")]
    report = biblicus_report(make_run(docs))
    assert report["metrics"]["set_based"]["avg_f1"] == pytest.approx(0.5)  # not the mean of the dataset means, 0.625


def test_a_run_without_the_metrics_is_refused_not_written_as_zeros() -> None:
    run = make_run([make_doc("a", {"cer": 0.1, "wer": 0.2, "set_f1": 0.5})])
    with pytest.raises(BiblicusError) as info:
        biblicus_report(run, source="run file 'run.json'")
    message = str(info.value)
    assert "set_precision" in message and "--ocr-metric=trigram_overlap" in message and "--ocr-metric=wer" not in message
    assert "--ocr-metric=set_f1" not in message  # only what is missing


def test_several_pipelines_need_a_choice_with_did_you_mean() -> None:
    run = _run({"deepseek": EXAMPLE_VALUES, "tesseract": EXAMPLE_VALUES})
    with pytest.raises(BiblicusError, match="2 pipelines.*--pipeline NAME"):
        biblicus_report(run)
    with pytest.raises(BiblicusError, match="did you mean 'tesseract'"):
        biblicus_report(run, "tesseact")
    assert biblicus_report(run, "tesseract")["pipeline_name"] == "tesseract"


def test_the_documents_comparison_winners() -> None:
    rows = {row.label: row for row in compare_pipelines(PADDLE, HERON)}
    # the document's table: F1, Recall, Precision, WER, Bigram
    assert rows["F1"].winner == "PaddleOCR" and rows["Recall"].winner == "Heron"
    assert rows["Precision"].winner == "PaddleOCR"
    assert rows["WER"].winner == "PaddleOCR"  # lower is better: 0.533 < 0.612
    assert rows["Bigram"].winner == "Heron"
    assert rows["Sequence accuracy"].winner == "tie"  # equal
    assert rows["Trigram"].winner == "tie"  # 0.412 and 0.4121 show the same at three decimals
    assert compare_pipelines(PADDLE, HERON, decimals=4)[-1].winner == "Heron"
    lines = render_comparison(PADDLE, HERON, compare_pipelines(PADDLE, HERON))
    assert lines[0].split() == ["Metric", "PaddleOCR", "Heron", "Winner"]
    assert lines[2].split() == ["F1", "0.787", "0.519", "PaddleOCR"]
    assert lines[-1].startswith("PaddleOCR wins 4, Heron wins 2, ties 2")


def test_same_names_are_told_apart() -> None:
    other = json.loads(json.dumps(PADDLE))
    other["metrics"]["set_based"]["avg_f1"] = 0.9
    assert compare_pipelines(PADDLE, other)[0].winner == "PaddleOCR (2)"


# ---------------------------------------------------------------------------------------------------- CLI


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), stdout=out), out.getvalue()


def test_report_writes_the_grouped_json(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(_run({"deepseek": EXAMPLE_VALUES, "tesseract": EXAMPLE_VALUES})))
    code, out = _cli("report", str(tmp_path / "run.json"), "--biblicus", str(tmp_path / "b.json"),
                     "--pipeline", "deepseek")
    assert code == 0 and "Biblicus report:" in out
    written = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert written["pipeline_name"] == "deepseek"
    assert written["metrics"]["order_aware"]["avg_wer"] == pytest.approx(0.533)


def test_report_refuses_missing_metrics_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run.json").write_text(json.dumps(make_run([make_doc("a", {"cer": 0.1, "wer": 0.2})])))
    code, _ = _cli("report", str(tmp_path / "run.json"), "--biblicus", str(tmp_path / "b.json"),
                   "--html", str(tmp_path / "r.html"))
    assert code == 2 and not (tmp_path / "b.json").exists() and not (tmp_path / "r.html").exists()
    assert "--ocr-metric=set_precision" in capsys.readouterr().err
    code, _ = _cli("report", str(tmp_path / "run.json"), "--pipeline", "x", "--html", str(tmp_path / "r.html"))
    assert code == 2 and "give --biblicus PATH too" in capsys.readouterr().err


def test_biblicus_compare_from_reports_and_from_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text(json.dumps(PADDLE))
    (tmp_path / "b.json").write_text(json.dumps(HERON))
    code, out = _cli("biblicus-compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert code == 0 and out.splitlines()[2].split() == ["F1", "0.787", "0.519", "PaddleOCR"]
    code, out = _cli("biblicus-compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json")
    data = json.loads(out)
    assert data["pipelines"] == ["PaddleOCR", "Heron"] and data["rows"][1]["winner"] == "Heron"
    run = _run({"deepseek": {**EXAMPLE_VALUES, "wer": 0.2}, "tesseract": EXAMPLE_VALUES, "rapidocr": EXAMPLE_VALUES})
    (tmp_path / "run.json").write_text(json.dumps(run))
    code, _ = _cli("biblicus-compare", str(tmp_path / "run.json"))
    assert code == 2 and "exactly two pipelines to compare, found 3" in capsys.readouterr().err
    code, out = _cli("biblicus-compare", str(tmp_path / "run.json"), "--pipeline", "tesseract", "--pipeline", "deepseek")
    assert code == 0 and out.splitlines()[5].split() == ["WER", "0.533", "0.200", "deepseek"]
    run["documents"].append(make_doc("x", {"cer": 0.1}, engine="lacking"))  # another engine without the metrics
    run["summary"] = make_run(run["documents"])["summary"]
    (tmp_path / "run.json").write_text(json.dumps(run))
    code, out = _cli("biblicus-compare", str(tmp_path / "run.json"), "--pipeline", "tesseract", "--pipeline", "deepseek")
    assert code == 0 and out.splitlines()[5].split() == ["WER", "0.533", "0.200", "deepseek"]
    code, _ = _cli("biblicus-compare", str(tmp_path / "run.json"), "--pipeline", "lacking", "--pipeline", "deepseek")
    assert code == 2 and "--ocr-metric=set_f1" in capsys.readouterr().err
    code, _ = _cli("biblicus-compare", str(tmp_path / "run.json"), "--pipeline", "tesseract", "--pipeline", "deepsek")
    assert code == 2 and "did you mean 'deepseek'" in capsys.readouterr().err


@pytest.mark.parametrize("content", ['{"pipeline_name": "x", "metrics": {"set_based": {}}}', "[1]", "not json",
                                     '{"pipeline_name": "x", "metrics": {"set_based": {"avg_f1": NaN}}}'])
def test_biblicus_compare_refuses_a_bad_file_in_one_line(tmp_path: Path, content: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text(json.dumps(PADDLE))
    (tmp_path / "bad.json").write_text(content)
    code, _ = _cli("biblicus-compare", str(tmp_path / "a.json"), str(tmp_path / "bad.json"))
    err = capsys.readouterr().err
    assert code == 2 and "bad.json" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_hostile_pipeline_names_reach_the_terminal_as_marks(tmp_path: Path) -> None:
    hostile = json.loads(json.dumps(PADDLE))
    hostile["pipeline_name"] = "evil\x1b[2J\ud800name"
    (tmp_path / "a.json").write_text(json.dumps(hostile))
    (tmp_path / "b.json").write_text(json.dumps(HERON))
    code, out = _cli("biblicus-compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert code == 0 and "\x1b" not in out and "\ud800" not in out
    code, out = _cli("biblicus-compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json")
    assert code == 0 and "\ud800" not in out and json.loads(out)["pipelines"][0].startswith("evil\x1b[2J")


def test_every_registry_metric_of_the_report_exists() -> None:
    from pytest_ocrmetrics.metrics.registry import METRICS

    assert set(BIBLICUS_METRICS) <= set(METRICS)
