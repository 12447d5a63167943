"""``benchmarks/bench_olmocr.py``'s pure parts (no throwaway venv, no timing), and the facts' speed-ups it measured.

The benchmark's candidates must be the same bytes on every run (so both tools score the same 4 folders), the test
ids it expects from olmOCR-bench must be the ones ``benchmark.py`` runs, its reading of the benchmark's printed
``[FAIL]`` lines and the agreement table must count right. The product's changes for that benchmark keep their
numbers: a page's output normalized once, the alphanumeric count in C, the fact summary's shared bootstrap draws.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from pytest_ocrmetrics.metrics.aggregate import percentile
from pytest_ocrmetrics.metrics.facts.summary import facts_summary, summarize_facts
from pytest_ocrmetrics.metrics.facts.text import alnum_count, normalize_text, normalized_output

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_olmocr  # noqa: E402


@pytest.fixture
def sample(shared_data: Path) -> Path:
    folder = shared_data / "olmocr_bench_sample"
    if not (folder / "dataset.jsonl").is_file():
        pytest.skip(f"olmOCR-bench sample not found at {folder}")
    return folder


def _digest(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_the_four_candidates_are_the_same_bytes_on_every_run(sample: Path, tmp_path: Path) -> None:
    first = bench_olmocr.make_workspace(sample, tmp_path / "a")
    second = bench_olmocr.make_workspace(sample, tmp_path / "b")
    assert first == second == ["lowercase", "olmocr_pipeline", "shuffled_lines", "truncated_half"]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    source = sample / "olmocr_pipeline"
    outputs = sorted(path.relative_to(source).as_posix() for path in source.rglob("*.md"))
    for candidate in first:  # every page of every candidate, named as the benchmark names them
        assert sorted(p.relative_to(tmp_path / "a" / candidate).as_posix()
                      for p in (tmp_path / "a" / candidate).rglob("*.md")) == outputs
    assert (tmp_path / "a" / "olmocr_pipeline" / "earnings_pg1_repeat1.md").read_bytes() == \
        (source / "earnings_pg1_repeat1.md").read_bytes()
    assert (tmp_path / "a" / "pdfs").is_dir() and not (tmp_path / "a" / "pdfs").is_symlink()


def test_the_variants_rewrite_as_documented() -> None:
    text = "Alpha\nBeta\nGamma\nDelta"
    assert bench_olmocr.lowercase(text, "x.md") == text.lower()
    shuffled = bench_olmocr.shuffled_lines(text, "x.md")
    assert sorted(shuffled.split("\n")) == sorted(text.split("\n"))
    assert shuffled == bench_olmocr.shuffled_lines(text, "x.md")  # seeded by the name, not by hash()
    assert bench_olmocr.first_half("abcdef") == "abc" and bench_olmocr.first_half("") == ""


def test_benchmark_test_ids_add_a_baseline_for_each_pdf_without_one(tmp_path: Path) -> None:
    (tmp_path / "pdfs" / "sub").mkdir(parents=True)
    for pdf in ("a.pdf", "b.pdf", "sub/c.pdf"):
        (tmp_path / "pdfs" / pdf).write_bytes(b"%PDF")
    (tmp_path / "tests.jsonl").write_text("\n".join(json.dumps(t) for t in [
        {"pdf": "a.pdf", "page": 1, "id": "a_00", "type": "present", "text": "x"},
        {"pdf": "b.pdf", "page": 1, "id": "b_blank", "type": "baseline", "max_length": 10},
    ]) + "\n\n", encoding="utf-8")
    assert bench_olmocr.benchmark_test_ids(tmp_path) == ["a_00", "b_blank", "a.pdf_baseline", "sub/c.pdf_baseline"]


def test_benchmark_test_ids_of_the_sample_are_the_products_facts(sample: Path) -> None:
    from pytest_ocrmetrics.datasets import load_dataset

    product = sorted(fact.id for document in load_dataset(sample) for fact in document.facts)
    assert sorted(bench_olmocr.benchmark_test_ids(sample)) == product and len(product) == 39


BENCHMARK_OUTPUT = """
Running tests for each candidate:

Evaluating candidate: good

Candidate: good
  [FAIL] Test t 2 on doc page 1 average pass ratio: 0.000 (0/1 repeats passed). Ex: No match found
  [FAIL] Test t on doc page 1 average pass ratio: 0.667 (2/3 repeats passed). Ex: flaky, passes by majority
  Average Score: 90.0% (95% CI: [80.0%, 100.0%]) over 3 tests.

Evaluating candidate: broken

Candidate: broken
  [ERROR] Candidate 'broken' is missing MD repeats for a.pdf (expected files matching a_pg{page}_repeat*.md).
============================================================
Final Summary with 95% Confidence Intervals:
good                 : Average Score: 90.0% ± 10.0% (average of per-JSONL scores)
"""


def test_benchmark_failures_read_the_fail_lines_with_the_majority_rule() -> None:
    failed, errors = bench_olmocr.benchmark_failures(BENCHMARK_OUTPUT, ["t", "t 2", "u"])
    assert failed == {"good": {"t 2"}, "broken": set()}  # "t" passed 2 of 3 repeats: a pass, as in the benchmark
    assert errors == {"broken": ["Candidate 'broken' is missing MD repeats for a.pdf (expected files matching "
                                 "a_pg{page}_repeat*.md)."]}
    with pytest.raises(ValueError, match="names no known test"):
        bench_olmocr.benchmark_failures(BENCHMARK_OUTPUT, ["u"])


def test_product_verdicts_and_the_agreement_table() -> None:
    run = {"facts": [
        {"engine": "replay:good", "id": "t", "passed": True},
        {"engine": "replay:good", "id": "t 2", "passed": False},
        {"engine": "replay:good", "id": "u", "passed": None},
        {"engine": "replay:other", "id": "t", "passed": False},
    ]}
    ours = bench_olmocr.product_verdicts(run, ["good", "other"])
    assert ours == {"good": {"t": True, "t 2": False, "u": None}, "other": {"t": False}}
    assert bench_olmocr.product_verdicts({"facts": [{"engine": "replay", "id": "t", "passed": True}]},
                                         ["only"]) == {"only": {"t": True}}
    rows = bench_olmocr.agreement(["t", "t 2", "u"], {"good": {"t 2"}, "other": set()}, ours, ["good", "other"])
    assert [(r.candidate, r.tests, r.agree) for r in rows] == [("good", 3, 2), ("other", 3, 0)]
    assert rows[0].differences == ("u: benchmark pass, product not checked",)  # never counted as agreeing
    assert rows[1].differences == ("t: benchmark pass, product fail", "t 2: benchmark pass, product no verdict",
                                   "u: benchmark pass, product no verdict")


def test_pair_ratios_pair_the_same_round() -> None:
    assert bench_olmocr.pair_ratios([2.0, 4.0, 3.0], [1.0, 1.0, 3.0]) == (2.0, 1.0, 4.0)


def test_setup_commands_name_the_commit_and_both_venvs(tmp_path: Path) -> None:
    commands = bench_olmocr.setup_commands(Path("/v/bin/python"), Path("/src"), str(tmp_path), Path("/p/bin/python"))
    text = [" ".join(command) for command in commands]
    assert not any(command[:2] == ["git", "clone"] for command in commands)  # a local clone is archived
    assert any("archive f7cfe4c olmocr/bench" in line for line in text)
    assert text[-1].endswith(f"-e {bench_olmocr.ROOT}[facts] playwright")
    assert any("/v/bin/python -m pip install" in line and "playwright" in line for line in text)


def test_alnum_count_is_isalnum_on_every_code_point() -> None:
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert alnum_count(text) == sum(1 for c in text if c.isalnum())
    assert alnum_count("__ \t!") == 0 and alnum_count("") == 0


def test_normalized_output_is_normalize_text() -> None:
    for text in ("**Bold** and *it*<br>“quoted” — done", "", "  a\n\nb  ", "x" * 10_000):
        assert normalized_output(text) == normalize_text(text)


def _reference_summary(verdicts: list[tuple[str, str, bool]], resamples: int, seed: int) -> tuple[float, float]:
    """The interval as it was computed before the draws were shared: one ``choices`` loop per engine."""
    groups: dict[str, list[float]] = {}
    for group, _, passed in verdicts:
        groups.setdefault(group, []).append(1.0 if passed else 0.0)
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        rates = [sum(rng.choices(scores, k=len(scores))) / len(scores) for scores in groups.values()]
        means.append(sum(rates) / len(rates))
    means.sort()
    alpha = (1 - 0.95) / 2  # as computed there: 0.025000000000000022
    return percentile(means, alpha * 100), percentile(means, (1 - alpha) * 100)


@pytest.mark.parametrize("size", [3, 40, 300])  # 300: a group beyond the 256 facts counted with bytes.translate
def test_shared_bootstrap_draws_give_each_engine_its_own_loops_numbers(size: int) -> None:
    rng = random.Random(size)
    layout = [(rng.choice(["a.jsonl", "b.jsonl", "baseline"]), rng.choice(["present", "math"])) for _ in range(size)]
    facts, expected = [], {}
    for engine in ("e1", "e2", "e3"):
        verdicts = [(group, kind, rng.random() < 0.7) for group, kind in layout]
        expected[engine] = _reference_summary(verdicts, 200, 7)
        facts += [{"engine": engine, "dataset": "d", "id": str(i), "group": g, "type": t, "passed": p}
                  for i, (g, t, p) in enumerate(verdicts)]
    facts.append({"engine": "e4", "dataset": "d", "id": "x", "group": "a.jsonl", "type": "present", "passed": True})
    rows = facts_summary(facts, seed=7, resamples=200)
    assert {row["engine"]: tuple(row["interval"]) for row in rows if row["engine"] != "e4"} == expected
    assert rows[-1]["interval"] == [1.0, 1.0]  # another layout: its own draws
    one = summarize_facts([(g, t, p) for g, t, p in [("a", "present", True), ("a", "present", False)]],
                          n_bootstrap=50, seed=3)
    assert one.interval == _reference_summary([("a", "present", True), ("a", "present", False)], 50, 3)
    assert summarize_facts([("a", "present", True)], n_bootstrap=0).interval is None
