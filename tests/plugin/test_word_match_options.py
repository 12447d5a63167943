"""Word matching (crr, word_f1, the HTML report's colours) is configurable in the plugin, defaults as the evaluator's.

The evaluator page's settings (specification document 002): case-insensitive, punctuation stripped, an edit distance
threshold of 1; ``--ocr-word-case-sensitive``, ``--ocr-word-keep-punctuation`` and ``--ocr-word-distance=N`` (and
their ini twins) change them, the run file's ``normalization.word_match`` records them, and a baseline made with
other word matching is refused like one made with another normalization.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.gating import normalization_mismatch
from pytest_ocrmetrics.reporting.html import render_html
from tests.helpers.plugin import PNG_1X1

SPEC_DEFAULTS = {"distance": 1, "case_sensitive": False, "ignore_punctuation": True}


def _dataset(root: Path) -> None:
    docs = {"a.png": {"full_text": "The quick brown fox jumps over the lazy dog"},  # the evaluator's manual example
            "b.png": {"full_text": "Hello, World!"}}
    (root / "data" / "images").mkdir(parents=True)
    (root / "data" / "ground_truth.json").write_text(json.dumps(docs), encoding="utf-8")
    for name in docs:
        (root / "data" / "images" / name).write_bytes(PNG_1X1 + name.encode())
    (root / "preds").mkdir()
    (root / "preds" / "a.txt").write_text("The quik brown fox jumps over lazy dog", encoding="utf-8")
    (root / "preds" / "b.txt").write_text("hello world", encoding="utf-8")


def _run(pytester: pytest.Pytester, *args: str) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    _dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=data", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                                "--ocr-metric=crr", "--ocr-metric=word_f1", *args)
    assert result.ret == 0, result.stdout.str()
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    return run, {d["id"]: d["metrics"] for d in run["documents"]}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_defaults_are_the_evaluators(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    run, metrics = _run(pytester, *xdist)
    # the evaluator's example: 7 exact of 8 OCR / 9 reference words, one fuzzy pair quick~quik (CRR 0.8)
    assert metrics["a.png"]["word_f1"] == pytest.approx(2 * 7 / (8 + 9))
    assert metrics["a.png"]["crr"] == pytest.approx((7 + 0.8) / 8)
    assert metrics["b.png"]["word_f1"] == 1.0 and metrics["b.png"]["crr"] == 1.0  # case and punctuation ignored
    assert run["normalization"]["word_match"] == SPEC_DEFAULTS


@pytest.mark.parametrize(("args", "ini", "a_crr", "b_crr", "recorded"), [
    (["--ocr-word-distance=0"], "", 1.0, 1.0, {"distance": 0}),  # only exact pairs: quick/quik unpaired
    (["--ocr-word-case-sensitive"], "", 0.975, 0.8, {"case_sensitive": True}),  # Hello~hello now fuzzy
    (["--ocr-word-keep-punctuation"], "", 0.975, 5 / 6, {"ignore_punctuation": False}),  # "Hello,"~"hello"
    ([], "ocr_word_distance = 0\nocr_word_case_sensitive = true\n", 1.0, 0.0,
     {"distance": 0, "case_sensitive": True}),  # the ini twins; no pair at all in b: crr 0
], ids=["distance-0", "case-sensitive", "keep-punctuation", "ini"])
def test_options_change_word_matching_and_are_recorded(pytester: pytest.Pytester, args: list[str], ini: str,
                                                       a_crr: float, b_crr: float, recorded: dict[str, Any]) -> None:
    if ini:
        pytester.makeini("[pytest]\n" + ini)
    run, metrics = _run(pytester, *args)
    assert metrics["a.png"]["crr"] == pytest.approx(a_crr)
    assert metrics["b.png"]["crr"] == pytest.approx(b_crr)
    assert metrics["a.png"]["word_f1"] == pytest.approx(2 * 7 / (8 + 9))  # exact words only, whatever the distance
    assert metrics["b.png"]["word_f1"] == (1.0 if recorded == {"distance": 0} else 0.0)
    assert run["normalization"]["word_match"] == {**SPEC_DEFAULTS, **recorded}


@pytest.mark.parametrize("value", ["-1", "one", "1.5", "6"])
def test_a_bad_distance_is_one_usage_error(pytester: pytest.Pytester, value: str) -> None:
    _dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=data", "--ocr-engine=replay:preds", f"--ocr-word-distance={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-word-distance*"])
    assert "Traceback" not in result.stderr.str()
    if value in ("-1", "6"):  # issue 20 C6: document 002's range 0-5, in the page's sentence
        result.stderr.fnmatch_lines([f"*--ocr-word-distance must be a whole number from 0 to 5 (the largest edit "
                                     f"distance of a fuzzy match), got {value}*"])


def test_the_largest_distance_is_accepted_in_the_ini_file(pytester: pytest.Pytester) -> None:
    _dataset(pytester.path)
    pytester.makeini("[pytest]\nocr_word_distance = 5\n")
    result = pytester.runpytest("--ocr-dataset=data", "--ocr-engine=replay:preds")
    assert result.ret == pytest.ExitCode.OK
    pytester.makeini("[pytest]\nocr_word_distance = 7\n")
    result = pytester.runpytest("--ocr-dataset=data", "--ocr-engine=replay:preds")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-word-distance must be a whole number from 0 to 5*got 7*"])


def test_a_baseline_with_other_word_matching_is_refused() -> None:
    old = {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace", "field_compare": "lowercase", "definitions": 2}
    new = {**old, "word_match": dict(SPEC_DEFAULTS)}
    names = {"baseline_name": "baseline", "override": "--ocr-baseline-allow-mismatch"}
    assert normalization_mismatch(old, new, **names) is None  # absent: the defaults every earlier run used
    message = normalization_mismatch(old, {**new, "word_match": {**SPEC_DEFAULTS, "distance": 0}}, **names)
    assert message is not None and "word matching" in message and "distance=0" in message


def test_the_html_report_highlights_words_as_the_run_matched_them() -> None:
    run = make_run([make_doc("a", {"cer": 0.1}, reference="Total 10", hypothesis="TOTAL 1O")])
    assert '<span class="w-exact">TOTAL</span>' in render_html(run)
    run["normalization"]["word_match"] = {"distance": 0, "case_sensitive": True, "ignore_punctuation": True}
    recorded = render_html(run)
    assert '<span class="w-exact">' not in recorded and '<span class="w-fuzzy"' not in recorded
    assert '<span class="w-exact">TOTAL</span>' in render_html(run, case_sensitive=False)  # the caller wins
