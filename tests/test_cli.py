"""The ``ocrmetrics`` command line tool: score, compare, report; exit codes 0 / 1 / 2."""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.cli import main, score_texts
from pytest_ocrmetrics.cli.command import COMMANDS
from pytest_ocrmetrics.cli.common import UsageError
from pytest_ocrmetrics.metrics.text import cer, wer
from pytest_ocrmetrics.metrics.word_match import word_match


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), stdout=out)
    return code, out.getvalue()


# ------------------------------------------------------------------------------------------------------ score


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    (tmp_path / "gt.txt").write_text("INVOICE #12345\nTOTAL 10.00 RM\n", encoding="utf-8")
    (tmp_path / "good_out.txt").write_text("INVOICE #12345\nTOTAL 10.00 RM\n", encoding="utf-8")
    (tmp_path / "noisy_out.txt").write_text("INV0ICE #12345\ntotal 1O.00\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not an output", encoding="utf-8")
    return tmp_path


def test_score_values_are_the_metric_library_values(texts: Path) -> None:
    ref = (texts / "gt.txt").read_text()
    hyp = (texts / "noisy_out.txt").read_text()
    result = score_texts(ref, hyp)
    assert result["metrics"]["cer"] == cer(ref, hyp).value
    assert result["metrics"]["wer"] == wer(ref, hyp).value
    match = word_match(ref, hyp)
    assert result["metrics"]["crr"] == match.crr and result["metrics"]["word_f1"] == match.f1
    assert result["word_match"] == {"exact": match.exact_count, "fuzzy": match.fuzzy_count,
                                    "unmatched_reference": 1, "unmatched_hypothesis": 0,
                                    "precision": match.precision, "recall": match.recall}


def test_score_table_for_several_outputs(texts: Path) -> None:
    code, out = run_cli("score", str(texts / "gt.txt"), str(texts / "good_out.txt"), str(texts / "noisy_out.txt"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"reference {texts / 'gt.txt'} · normalization nfc")
    assert lines[1].split()[:4] == ["output", "CER↓", "WER↓", "SER↓"]
    good = next(line for line in lines if line.startswith(str(texts / "good_out.txt")))
    assert good.split()[1:3] == ["0.00%", "0.00%"] and good.split()[-1] == "5/0/0/0"
    noisy = next(line for line in lines if line.startswith(str(texts / "noisy_out.txt")))
    expected = cer((texts / "gt.txt").read_text(), (texts / "noisy_out.txt").read_text()).value
    assert noisy.split()[1] == f"{expected * 100:.2f}%"


def test_score_batch_folder_and_json(texts: Path) -> None:
    code, out = run_cli("score", str(texts), "--json")
    assert code == 0
    data = json.loads(out)
    assert [r["name"] for r in data["results"]] == ["good", "noisy"]  # notes.txt is not an output
    assert data["reference"] == str(texts / "gt.txt")
    assert data["results"][0]["metrics"]["cer"] == 0.0 and data["results"][1]["metrics"]["cer"] > 0
    assert data["options"] == {"normalize": "nfc", "unit": "grapheme", "tokenizer": "whitespace", "fuzzy": 1,
                               "word_case_sensitive": False, "word_ignore_punctuation": True}


def test_score_options_case_punctuation_fuzzy(texts: Path) -> None:
    def noisy(*options: str) -> dict:
        code, out = run_cli("score", str(texts), "--json", *options)
        assert code == 0
        return next(r for r in json.loads(out)["results"] if r["name"] == "noisy")

    plain = noisy()
    folded = noisy("--ignore-case")
    assert folded["normalization"] == "nfc+casefold" and folded["metrics"]["cer"] < plain["metrics"]["cer"]
    assert noisy("--ignore-punctuation")["normalization"] == "nfc+punctuation"
    # fuzzy word matching: 1O.00 ~ 10.00 at distance 1; --fuzzy 0 turns it off
    assert plain["word_match"]["fuzzy"] == 2 and noisy("--fuzzy", "0")["word_match"]["fuzzy"] == 0
    # word matching ignores case by default; --word-case-sensitive makes total != TOTAL
    assert plain["word_match"]["exact"] == 2
    assert noisy("--word-case-sensitive")["word_match"]["exact"] == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "{d}/missing.txt", "{d}/good_out.txt"], "reference '{d}/missing.txt' does not exist"),
        (["score", "{d}/gt.txt", "{d}/nope.txt"], "output '{d}/nope.txt' does not exist"),
        (["score", "{d}/gt.txt"], "give a reference and at least one output"),
        (["score", "{d}/empty"], "batch folder '{d}/empty' has no gt.txt"),
        (["score", "{d}/gt.txt", "{d}/latin1.txt"], "is not UTF-8 text"),
        (["score", "{d}/gt.txt", "{d}/good_out.txt", "--normalize", "bogus"], "--normalize: "),
    ],
)
def test_score_usage_errors_exit_2(texts: Path, argv: list[str], message: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    (texts / "empty").mkdir()
    (texts / "latin1.txt").write_bytes("Stra\u00dfe".encode("latin-1"))
    code, _ = run_cli(*(a.format(d=texts) for a in argv))
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("ocrmetrics score: error: ") and message.format(d=texts) in err
    assert err.count("\n") == 1  # one line, no traceback


def test_argparse_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli()[0] == 2
    assert run_cli("bogus")[0] == 2
    assert run_cli("score", "a", "b", "--fuzzy", "-1")[0] == 2
    assert "--fuzzy: the word distance must be a whole number from 0 to 5" in capsys.readouterr().err
    # issue 20 C6: document 002's range 0-5, with the page's sentence
    assert run_cli("score", "a", "b", "--fuzzy", "6")[0] == 2
    assert ("--fuzzy: the word distance must be a whole number from 0 to 5 (the largest edit distance of a fuzzy "
            "match), got 6") in capsys.readouterr().err
    assert run_cli("--help")[0] == 0


# ---------------------------------------------------------------------------------------------------- compare


def _corpus(bump: dict[int, float] | None = None, n: int = 12) -> dict:
    return make_run([make_doc(f"doc{i:02d}", {"cer": 0.02 + (bump or {}).get(i, 0.0), "field_f1": 0.9})
                     for i in range(n)])


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    base, same, worse = tmp_path / "base.json", tmp_path / "same.json", tmp_path / "worse.json"
    base.write_text(json.dumps(_corpus()))
    same.write_text(json.dumps(_corpus()))
    worse.write_text(json.dumps(_corpus(bump={2: 0.1, 5: 0.2})))
    return base, same, worse


def test_compare_exit_codes_and_summary(runs: tuple[Path, Path, Path]) -> None:
    base, same, worse = runs
    code, out = run_cli("compare", str(base), str(same), "--max-regression", "cer:0.005")
    assert code == 0 and out.splitlines()[-1] == f"ocrmetrics compare: passed ({base} -> {same})"
    code, out = run_cli("compare", str(base), str(worse), "--max-regression=cer:0.005", "--max-regression=field_f1:2%")
    assert code == 1
    assert "REGRESSION cer regressed for tesseract / receipts: 0.0200 -> 0.0450, delta +0.0250" in out
    assert ("WARNING: 2 documents got worse than the baseline beyond tolerance in 2 metrics "
            "(--document-regressions=warn: listed, the aggregates decide the exit status): 'doc02', 'doc05' "
            "(tesseract / receipts)") in out
    assert "doc02" in out and "doc05" in out and "doc03" not in out
    assert out.splitlines()[-1].startswith("ocrmetrics compare: FAILED")
    # without a tolerance nothing can fail, the output says so (naming the command's own option) and shows what moved
    code, out = run_cli("compare", str(base), str(worse))
    assert code == 0
    assert "no tolerance given (--max-regression=METRIC:AMOUNT): nothing fails; " in out and "--ocr-" not in out
    assert "  cer changed for tesseract / receipts: 0.0200 -> 0.0450, delta +0.0250" in out
    assert "gated aggregate" not in out  # no "no regression beyond tolerance (0 gated aggregates)" line


def test_compare_gates_significance_seed_and_json(runs: tuple[Path, Path, Path]) -> None:
    base, same, worse = runs
    code, out = run_cli("compare", str(base), str(same), "--gate", "cer<=0.01")
    assert code == 1 and "gate cer<=0.01 FAILED for tesseract / receipts" in out
    code, out = run_cli("compare", str(base), str(same), "--gate", "cer<=0.05", "--gate", "field_f1>=0.8")
    assert code == 0
    # two documents out of twelve regressed: the aggregate interval crosses zero, so with significance the
    # aggregate passes; the documents are listed (warn, the default) or fail (--document-regressions=fail)
    argv = ["compare", str(base), str(worse), "--max-regression", "cer:0.005", "--json", "--seed", "7"]
    code, out = run_cli(*argv, "--significance", "0.05", "--document-regressions", "warn")
    data = json.loads(out)
    (agg,) = [a for a in data["aggregates"] if a["metric"] == "cer"]
    assert agg["verdict"] == "not-significant" and agg["interval"][0] <= 0 < agg["interval"][1]
    assert code == 0 and not data["exit_failed"] and [r["document"] for r in data["regressions"]] == ["doc02", "doc05"]
    assert data["document_regressions"]["count"] == 2 and data["document_regressions"]["policy"] == "warn"
    code, out = run_cli(*argv, "--significance", "0.05", "--document-regressions", "fail")
    data = json.loads(out)
    assert code == 1 and data["exit_failed"] and [r["document"] for r in data["regressions"]] == ["doc02", "doc05"]
    assert json.loads(run_cli(*argv, "--significance", "0.05", "--document-regressions", "fail")[1]) == data  # same seed
    assert data["seed"] == 7 and data["significance"] == 0.05


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-regression", "cre:0.1"], "unknown metric 'cre' (did you mean 'cer'?)"),
        (["--gate", "cer>=0.1"], "cer is lower-is-better"),
        (["--significance", "5"], "significance must be between 0 and 1"),
        (["--resamples", "-3"], "must be 0 or more"),
    ],
)
def test_compare_bad_options_exit_2(runs: tuple[Path, Path, Path], extra: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    base, same, _ = runs
    assert run_cli("compare", str(base), str(same), *extra)[0] == 2
    assert message in capsys.readouterr().err


def test_compare_bad_files_exit_2(runs: tuple[Path, Path, Path], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    base, same, _ = runs
    assert run_cli("compare", str(tmp_path / "nope.json"), str(same))[0] == 2
    assert f"baseline run file '{tmp_path / 'nope.json'}' does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "pytest-ocrmetrics/1"}))
    assert run_cli("compare", str(base), str(bad))[0] == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ocrmetrics compare: error: run file '{bad}' is not a pytest-ocrmetrics run file")


# ----------------------------------------------------------------------------------------------------- report


def test_report_writes_html_csv_markdown(runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    base, _, worse = runs
    out_dir = tmp_path / "reports"
    code, out = run_cli("report", str(worse), "--html", str(out_dir / "r.html"), "--csv", str(out_dir / "r.csv"),
                        "--markdown", str(out_dir / "r.md"), "--baseline", str(base), "--max-regression", "cer:0.005",
                        "--gate", "cer<=0.03")
    assert code == 0  # a report never fails the build; compare does
    assert out.splitlines() == [f"HTML report: {out_dir / 'r.html'}", f"CSV report: {out_dir / 'r.csv'}",
                                f"Markdown summary: {out_dir / 'r.md'}"]
    html_text = (out_dir / "r.html").read_text(encoding="utf-8")
    assert 'id="baseline"' in html_text and 'id="gates"' in html_text
    assert (out_dir / "r.csv").read_text(encoding="utf-8").count("\n") == 13
    assert (out_dir / "r.md").read_text(encoding="utf-8").startswith("## ❌ OCR metrics: failed")


def test_report_paths_are_printed_with_their_control_characters_escaped(runs: tuple[Path, Path, Path],
                                                                        tmp_path: Path) -> None:
    _, _, worse = runs
    out_dir = Path(str(tmp_path / "r\x1b[2J\udcff"))  # the folder b"r\x1b[2J\xff"
    code, out = run_cli("report", str(worse), "--html", str(out_dir / "r.html"), "--benchmark-dir", str(out_dir))
    assert code == 0 and "\x1b" not in out and "\udcff" not in out
    assert f"HTML report: {tmp_path}/r\\x1b[2J\\udcff/r.html" in out.splitlines()
    assert (out_dir / "r.html").stat().st_size > 0 and (out_dir / "results.json").is_file()


def test_a_report_that_cannot_be_written_does_not_stop_the_others(
        runs: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, _, worse = runs
    in_the_way = tmp_path / "r.html"
    in_the_way.mkdir()  # a folder where the HTML file should go
    code, out = run_cli("report", str(worse), "--html", str(in_the_way), "--csv", str(tmp_path / "r.csv"))
    assert code == 2
    assert out.splitlines() == [f"CSV report: {tmp_path / 'r.csv'}"]
    err = capsys.readouterr().err
    assert err.startswith(f"ocrmetrics report: error: could not write the HTML report {in_the_way}")
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_report_needs_an_output(runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("report", str(runs[0]))[0] == 2
    assert "nothing to write" in capsys.readouterr().err


def test_console_script_in_a_subprocess(runs: tuple[Path, Path, Path]) -> None:
    base, _, worse = runs
    script = Path(sys.executable).with_name("ocrmetrics")  # the console script pip installed next to python
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "pytest_ocrmetrics.cli"]
    command = [*launcher, "compare", str(base), str(worse), "--max-regression", "cer:0.005"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "REGRESSION cer regressed" in done.stdout and done.stderr == ""


# ------------------------------------------------------------------------------------- comparisons to trust


def test_compare_matching_no_document_fails(runs: tuple[Path, Path, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    base, _, _ = runs
    renamed = tmp_path / "renamed.json"
    renamed.write_text(json.dumps(make_run([make_doc(f"doc{i:02d}", {"cer": 0.02}, dataset="receipts_2025")
                                            for i in range(12)])))
    code, out = run_cli("compare", str(base), str(renamed), "--max-regression", "cer:0.005")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (f"ERROR: baseline {str(base)!r} matched none of the 12 document(s) of this run, so nothing "
                        f"was compared: the baseline has tesseract / receipts, this run has tesseract / receipts_2025 "
                        f"(engine / dataset): the same documents are dataset 'receipts' in the baseline and "
                        f"'receipts_2025' here (a dataset is named by its path relative to pytest's rootdir); give it "
                        f"the baseline's name, --ocr-dataset=receipts=PATH (or name= of the ocr_dataset marker), or "
                        f"make a new baseline from this setup with pytest --ocr-json=PATH")
    assert lines[-1] == f"ocrmetrics compare: FAILED ({base} -> {renamed})"
    assert "gated aggregates" not in out
    code, out = run_cli("compare", str(base), str(renamed), "--json")
    data = json.loads(out)
    assert code == 1 and data["exit_failed"] and data["compared"] == 0 and "matched none" in data["error"]
    assert "ocrmetrics compare: error: baseline" in capsys.readouterr().err
    # a report still renders (it never fails the build) but says it on stderr
    code, _ = run_cli("report", str(renamed), "--baseline", str(base), "--markdown", str(tmp_path / "r.md"))
    assert code == 0 and "ocrmetrics report: error: baseline" in capsys.readouterr().err


def test_compare_partial_match_counts_documents(runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    base, _, _ = runs
    partial = _corpus()
    partial["documents"] = partial["documents"][3:] + [make_doc("doc99", {"cer": 0.02, "field_f1": 0.9})]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(partial))
    code, out = run_cli("compare", str(base), str(path), "--max-regression", "cer:0.005")
    assert code == 0
    assert out.splitlines()[0] == f"compared with baseline {str(base)!r}: 9 documents, 1 new, 3 missing"
    data = json.loads(run_cli("compare", str(base), str(path), "--json")[1])
    assert (data["compared"], data["new"], data["missing"]) == (9, 1, 3)


def test_compare_says_an_engine_of_the_new_run_that_evaluated_nothing(runs: tuple[Path, Path, Path],
                                                                     tmp_path: Path) -> None:
    """NEW.json holds a second engine whose every document was skipped (not installed where it ran): as pytest
    says it, an error when a tolerance asks for a verdict, a warning otherwise; also in the JSON."""
    base, _, _ = runs
    new = make_run(_corpus()["documents"] + [
        make_doc(f"doc{i:02d}", {}, engine="gone", outcome="skipped", message="engine 'gone' is not available")
        for i in range(3)])
    for row in new["summary"]:  # as the plugin writes it (the factory leaves it out, like a 0.1 run file)
        row["evaluated"] = row["passed"] + row["failed"]
    path = tmp_path / "new.json"
    path.write_text(json.dumps(new))
    line = ("gone / receipts: none of its 3 documents was evaluated (3 skipped: engine 'gone' is not available)")
    code, out = run_cli("compare", str(base), str(path))
    assert code == 0 and f"WARNING: {line}" in out.splitlines()
    code, out = run_cli("compare", str(base), str(path), "--max-regression", "cer:0.005")
    assert code == 1 and f"ERROR: {line}, so nothing was checked there" in out.splitlines()
    code, out = run_cli("compare", str(base), str(path), "--max-regression", "cer:0.005", "--json")
    data = json.loads(out)
    assert code == 1 and data["exit_failed"] is True
    assert data["unevaluated"] == [f"ERROR: {line}, so nothing was checked there"]


def test_compare_refuses_other_normalization_unless_allowed(runs: tuple[Path, Path, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    base, _, _ = runs
    lenient = _corpus()
    lenient["normalization"] = {**lenient["normalization"], "name": "lenient", "tokenizer": "unicode"}
    path = tmp_path / "lenient.json"
    path.write_text(json.dumps(lenient))
    assert run_cli("compare", str(base), str(path))[0] == 2
    err = capsys.readouterr().err
    assert err == (f"ocrmetrics compare: error: baseline {str(base)!r} was made with normalization 'nfc', unit "
                   f"'grapheme', tokenizer 'whitespace', {str(path)!r} uses normalization 'lenient', unit 'grapheme', "
                   f"tokenizer 'unicode'; make the baseline again with the same settings or pass --allow-mismatch "
                   f"to compare anyway\n")
    code, out = run_cli("compare", str(base), str(path), "--allow-mismatch", "--max-regression", "cer:0.005")
    assert code == 0
    assert out.splitlines()[0].startswith(f"WARNING: baseline {str(base)!r} was made with normalization 'nfc'")
    assert "compared anyway" in out.splitlines()[0]
    assert run_cli("report", str(path), "--baseline", str(base), "--csv", str(tmp_path / "r.csv"))[0] == 2


@pytest.mark.parametrize("token", ["NaN", "-Infinity"])
def test_compare_refuses_a_run_file_holding_nan(runs: tuple[Path, Path, Path], tmp_path: Path, token: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    base, same, _ = runs
    run = _corpus()
    run["documents"][4]["metrics"]["cer"] = 0.123456789
    bad = tmp_path / "nan.json"
    bad.write_text(json.dumps(run).replace("0.123456789", token))
    assert run_cli("compare", str(bad), str(same))[0] == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ocrmetrics compare: error: baseline run file {str(bad)!r} holds {token} at "
                          f"documents/4/metrics/cer, in document 'doc04' (tesseract / receipts); ")
    assert err.count("\n") == 1
    assert run_cli("compare", str(base), str(bad))[0] == 2
    assert f"run file {str(bad)!r} holds {token}" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_ocrmetrics import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ocrmetrics (pytest-ocrmetrics) {__version__}"


# ------------------------------------------------------------------------------------------------------ the collector

# each subcommand with arguments its parser accepts (a new subcommand must pick its side in the test below)
_MINIMAL_ARGS = {"score": ["a.txt", "b.txt"], "compare": ["a.json", "b.json"], "report": ["a.json"],
                 "biblicus-compare": ["a.txt"], "evaluate": ["--engine", "replay:preds", "labels.txt"], "serve": [],
                 "merge": ["a.json", "-o", "b.json"]}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_run_file_commands_run_with_the_collector_paused_and_restore_it(name: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """compare, report and merge read run files, write reports and end: no collection runs meanwhile (its full
    passes over the decoded runs found nothing, and a 20,000-document compare took 1.4x as long). serve runs for
    hours and evaluate runs engines: they keep the collector. It is on again afterwards, after a refusal too."""
    assert set(_MINIMAL_ARGS) == set(COMMANDS)
    seen: list[bool] = []

    def run(args: object, out: object) -> int:
        seen.append(gc.isenabled())
        raise UsageError("refused")

    monkeypatch.setattr(COMMANDS[name], "run", run)
    assert main([name, *_MINIMAL_ARGS[name]], stdout=io.StringIO()) == 2
    assert seen == [name not in {"compare", "report", "merge"}]
    assert gc.isenabled()
