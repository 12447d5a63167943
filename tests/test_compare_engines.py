"""Paired comparison of differently named engines (issue 19, item 6): ``compare_runs(..., engine_map=...)`` and
``ocrmetrics compare OLD.json NEW.json --engine OLD=NEW``, the same file given twice included."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.gating import compare_runs


def _docs(engine: str, bump: dict[int, float] | None = None, n: int = 12, dataset: str = "receipts") -> list[dict]:
    return [make_doc(f"doc{i:02d}", {"cer": 0.02 + (bump or {}).get(i, 0.0), "field_f1": 0.9}, engine=engine,
                     dataset=dataset) for i in range(n)]


def _renamed(run: dict[str, Any], engine: str) -> dict[str, Any]:
    return make_run([{**doc, "engine": engine} for doc in run["documents"]])


# ------------------------------------------------------------------------------------------------ compare_runs


def test_an_engine_map_compares_as_if_the_baseline_engine_had_the_new_name() -> None:
    """The paired comparison is the baseline comparison: same deltas, intervals, verdicts, document changes."""
    old, new = make_run(_docs("tesseract")), make_run(_docs("rapidocr", bump={2: 0.1, 5: 0.2}))
    assert compare_runs(old, new, ["cer:0.005"]).matched_nothing  # different names pair nothing by themselves
    paired = compare_runs(old, new, ["cer:0.005"], engine_map={"tesseract": "rapidocr"}, seed=3)
    same_name = compare_runs(_renamed(old, "rapidocr"), new, ["cer:0.005"], seed=3)
    assert paired.compared == same_name.compared == 12 and paired.exit_failed
    assert [(a.engine, a.metric, a.old, a.new, a.interval, a.verdict) for a in paired.aggregates] == [
        (a.engine, a.metric, a.old, a.new, a.interval, a.verdict) for a in same_name.aggregates]
    assert {a.baseline_engine for a in paired.aggregates} == {"tesseract"}
    assert [(r.document, r.engine, r.baseline_engine) for r in paired.regressions] == [
        ("doc02", "rapidocr", "tesseract"), ("doc05", "rapidocr", "tesseract")]
    # the document lookups of the reports use this run's engine
    assert paired.document_regressions("receipts", "rapidocr", "doc02")
    assert paired.baseline_metrics[("receipts", "rapidocr", "doc00")]["cer"] == 0.02


def test_paired_messages_and_json_name_both_engines() -> None:
    old = make_run(_docs("tesseract", n=4))
    new = make_run(_docs("rapidocr", bump={1: 0.2}, n=4)[1:] + [make_doc("doc99", {"cer": 0.0}, engine="rapidocr")])
    comparison = compare_runs(old, new, ["cer:0.005"], engine_map=[("tesseract", "rapidocr")], baseline_source="b")
    text = "\n".join(comparison.summary_lines())
    assert "REGRESSION cer regressed for tesseract -> rapidocr / receipts: 0.0200 -> 0.0867" in text
    assert "cer regressed on document 'doc01' (tesseract -> rapidocr / receipts)" in text
    assert "receipts/doc99 (tesseract -> rapidocr): not in the baseline" in text
    assert "receipts/doc00 (tesseract -> rapidocr): not in this run" in text
    data = json.loads(json.dumps(comparison.to_dict()))
    assert {(a["engine"], a["baseline_engine"]) for a in data["aggregates"]} == {("rapidocr", "tesseract")}
    assert data["regressions"][0]["baseline_engine"] == "tesseract"
    assert data["new_documents"] == [{"dataset": "receipts", "engine": "rapidocr", "id": "doc99",
                                      "reason": "not in the baseline", "baseline_engine": "tesseract"}]
    # without a map the output keeps its keys
    plain = compare_runs(old, _renamed(new, "tesseract"), ["cer:0.005"]).to_dict()
    assert "baseline_engine" not in plain["aggregates"][0] and "baseline_engine" not in plain["regressions"][0]
    assert "baseline_engine" not in plain["new_documents"][0]


def test_one_run_with_itself_pairs_only_the_mapped_engines() -> None:
    """The same run on both sides: tesseract is compared with rapidocr, never with itself, and a third engine is
    neither new nor missing."""
    run = make_run(_docs("tesseract") + _docs("rapidocr", bump={0: 0.1}) + _docs("trocr", n=3))
    comparison = compare_runs(run, run, ["cer:0.005"], engine_map={"tesseract": "rapidocr"})
    assert comparison.compared == 12 and not comparison.new_documents and not comparison.missing_documents
    assert {(a.baseline_engine, a.engine) for a in comparison.aggregates} == {("tesseract", "rapidocr")}
    assert [r.document for r in comparison.regressions] == ["doc00"]
    unmapped = compare_runs(run, run, ["cer:0.005"])  # without a map: each engine against itself, nothing moved
    assert unmapped.compared == 27 and not unmapped.exit_failed


def test_one_baseline_engine_faces_several_but_an_engine_of_the_run_faces_one() -> None:
    run = make_run(_docs("tesseract") + _docs("rapidocr", bump={0: 0.1}) + _docs("trocr"))
    comparison = compare_runs(run, run, ["cer:0.005"], engine_map=[("tesseract", "rapidocr"), ("tesseract", "trocr")])
    assert comparison.compared == 24
    assert {(a.baseline_engine, a.engine) for a in comparison.aggregates} == {("tesseract", "rapidocr"),
                                                                                ("tesseract", "trocr")}
    assert [(r.engine, r.document) for r in comparison.regressions] == [("rapidocr", "doc00")]
    with pytest.raises(ValueError, match="pairs this run's engine 'trocr' with two baseline engines, 'tesseract' and "
                                         "'rapidocr'"):
        compare_runs(run, run, engine_map=[("tesseract", "trocr"), ("rapidocr", "trocr")])


def test_a_map_that_pairs_nothing_fails_and_names_both_engines() -> None:
    old = make_run(_docs("tesseract"))
    new = make_run(_docs("rapidocr", dataset="forms"))
    comparison = compare_runs(old, new, ["cer:0.005"], engine_map={"tesseract": "rapidocr"})
    assert comparison.matched_nothing and comparison.exit_failed
    assert ("the baseline has tesseract -> rapidocr / receipts, this run has tesseract -> rapidocr / forms"
            in str(comparison.error))


# ------------------------------------------------------------------------------------------- ocrmetrics compare


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), stdout=out), out.getvalue()


@pytest.fixture
def engine_runs(tmp_path: Path) -> dict[str, Path]:
    files = {
        "old": make_run(_docs("tesseract")),
        "better": make_run(_docs("rapidocr", bump={i: -0.01 for i in range(12)})),
        "worse": make_run(_docs("rapidocr", bump={2: 0.1, 5: 0.2})),
        "both": make_run(_docs("tesseract") + _docs("rapidocr", bump={2: 0.1, 5: 0.2})),
    }
    paths = {}
    for name, run in files.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(run), encoding="utf-8")
    return paths


def test_compare_two_files_of_different_engines(engine_runs: dict[str, Path]) -> None:
    old, better, worse = (str(engine_runs[k]) for k in ("old", "better", "worse"))
    code, out = run_cli("compare", old, worse, "--max-regression", "cer:0.005")
    assert code == 1 and "matched none" in out  # without --engine: nothing pairs, which fails
    code, out = run_cli("compare", old, worse, "--engine", "tesseract=rapidocr", "--max-regression", "cer:0.005")
    lines = out.splitlines()
    assert code == 1 and lines[0] == "engines paired (baseline -> run): tesseract -> rapidocr"
    assert lines[1] == f"compared with baseline {old!r}: 12 documents, 0 new, 0 missing"
    assert "REGRESSION cer regressed for tesseract -> rapidocr / receipts: 0.0200 -> 0.0450, delta +0.0250" in out
    assert "cer regressed on document 'doc02' (tesseract -> rapidocr / receipts)" in out
    assert lines[-1] == f"ocrmetrics compare: FAILED ({old} -> {worse})"
    code, out = run_cli("compare", old, better, "--engine", "tesseract=rapidocr", "--max-regression", "cer:0.005")
    assert code == 0 and "improved for tesseract -> rapidocr / receipts: 0.0200 -> 0.0100" in out
    code, out = run_cli("compare", old, worse, "--engine=tesseract=rapidocr", "--max-regression", "cer:0.5")
    assert code == 0 and out.splitlines()[-1] == f"ocrmetrics compare: passed ({old} -> {worse})"


def test_compare_two_engines_of_one_run_file(engine_runs: dict[str, Path]) -> None:
    both = str(engine_runs["both"])
    code, out = run_cli("compare", both, both, "--max-regression", "cer:0.005")
    assert code == 0  # each engine against itself
    argv = ["compare", both, both, "--engine", "tesseract=rapidocr", "--max-regression", "cer:0.005"]
    code, out = run_cli(*argv)
    assert code == 1 and "REGRESSION cer regressed for tesseract -> rapidocr / receipts" in out
    assert f"compared with baseline {both!r}: 12 documents, 0 new, 0 missing" in out
    code, out = run_cli(*argv, "--json")
    data = json.loads(out)
    assert code == 1 and data["exit_failed"] and data["compared"] == 12
    assert data["engine_map"] == [{"baseline_engine": "tesseract", "engine": "rapidocr"}]
    (cer,) = [a for a in data["aggregates"] if a["metric"] == "cer"]
    assert (cer["engine"], cer["baseline_engine"], cer["verdict"]) == ("rapidocr", "tesseract", "regression")
    assert [r["document"] for r in data["regressions"]] == ["doc02", "doc05"]
    assert json.loads(run_cli("compare", both, both, "--json")[1])["engine_map"] == []


@pytest.mark.parametrize(("engine", "message"), [
    ("tesserct=rapidocr", "--engine 'tesserct=rapidocr': the baseline '{old}' has no engine 'tesserct' (did you mean "
                          "'tesseract'?); its engines are 'tesseract'"),
    ("tesseract=rapidcr", "--engine 'tesseract=rapidcr': '{new}' has no engine 'rapidcr' (did you mean 'rapidocr'?); "
                          "its engines are 'rapidocr'"),
    ("rapidocr=tesseract", "--engine 'rapidocr=tesseract': the baseline '{old}' has no engine 'rapidocr' (the "
                           "baseline's engine comes first: --engine tesseract=rapidocr)"),
    ("easyocr=paddle", "the baseline '{old}' has no engine 'easyocr'; its engines are 'tesseract'"),
])
def test_compare_an_engine_name_not_in_its_run_file_is_a_usage_error(engine_runs: dict[str, Path], engine: str,
                                                                     message: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    old, new = str(engine_runs["old"]), str(engine_runs["worse"])
    assert run_cli("compare", old, new, "--engine", engine)[0] == 2
    err = capsys.readouterr().err
    assert err.startswith("ocrmetrics compare: error: ") and message.format(old=old, new=new) in err
    assert err.count("\n") == 1


def test_compare_an_engine_value_without_equals_sign_is_one_sentence(engine_runs: dict[str, Path],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    old, new = str(engine_runs["old"]), str(engine_runs["worse"])
    for value in ("tesseract", "tesseract=", "=rapidocr"):
        assert run_cli("compare", old, new, "--engine", value)[0] == 2
        assert (f"error: argument --engine: {value!r} is not OLD=NEW: give the baseline's engine and the run's engine "
                f"compared with it, e.g. --engine tesseract=rapidocr\n") in capsys.readouterr().err


def test_compare_an_engine_of_the_run_paired_twice_is_a_usage_error(engine_runs: dict[str, Path],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    both = str(engine_runs["both"])
    assert run_cli("compare", both, both, "--engine", "tesseract=rapidocr", "--engine", "rapidocr=rapidocr")[0] == 2
    assert (f"--engine pairs 'rapidocr' of {both!r} with two baseline engines, 'tesseract' and 'rapidocr'; pair each "
            f"engine of the run once") in capsys.readouterr().err


def test_compare_a_pair_that_compares_nothing_fails_beside_one_that_does(tmp_path: Path) -> None:
    """Two pairs, one of them with no document in common: the other's comparison must not hide it."""
    run = make_run(_docs("tesseract") + _docs("rapidocr") + _docs("trocr", dataset="forms"))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    argv = ["compare", str(path), str(path), "--engine", "tesseract=rapidocr", "--engine", "tesseract=trocr"]
    code, out = run_cli(*argv)
    assert code == 1
    assert ("ERROR: --engine tesseract=trocr compared nothing: no document scored by 'tesseract' in the baseline is "
            "scored by 'trocr' in this run (same dataset and id)") in out
    assert "--engine tesseract=rapidocr compared nothing" not in out
    code, out = run_cli(*argv, "--json")
    assert code == 1 and json.loads(out)["unpaired"] == [
        "ERROR: --engine tesseract=trocr compared nothing: no document scored by 'tesseract' in the baseline is "
        "scored by 'trocr' in this run (same dataset and id)"]
