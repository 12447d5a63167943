"""Suite gates, tolerances, baselines and run comparison (pytest_ocrmetrics.gating, no pytest inside)."""

from __future__ import annotations

import doctest
import json
import random
from pathlib import Path

import pytest
from ocr_run_factory import make_doc, make_run, validate

from pytest_ocrmetrics import gating
from pytest_ocrmetrics.gating import (
    Baseline,
    Gate,
    RunFileError,
    Tolerance,
    compare_runs,
    evaluate_gates,
    parse_gate,
    parse_significance,
    parse_tolerance,
)
from pytest_ocrmetrics.metrics.registry import METRIC_DEFINITIONS, METRICS


def test_module_doctests() -> None:
    result = doctest.testmod(gating, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ------------------------------------------------------------------------------------------------------ gates


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("cer<=0.03", Gate("cer", "<=", 0.03)),
        ("  field_f1 >= 0.9 ", Gate("field_f1", ">=", 0.9)),
        ("mean:cer<0.05", Gate("cer", "<", 0.05, "mean")),
        ("P95 : wer <= 0.2", Gate("wer", "<=", 0.2, "p95")),
        ("median:field_f1>0.5", Gate("field_f1", ">", 0.5, "median")),
        ("cer<=0.03 [engine=tesseract]", Gate("cer", "<=", 0.03, engine="tesseract")),
        ("cer<=0.03[dataset=receipts, engine=trocr*]", Gate("cer", "<=", 0.03, engine="trocr*", dataset="receipts")),
        ("micro:cer<=1e-2", Gate("cer", "<=", 0.01)),
        ("cer<=3%", Gate("cer", "<=", 0.03)),
        ("cer <= 500%", Gate("cer", "<=", 5.0)),
        ("mean:field_f1>=90%", Gate("field_f1", ">=", 0.9, "mean")),
        ("token_ratio<=1.5", Gate("token_ratio", "<=", 1.5)),  # a ratio, not a fraction: above 1 is no typo
    ],
)
def test_parse_gate(expr: str, expected: Gate) -> None:
    assert parse_gate(expr) == expected


@pytest.mark.parametrize("expr", ["cer<=0.03", "p95:cer<=0.2 [engine=tesseract]",
                                  "mean:field_f1>=0.9 [engine=a/b, dataset=rec*]", "cer<=500%"])
def test_gate_expression_round_trips(expr: str) -> None:
    gate = parse_gate(expr)
    assert parse_gate(gate.expression) == gate
    assert str(gate) == gate.expression


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("cre<=0.03", "unknown metric 'cre' (did you mean 'cer'?); valid metrics: cer, wer"),
        ("cer=<0.03", "unknown operator '=<'; valid operators: <=, <, >=, >"),
        ("cer==0.03", "unknown operator '=='"),
        ("cer 0.03", "missing operator; valid operators"),
        ("cer<=", "missing threshold value"),
        ("cer<=abc", "the limit on cer must be a number such as 0.05 or a percentage such as 5%, got 'abc'"),
        ("cer<=5", "gate 'cer<=5' reads as 500 %; write cer<=0.05 for 5 % (or cer<=500% if you mean it)"),
        ("p95:wer<=12 [engine=x]", "gate 'p95:wer<=12 [engine=x]' reads as 1200 %; write p95:wer<=0.12 for 12 % "
                                   "(or p95:wer<=1200% if you mean it)"),
        ("field_f1>=150%", "field_f1 is at most 100 %, so a limit of 150% fails every document"),
        ("cer<=-1%", "cer is never negative, so a limit of -1% fails every document"),
        ("avg:cer<=0.03", "unknown statistic 'avg'; valid statistics: micro, mean, median, p90, p95"),
        ("ci_hi:cer<=0.03", "unknown statistic 'ci_hi' (did you mean 'ci_high'?); valid statistics: micro, mean"),
        ("cer>=0.03", "cer is lower-is-better, so the gate must be an upper bound such as 'cer<=0.03'"),
        ("field_f1<0.9", "field_f1 is higher-is-better, so the gate must be a lower bound such as 'field_f1>=0.9'"),
        ("field_f1>=90", "write field_f1>=0.9 for 90 %"),
        ("cer<=0.03 [model=x]", "unknown scope key 'model'; valid keys: engine, dataset"),
        ("cer<=0.03 [engine]", "scope entries are written key=value"),
        ("cer<=nan", "finite number"),
        ("", "empty gate expression"),
        ("<=0.03", "expected [STATISTIC:]METRIC OP VALUE"),
    ],
)
def test_parse_gate_rejects_typos_with_one_sentence(expr: str, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_gate(expr)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_lower_is_better_gate_may_exceed_one_when_written_as_a_percentage() -> None:
    # CER can exceed 1 (a hallucinating model): cer<=1.5 is refused as a percent typo, cer<=150% says it is meant
    with pytest.raises(ValueError, match="reads as 150 %"):
        parse_gate("cer<=1.5")
    gate = parse_gate("cer<=150%")
    assert gate.threshold == 1.5 and gate.expression == "cer<=150%"
    assert [r.passed for r in evaluate_gates([gate], [_row("e", "d", cer={"micro": 1.2, "n": 1})])] == [True]


def _row(engine: str, dataset: str, **stats: dict[str, float]) -> dict:
    return {"engine": engine, "dataset": dataset, "documents": 3, "metrics": stats}


def test_evaluate_gates_pass_fail_and_boundaries() -> None:
    rows = [
        _row("tesseract", "receipts", cer={"micro": 0.03, "mean": 0.05, "n": 3}),
        _row("trocr", "receipts", cer={"micro": 0.031, "mean": 0.01, "n": 3}),
    ]
    results = evaluate_gates([parse_gate("cer<=0.03")], rows)
    assert [(r.engine, r.passed, r.actual) for r in results] == [("tesseract", True, 0.03), ("trocr", False, 0.031)]
    # strict operator: equal is not below
    assert [r.passed for r in evaluate_gates([parse_gate("cer<0.03")], rows)] == [False, False]
    # statistic prefix reads the other statistic
    assert [r.passed for r in evaluate_gates([parse_gate("mean:cer<=0.03")], rows)] == [False, True]
    failed = results[1]
    assert failed.threshold == 0.03 and failed.status == "failed"
    assert failed.message == "gate cer<=0.03 FAILED for trocr / receipts: micro cer = 0.0310 (n=3)"


def test_evaluate_gates_scope_and_missing_metrics() -> None:
    rows = [
        _row("tesseract", "receipts", cer={"micro": 0.1, "mean": 0.1, "n": 3},
             field_f1={"micro": 0.95, "mean": 0.95, "n": 3}),
        _row("tesseract", "pages", cer={"micro": 0.02, "mean": 0.02, "n": 3}),
        _row("trocr-base", "pages", cer={"micro": 0.2, "mean": 0.2, "n": 3}),
    ]
    scoped = evaluate_gates([parse_gate("cer<=0.05 [engine=tess*, dataset=pages]")], rows)
    assert [(r.engine, r.dataset, r.passed) for r in scoped] == [("tesseract", "pages", True)]
    # a row without the metric (text-only dataset) is skipped, not failed
    f1 = evaluate_gates([parse_gate("field_f1>=0.9")], rows)
    assert [(r.dataset, r.passed) for r in f1] == [("receipts", True)]


def test_gate_matching_nothing_fails_visibly() -> None:
    rows = [_row("tesseract", "pages", cer={"micro": 0.02, "mean": 0.02, "n": 3})]
    for expr in ("cer<=0.05 [engine=paddle]", "field_f1>=0.9", "cer<=0.05 [dataset=receipts]"):
        (result,) = evaluate_gates([parse_gate(expr)], rows)
        assert result.status == "unmatched" and not result.passed and result.actual is None
        assert "matched no engine x dataset" in result.message
    # zero documents scored counts as nothing to look at
    empty = [_row("tesseract", "pages", cer={"micro": 0.0, "mean": 0.0, "n": 0})]
    assert evaluate_gates([parse_gate("cer<=0.05")], empty)[0].status == "unmatched"


# -------------------------------------------------------------------------------------------------- tolerances


def test_parse_tolerance_absolute_relative_and_default() -> None:
    assert parse_tolerance("cer:0.005") == Tolerance("cer", 0.005)
    assert parse_tolerance("cer=0.005") == Tolerance("cer", 0.005)
    assert parse_tolerance(" field_f1 : 2% ") == Tolerance("field_f1", 0.02, relative=True)
    assert parse_tolerance("*:1%") == Tolerance("*", 0.01, relative=True)
    assert parse_tolerance("field_f1:2%").allowed(0.5) == pytest.approx(0.01)
    assert parse_tolerance("cer:0.005").allowed(0.5) == 0.005
    assert str(parse_tolerance("field_f1:2%")) == "field_f1:2%"
    assert str(parse_tolerance("cer:0.005")) == "cer:0.005"


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ("cre:0.005", "unknown metric 'cre' (did you mean 'cer'?); valid metrics: cer"),
        ("cer", "expected METRIC:AMOUNT or METRIC:PERCENT%"),
        ("cer:", "expected METRIC:AMOUNT"),
        ("cer:abc", "'abc' is not a number"),
        ("cer:-0.1", "non-negative"),
        ("", "empty tolerance"),
    ],
)
def test_parse_tolerance_rejects_typos(item: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        parse_tolerance(item)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def _baseline(**metrics: float) -> Baseline:
    return Baseline.from_run(make_run([make_doc("a", metrics)]))


def test_tolerance_is_direction_aware() -> None:
    baseline = _baseline(cer=0.02, field_f1=0.9)
    tol = ["cer:0.005", "field_f1:2%"]
    # CER going up and F1 going down are regressions; the other way round they are not
    assert [r.metric for r in baseline.check_document("receipts", "tesseract", "a", {"cer": 0.03, "field_f1": 0.85}, tol)] \
        == ["cer", "field_f1"]
    assert baseline.check_document("receipts", "tesseract", "a", {"cer": 0.0, "field_f1": 1.0}, tol) == []
    # within tolerance (F1: 2 % of 0.9 = 0.018; the exact boundary is not a regression despite float noise)
    assert baseline.check_document("receipts", "tesseract", "a", {"cer": 0.025, "field_f1": 0.883}, tol) == []
    assert [r.metric for r in baseline.check_document("receipts", "tesseract", "a", {"field_f1": 0.88}, tol)] == ["field_f1"]


def test_check_document_message_and_unknown_documents() -> None:
    baseline = _baseline(cer=0.02, wer=0.1)
    (reg,) = baseline.check_document("receipts", "tesseract", "a", {"cer": 0.052, "wer": 0.5}, ["cer:0.005"])
    assert (reg.old, reg.new, reg.document) == (0.02, 0.052, "a")
    assert reg.delta == pytest.approx(0.032) and reg.worse_by == pytest.approx(0.032)
    assert reg.message == ("cer regressed on document 'a' (tesseract / receipts): baseline 0.0200, now 0.0520, "
                           "delta +0.0320 (allowed cer:0.005, i.e. 0.0050 worse)")
    # wer has no tolerance: it never fails; a '*' default gates every metric
    assert [r.metric for r in baseline.check_document("receipts", "tesseract", "a", {"wer": 0.5}, ["*:0.01"])] == ["wer"]
    assert baseline.check_document("receipts", "tesseract", "new.png", {"cer": 0.9}, ["cer:0"]) == []
    assert baseline.check_document("pages", "tesseract", "a", {"cer": 0.9}, ["cer:0"]) == []


def test_baseline_load_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(RunFileError, match=r"baseline run file '.*nope\.json' does not exist"):
        Baseline.load(missing)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(RunFileError, match=r"broken\.json' is not valid JSON \(line 1"):
        Baseline.load(broken)
    wrong = tmp_path / "wrong.json"
    run = make_run([make_doc("a", {"cer": 0.1})])
    del run["documents"][0]["engine"]
    wrong.write_text(json.dumps(run))
    with pytest.raises(RunFileError, match=r"wrong\.json' is not a pytest-ocrmetrics run file: at documents/0: "
                                           r"'engine' is a required property"):
        Baseline.load(wrong)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(make_run([make_doc("a", {"cer": 0.1})])))
    baseline = Baseline.load(good)
    assert baseline.path == good and baseline.document_metrics("receipts", "tesseract", "a") == {"cer": 0.1}


# ------------------------------------------------------------------------------------------------ comparison


def _corpus(n: int = 20, *, engine: str = "tesseract", dataset: str = "receipts", seed: int = 1,
            bump: dict[int, float] | None = None, noise: float = 0.0) -> list[dict]:
    """n documents with CER around 0.03; ``bump`` adds CER to chosen documents, ``noise`` jitters every one."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        cer = 0.02 + 0.002 * (i % 7) + (bump or {}).get(i, 0.0) + rng.uniform(-noise, noise)
        docs.append(make_doc(f"doc{i:02d}.png", {"cer": max(cer, 0.0), "wer": 0.1, "field_f1": 0.9},
                             engine=engine, dataset=dataset, size=200 + 10 * i))
    return docs


def test_injected_regression_reports_exactly_those_documents_and_the_aggregate() -> None:
    baseline = make_run(_corpus())
    current = make_run(_corpus(bump={3: 0.05, 7: 0.02, 11: 0.1}))
    validate(baseline)
    validate(current)
    comparison = compare_runs(baseline, current, ["cer:0.005"], seed=0, resamples=200)
    assert {r.document for r in comparison.regressions} == {"doc03.png", "doc07.png", "doc11.png"}
    assert all(r.metric == "cer" for r in comparison.regressions)
    (agg,) = [a for a in comparison.aggregates if a.metric == "cer"]
    assert agg.verdict == "regression" and agg.n == 20
    assert comparison.aggregate_failed and comparison.exit_failed
    # metrics without a tolerance are compared but never judged
    assert {a.metric: a.verdict for a in comparison.aggregates}["wer"] == "ungated"
    assert comparison.document_regressions("receipts", "tesseract", "doc07.png")[0].new == pytest.approx(0.04)
    # the per-document verdicts are the ones the plugin gets from Baseline.check_document
    base = Baseline.from_run(baseline)
    per_doc = [r for d in current["documents"]
               for r in base.check_document(d["dataset"], d["engine"], d["id"], d["metrics"], ["cer:0.005"])]
    assert per_doc == list(comparison.regressions)


def test_unchanged_run_passes_and_says_so() -> None:
    run = make_run(_corpus())
    comparison = compare_runs(run, run, ["cer:0.005", "field_f1:2%"], resamples=100)
    assert not comparison.exit_failed and comparison.regressions == () and comparison.improvements == ()
    assert {a.verdict for a in comparison.aggregates} == {"unchanged", "ungated"}
    lines = comparison.summary_lines()
    assert lines[-1] == "no regression beyond tolerance against the baseline (2 gated aggregates)"
    # the evidence of the pass: each gated aggregate with its numbers (the ungated ones are in the reports)
    within = [line for line in lines if " within tolerance for " in line]
    assert [line.split(" within")[0] for line in within] == ["cer", "field_f1"]
    assert within[0].endswith("delta ±0.0000, 95% CI [±0.0000, ±0.0000], n=20 paired documents; allowed cer:0.005")
    capped = comparison.summary_lines(max_documents=1)
    assert [line for line in capped if "within tolerance" in line][1:] == [
        "... and 1 more within tolerance (every one in the reports)"]
    # nothing moves: the interval is exactly zero
    assert all(a.interval == (0.0, 0.0) for a in comparison.aggregates)


def test_micro_aggregate_is_recomputed_from_counts_over_paired_documents() -> None:
    old = [make_doc("a", {"cer": 0.1}, size=1000), make_doc("b", {"cer": 0.5}, size=10)]
    new = [make_doc("a", {"cer": 0.1}, size=1000), make_doc("b", {"cer": 0.9}, size=10),
           make_doc("c", {"cer": 0.9}, size=5000)]  # new document: listed, but it must not move the aggregate
    comparison = compare_runs(make_run(old), make_run(new), ["cer:0.01"], resamples=50)
    (agg,) = comparison.aggregates
    assert agg.old == pytest.approx((100 + 5) / 1010) and agg.new == pytest.approx((100 + 9) / 1010)
    assert agg.n == 2
    assert [ref.id for ref in comparison.new_documents] == ["c"]


def test_summary_lines_name_metric_engine_dataset_old_new_delta_interval() -> None:
    comparison = compare_runs(make_run(_corpus()), make_run(_corpus(bump={i: 0.02 for i in range(20)})),
                              ["cer:0.005"], resamples=200)
    line = next(line for line in comparison.summary_lines() if line.startswith("REGRESSION"))
    agg = comparison.aggregate_regressions[0]
    assert line.startswith("REGRESSION cer regressed for tesseract / receipts: ")
    assert f"{agg.old:.4f} -> {agg.new:.4f}" in line
    assert f"delta {agg.delta:+.4f}" in line
    assert f"95% CI [{agg.interval[0]:+.4f}, {agg.interval[1]:+.4f}]" in line
    assert "n=20 paired documents; allowed cer:0.005" in line
    assert any(line.startswith("WARNING: 20 documents got worse than the baseline beyond tolerance in 20 metrics "
                               "(--ocr-document-regressions=warn: listed, their tests pass, the aggregates decide): "
                               "'doc00.png', ") for line in comparison.summary_lines())


def test_improvements_say_the_baseline_can_be_updated() -> None:
    comparison = compare_runs(make_run(_corpus(bump={i: 0.03 for i in range(20)})), make_run(_corpus()),
                              ["cer:0.005"], resamples=100)
    assert not comparison.exit_failed
    assert len(comparison.improvements) == 20 and comparison.aggregate_improvements
    lines = comparison.update_lines()
    assert lines[0].startswith("improved: cer improved for tesseract / receipts") and "baseline can be updated" in lines[0]
    assert "20 document metric(s) improved beyond tolerance; the baseline can be updated:" in lines


def test_new_and_missing_documents_are_listed_never_dropped() -> None:
    old_docs = _corpus(5)
    new_docs = _corpus(5)[1:]  # doc00 gone
    new_docs[0]["outcome"] = "error"  # doc01 errored: no metrics this time
    new_docs[0]["metrics"] = {}
    new_docs.append(make_doc("fresh.png", {"cer": 0.3}))
    new_docs.append(make_doc("doc00.png", {"cer": 0.02}, engine="trocr"))  # same id, another engine: new
    comparison = compare_runs(make_run(old_docs), make_run(new_docs), ["cer:0.005"], resamples=0)
    assert [(r.id, r.engine, r.reason) for r in comparison.missing_documents] == [
        ("doc00.png", "tesseract", "not in this run"),
        ("doc01.png", "tesseract", "not scored in this run (outcome error)"),
    ]
    assert [(r.id, r.engine) for r in comparison.new_documents] == [("fresh.png", "tesseract"), ("doc00.png", "trocr")]
    lines = comparison.summary_lines()
    assert "2 documents missing from this run (in the baseline):" in lines
    assert "  receipts/doc00.png (tesseract): not in this run" in lines
    assert "2 new documents (not in the baseline):" in lines
    # with resamples=0 there is no interval, and nothing else breaks
    assert all(a.interval is None for a in comparison.aggregates)
    assert comparison.aggregates[0].n == 3


def test_bootstrap_is_deterministic_per_seed() -> None:
    old = make_run(_corpus(40, noise=0.01, seed=1))
    new = make_run(_corpus(40, noise=0.01, seed=2))

    def interval(seed: int) -> tuple[float, float]:
        comparison = compare_runs(old, new, ["cer:0.001"], seed=seed, resamples=300)
        return next(a.interval for a in comparison.aggregates if a.metric == "cer")

    first = interval(0)
    assert interval(0) == first
    assert any(interval(seed) != first for seed in (1, 2, 3))
    low, high = first
    agg = next(a for a in compare_runs(old, new, ["cer:0.001"], resamples=300).aggregates if a.metric == "cer")
    assert low <= agg.delta <= high


def test_bootstrap_interval_does_not_depend_on_other_engines() -> None:
    old = _corpus(15, noise=0.01, seed=1)
    new = _corpus(15, noise=0.01, seed=2)
    alone = compare_runs(make_run(old), make_run(new), ["cer:0.001"], resamples=200)
    more = compare_runs(make_run(old + _corpus(15, engine="trocr")), make_run(new + _corpus(15, engine="trocr")),
                        ["cer:0.001"], resamples=200)
    pick = lambda c: next(a.interval for a in c.aggregates if a.metric == "cer" and a.engine == "tesseract")  # noqa: E731
    assert pick(alone) == pick(more)


def test_significance_silences_noise_but_not_real_regressions() -> None:
    # noise only: every document jitters by up to +-0.02; the mean moves a little by chance
    base = make_run(_corpus(30, noise=0.02, seed=10))
    noisy = make_run(_corpus(30, noise=0.02, seed=11))
    tol = ["cer:0.0"]
    plain = compare_runs(base, noisy, tol, resamples=500)
    cer = next(a for a in plain.aggregates if a.metric == "cer")
    # pick the direction so that the noise looks like a regression without the significance setting
    if cer.verdict != "regression":
        base, noisy = noisy, base
        plain = compare_runs(base, noisy, tol, resamples=500)
    assert next(a for a in plain.aggregates if a.metric == "cer").verdict == "regression"
    significant = compare_runs(base, noisy, tol, significance=0.05, resamples=500)
    cer = next(a for a in significant.aggregates if a.metric == "cer")
    assert cer.verdict == "not-significant" and cer.interval[0] < 0 < cer.interval[1]
    assert not significant.aggregate_failed
    assert any(line.startswith("not significant at 0.05: cer got worse") for line in significant.summary_lines())
    # a real shift of every document is significant
    shifted = make_run(_corpus(30, noise=0.02, seed=11, bump={i: 0.03 for i in range(30)}))
    real = compare_runs(base, shifted, tol, significance=0.05, resamples=500)
    cer = next(a for a in real.aggregates if a.metric == "cer")
    assert cer.verdict == "regression" and cer.interval[0] > 0 and cer.level == pytest.approx(0.95)
    # same seed, same verdict
    again = compare_runs(base, shifted, tol, significance=0.05, resamples=500)
    assert again.aggregates == real.aggregates


def test_higher_is_better_aggregate_regression() -> None:
    old = [make_doc(f"d{i}", {"field_f1": 0.95}) for i in range(10)]
    new = [make_doc(f"d{i}", {"field_f1": 0.95 if i % 2 else 0.80}) for i in range(10)]
    comparison = compare_runs(make_run(old), make_run(new), ["field_f1:2%"], significance=0.05, resamples=300)
    (agg,) = comparison.aggregates
    assert agg.verdict == "regression" and agg.delta < 0 and agg.interval[1] < 0
    assert {r.document for r in comparison.regressions} == {"d0", "d2", "d4", "d6", "d8"}


def test_compare_rejects_bad_settings() -> None:
    run = make_run(_corpus(3))
    with pytest.raises(ValueError, match="significance must be between 0 and 1"):
        compare_runs(run, run, significance=5)
    with pytest.raises(ValueError, match="resamples must be zero or more"):
        compare_runs(run, run, resamples=-1)


@pytest.mark.parametrize(("text", "fragment"), [("5", "between 0 and 1 (e.g. 0.05), got 5"), ("0", "between 0 and 1"),
                                              ("1", "between 0 and 1"), ("nan", "between 0 and 1"),
                                              ("abc", "'abc' is not a number; write e.g. 0.05")])
def test_parse_significance_rejects_values_outside_zero_and_one(text: str, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_significance(text)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_parse_significance_accepts_text_and_numbers() -> None:
    assert parse_significance("0.05") == 0.05 and parse_significance(0.1) == 0.1


def test_comparison_to_dict_is_json() -> None:
    comparison = compare_runs(make_run(_corpus()), make_run(_corpus(bump={1: 0.1})), ["cer:0.005"], resamples=20,
                              document_regressions="fail")
    data = json.loads(json.dumps(comparison.to_dict()))
    assert data["exit_failed"] is True and data["regressions"][0]["document"] == "doc01.png"
    assert {a["metric"] for a in data["aggregates"]} <= set(METRICS)


def test_non_finite_values_are_not_compared() -> None:
    old = [make_doc("a", {"cer": 0.1}), make_doc("b", {"cer": 0.1})]
    new = [make_doc("a", {"cer": float("nan")}), make_doc("b", {"cer": 0.5})]
    comparison = compare_runs(make_run(old), make_run(new), ["cer:0.01"], resamples=20)
    assert [r.document for r in comparison.regressions] == ["b"]
    (agg,) = comparison.aggregates
    assert agg.n == 1 and agg.new == pytest.approx(0.5)


# ------------------------------------------------------------------------------- a comparison must compare something


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"dataset": "receipts_v2"}, "the baseline has tesseract / receipts, this run has tesseract / receipts_v2 "
                                     "(engine / dataset): the same documents are dataset 'receipts' in the baseline "
                                     "and 'receipts_v2' here (a dataset is named by its path relative to pytest's "
                                     "rootdir); give it the baseline's name, --ocr-dataset=receipts=PATH"),
        ({"engine": "trocr"}, "the baseline has tesseract / receipts, this run has trocr / receipts"),
    ],
    ids=["renamed-dataset", "other-engine"],
)
def test_comparison_matching_no_document_fails_and_says_why(change: dict, fragment: str) -> None:
    old = make_run(_corpus(4))
    new = make_run(_corpus(4, **change))
    comparison = compare_runs(old, new, ["cer:0.005"], resamples=20, baseline_source="base.json")
    assert comparison.matched_nothing and comparison.compared == 0
    assert comparison.exit_failed  # nothing compared is not "passed (0 gated aggregates)"
    assert comparison.error.startswith("baseline 'base.json' matched none of the 4 document(s) of this run, "
                                       "so nothing was compared: ")
    assert fragment in comparison.error and "\n" not in comparison.error
    assert comparison.error.endswith("make a new baseline from this setup with pytest --ocr-json=PATH")
    # the error is the summary: no list of 4 new and 4 missing documents, no "no regression" line
    assert comparison.summary_lines() == [f"ERROR: {comparison.error}"]
    assert comparison.to_dict()["error"] == comparison.error and comparison.to_dict()["exit_failed"] is True
    assert comparison.baseline_entry()["compared"] == 0


def test_comparison_matching_no_document_other_causes() -> None:
    same_pair_other_ids = compare_runs(make_run(_corpus(2)), make_run([make_doc("x.png", {"cer": 0.1})]))
    assert ("both have tesseract / receipts (engine / dataset) but no document id in common (the baseline has e.g. "
            "'doc00.png', this run 'x.png'), so the documents were probably renamed") in same_pair_other_ids.error
    unscored = make_run([make_doc("doc00.png", {"cer": 0.1}, outcome="error")])
    assert "the baseline has no scored document (1 document(s), none passed or failed)" in \
        compare_runs(unscored, make_run(_corpus(2))).error
    assert "no document of this run was scored" in compare_runs(make_run(_corpus(2)), unscored).error
    empty = compare_runs(make_run(_corpus(2)), make_run([]))
    assert empty.exit_failed and "none of the 0 document(s)" in empty.error
    # one matching document is enough: no error
    assert compare_runs(make_run(_corpus(3)), make_run(_corpus(1))).error is None


def test_partial_match_counts_compared_new_and_missing() -> None:
    old = _corpus(5)
    new = _corpus(5)[2:] + [make_doc("fresh.png", {"cer": 0.03})]
    comparison = compare_runs(make_run(old), make_run(new), ["cer:0.005"], resamples=0, baseline_source="b.json")
    assert (comparison.compared, len(comparison.new_documents), len(comparison.missing_documents)) == (3, 1, 2)
    assert not comparison.exit_failed and comparison.error is None
    assert comparison.summary_lines()[0] == "compared with baseline 'b.json': 3 documents, 1 new, 2 missing"
    assert comparison.baseline_entry() == {
        "path": "b.json", "compared": 3, "new": 1, "missing": 2,
        "normalization": {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace", "field_compare": "lowercase",
                          "definitions": METRIC_DEFINITIONS},
        "normalization_mismatch": False, "warning": None, "error": None,
        "document_regressions": {"policy": "warn", "count": 0, "failed": False, "documents": [],
                                 "fact_regressions": 0},
    }
    # without a source the baseline is "the baseline"
    assert compare_runs(make_run(old), make_run(new)).summary_lines()[0].startswith("compared with the baseline: 3 ")


# -------------------------------------------------------------------------------------- normalization settings


def test_normalization_mismatch_names_both_profiles_and_the_override() -> None:
    nfc = {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace"}
    assert gating.normalization_mismatch(nfc, dict(nfc), baseline_name="b", override="--x") is None
    # the profile name is compared canonically
    assert gating.normalization_mismatch({**nfc, "name": "nfc+casefold"}, {**nfc, "name": "NFC+CASEFOLD"},
                                         baseline_name="b", override="--x") is None
    for key, value in (("name", "lenient"), ("unit", "codepoint"), ("tokenizer", "unicode")):
        message = gating.normalization_mismatch(nfc, {**nfc, key: value}, baseline_name="--ocr-baseline 'b.json'",
                                                override="--ocr-baseline-allow-mismatch")
        assert message is not None and "\n" not in message
        assert message.startswith("--ocr-baseline 'b.json' was made with normalization 'nfc', unit 'grapheme', "
                                  "tokenizer 'whitespace', this run uses ")
        assert repr(value) in message
        assert message.endswith("; make the baseline again with the same settings or pass "
                                "--ocr-baseline-allow-mismatch to compare anyway")


def test_comparison_across_normalization_settings_warns() -> None:
    old = make_run(_corpus(3))
    new = make_run(_corpus(3))
    new["normalization"] = {"name": "lenient", "unit": "codepoint", "tokenizer": "whitespace"}
    comparison = compare_runs(old, new, ["cer:0.005"], resamples=0)
    assert comparison.warning.startswith("the baseline was made with normalization 'nfc', unit 'grapheme'")
    assert "this run uses normalization 'lenient', unit 'codepoint'" in comparison.warning
    assert comparison.summary_lines()[0] == f"WARNING: {comparison.warning}"
    entry = comparison.baseline_entry()
    assert entry["normalization_mismatch"] is True and entry["warning"] == comparison.warning
    assert compare_runs(old, make_run(_corpus(3)), resamples=0).warning is None
    assert Baseline.from_run(old).normalization_mismatch(new["normalization"], name="b", override="--x") is not None


# ------------------------------------------------------------------------------------------- NaN in a run file


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("where", ["metrics", "counts"])
def test_run_file_with_non_finite_numbers_is_refused_naming_the_document(tmp_path: Path, token: str,
                                                                         where: str) -> None:
    run = make_run(_corpus(3))
    sentinel = 0.123456789  # the second document's CER (or its error count) becomes NaN / infinity in the JSON text
    if where == "metrics":
        run["documents"][1]["metrics"]["cer"] = sentinel
    else:
        run["documents"][1]["counts"]["cer"]["errors"] = sentinel
    text = json.dumps(run)
    assert text.count(repr(sentinel)) == 1
    path = tmp_path / "base.json"
    path.write_text(text.replace(repr(sentinel), token), encoding="utf-8")
    assert json.loads(path.read_text())  # json itself accepts it silently
    with pytest.raises(RunFileError) as info:
        Baseline.load(path)
    message = str(info.value)
    shown = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity", "1e999": "Infinity"}[token]
    assert message.startswith(f"baseline run file {str(path)!r} holds {shown} at documents/1/{where}/cer")
    assert "in document 'doc01.png' (tesseract / receipts)" in message and "\n" not in message


def test_non_finite_number_outside_documents_is_located(tmp_path: Path) -> None:
    run = make_run(_corpus(2))
    run["summary"][0]["metrics"]["cer"]["p95"] = float("inf")
    with pytest.raises(RunFileError, match=r"^test run holds Infinity at summary/0/metrics/cer/p95; a run file"):
        validate(run)
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RunFileError, match="nested too deeply"):
        gating.load_run(path)


def test_a_huge_malformed_run_file_is_refused_at_its_first_problem(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline whose ``documents`` held 10,000,000 empty objects was refused only after ~9 minutes: the schema
    validator built and weighed every error (7 per document). Validation stops at the first error: the message names
    the first offending document, and only a few errors are ever built (counted on jsonschema's error class; it
    fails at once past 20, so the old behaviour fails this test quickly)."""
    import jsonschema

    built: list[int] = []
    original = jsonschema.exceptions.ValidationError.__init__

    def counting(self: object, *args: object, **kwargs: object) -> None:
        built.append(1)
        if len(built) > 20:
            raise AssertionError("the validator went on past the first errors of the run file")
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jsonschema.exceptions.ValidationError, "__init__", counting)
    run = make_run(_corpus(3))
    head = json.dumps(run["documents"])[:-1]  # three valid documents, then 1,000,000 empty objects
    path = tmp_path / "huge.json"
    text = json.dumps({**run, "documents": "DOCUMENTS"})
    path.write_text(text.replace('"DOCUMENTS"', head + ", {}" * 1_000_000 + "]"), encoding="utf-8")
    with pytest.raises(RunFileError) as info:
        gating.load_run(path)
    assert str(info.value) == (f"run file {str(path)!r} is not a pytest-ocrmetrics run file: at documents/3: 'id' is "
                               f"a required property; write one with pytest --ocr-json=PATH")
    assert 1 <= len(built) <= 3


# --------------------------------------------------------------------------------------------- the package split


def test_every_public_name_is_importable_from_the_package() -> None:
    from pytest_ocrmetrics.gating import baseline, bootstrap, comparison, gates, tolerances
    from pytest_ocrmetrics.runfile import read as runfile

    for name in gating.__all__:
        assert hasattr(gating, name), name
    for module in (baseline, bootstrap, comparison, gates, runfile, tolerances):
        for name in module.__all__:
            assert getattr(module, name) is not None
            if not name.startswith(("MetricSeries", "metric_series", "paired_", "tolerance_for")):
                assert getattr(gating, name) is getattr(module, name), name


def test_no_match_message_stays_one_printable_line_for_hostile_names() -> None:
    hostile = "rec\x1b[31m\ud800\n\u202e"
    old = make_run([make_doc("a\x00.png", {"cer": 0.1}, dataset=hostile, engine="tess\u200d")])
    new = make_run([make_doc("b.png", {"cer": 0.1}, dataset=hostile, engine="tess\u200d")])
    for comparison in (compare_runs(old, make_run(_corpus(2))), compare_runs(old, new)):
        error = comparison.error
        assert error is not None and error.isprintable(), error
        error.encode("utf-8")  # no lone surrogate left


def test_a_tolerance_whose_metric_was_compared_nowhere_fails_and_says_which_side_lacks_it() -> None:
    """``--max-regression crr:0.01`` against a baseline made without crr compared nothing: an error, not a pass.
    The ``*`` default applies to whatever both runs have, so it never matches nothing."""
    old = make_run([make_doc(f"d{i}", {"cer": 0.02}) for i in range(3)])
    new = make_run([make_doc(f"d{i}", {"cer": 0.02, "crr": 0.9}) for i in range(3)])
    comparison = compare_runs(old, new, ["crr:0.01", "cer:0.01", "*:0.5"], resamples=50)
    assert comparison.unmatched_tolerances == (
        "the tolerance crr:0.01 compared nothing: the baseline has no values of it (make the baseline again with the "
        "metric computed)",)
    assert comparison.exit_failed and comparison.compared == 3
    assert any(line.startswith("ERROR: the tolerance crr:0.01") for line in comparison.summary_lines())
    assert comparison.baseline_entry()["error"] == comparison.unmatched_tolerances[0]
    assert compare_runs(new, old, ["crr:0.01"], resamples=50).unmatched_tolerances[0].endswith(
        "this run has no values of it")
    assert "neither run" in compare_runs(old, old, ["field_f1:0.01"], resamples=50).unmatched_tolerances[0]
    both = compare_runs(new, new, ["crr:0.01", "*:0.5"], resamples=50)
    assert both.unmatched_tolerances == () and not both.exit_failed


def _better_with_a_few_worse() -> tuple[dict, dict]:
    """A baseline at CER ~0.10 and a candidate at ~0.03 on 40 documents, 3 of which got worse by 0.05."""
    old = _corpus(40, bump={i: 0.08 for i in range(40)})
    new = _corpus(40, bump={5: 0.13, 17: 0.13, 29: 0.13})
    return make_run(old), make_run(new)


@pytest.mark.parametrize(("policy", "listed", "failed"), [("warn", 3, False), ("fail", 3, True), ("off", 0, False)])
def test_a_better_candidate_with_a_few_worse_documents_fails_only_under_fail(policy: str, listed: int,
                                                                            failed: bool) -> None:
    baseline, current = _better_with_a_few_worse()
    comparison = compare_runs(baseline, current, ["cer:0.005"], significance=0.05, resamples=200,
                              document_regressions=policy)
    (cer,) = [a for a in comparison.aggregates if a.metric == "cer"]
    assert cer.verdict == "improvement"  # the aggregate decides: clearly better
    assert len(comparison.regressed_documents) == listed
    assert comparison.exit_failed is failed
    entry = comparison.baseline_entry()["document_regressions"]
    assert entry["policy"] == policy and entry["count"] == listed and entry["failed"] is failed
    assert [d["id"] for d in entry["documents"]] == ["doc05.png", "doc17.png", "doc29.png"][:listed]
    lines = "\n".join(comparison.summary_lines())
    if listed:
        assert "3 documents got worse than the baseline beyond tolerance" in lines
        assert "'doc05.png', 'doc17.png', 'doc29.png' (tesseract / receipts)" in lines
    else:
        assert "doc05.png" not in lines


def test_a_worse_candidate_fails_whatever_the_document_policy() -> None:
    baseline = make_run(_corpus(40))
    current = make_run(_corpus(40, bump={i: 0.05 for i in range(40)}))
    for policy in ("warn", "fail", "off"):
        comparison = compare_runs(baseline, current, ["cer:0.005"], significance=0.05, resamples=200,
                                  document_regressions=policy)
        assert comparison.aggregate_failed and comparison.exit_failed, policy


def test_an_unknown_document_policy_is_refused_with_a_did_you_mean() -> None:
    with pytest.raises(ValueError, match=r"'warm' is not a document regression policy \(did you mean 'warn'\?\)"):
        compare_runs(make_run(_corpus()), make_run(_corpus()), document_regressions="warm")
