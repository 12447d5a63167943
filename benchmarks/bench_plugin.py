"""Plugin overhead and memory: N documents through the replay engine vs a plain parametrized pytest test.

Two suites, the real one first:

- **real**: the receipts and pages of ``../shared/data`` (``sroie_receipts`` and ``ocr_pages_lines``) with Tesseract's
  own outputs (long, high-CER, non-ASCII), cycled to N documents. Tesseract runs once: its outputs are kept in the
  output cache of ``bench_metrics.py`` (``--cache-dir``), so later runs read them back. Skipped, with a note, when the
  shared data or Tesseract is missing.
- **synthetic** (kept for continuity): short random words at about 5 % character noise.

Both runs of a pair score the same texts; the plugin run computes the default metric set (with a CER threshold) and
writes JUnit XML and the JSON run file, the plain run computes one Levenshtein distance with rapidfuzz in a
hand-written parametrized test and writes JUnit XML. For each suite and size, one warm-up run of each, then
``--repeat`` rounds that run plain and plugin back to back (interleaved, so a noisy neighbour slows both), without
xdist and then under ``-n 2`` on both sides, each a fresh ``pytest`` subprocess with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` removed: otherwise pytest re-parses and assertion-rewrites every plugin module on every
run, a start-up cost users do not pay) and with the installed pytest plugins that neither side uses turned off
(``-p no:hypothesispytest`` and the like: their start-up and summary would add the same seconds to both runs and
flatter the ratio). Prints, per suite, size and worker count, the median wall times, the median of the interleaved
pairs' own ratios (steadier on a busy machine) with their spread (lowest-highest pair), the same for the processes'
CPU time (user + system from ``wait4``, xdist's workers included; steadier still when other work shares the cores),
and the peak resident memory of each pytest process (GNU time's ``%M`` where ``/usr/bin/time`` exists: a process
forked from this benchmark would report this one's peak instead; target <= 2x plain).

    python benchmarks/bench_plugin.py [--suites real synthetic] [--documents 2000 20000] [--workers 0 2] [--repeat 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _markdown import docs_requested, write_printed  # noqa: E402  (--write-docs: the table into docs/performance.md)

BENCHMARKS = Path(__file__).resolve().parent
WORDS = ["invoice", "total", "amount", "date", "customer", "number", "street", "city", "payment", "due", "tax", "net", "gross", "item", "quantity", "price", "receipt", "order", "shipping", "reference", "account", "balance"]  # noqa: E501 - a word list

PLAIN_TEST = """
import json
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

ROOT = Path(__file__).parent
TRUTH = json.loads((ROOT / "data" / "ground_truth.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_document(name):
    reference = TRUTH[name]["full_text"]
    hypothesis = (ROOT / "preds" / (name.rsplit(".", 1)[0] + ".txt")).read_text(encoding="utf-8")
    cer = Levenshtein.distance(reference, hypothesis) / max(len(reference), 1)
    assert cer <= 0.5
"""


def _noisy(text: str, rng: random.Random, rate: float = 0.05) -> str:
    out = []
    for ch in text:
        r = rng.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            out.append(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
            continue
        out.append(ch)
        if r < rate:
            out.append(rng.choice("abcdefghijklmnopqrstuvwxyz"))
    return "".join(out)


def synthetic_pairs(documents: int, seed: int = 0) -> list[tuple[str, str]]:
    """``documents`` (reference, hypothesis) pairs of random receipt words, the hypothesis at ~5 % noise."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(documents):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10))) for _ in range(rng.randint(3, 8))]
        text = "\n".join(lines)
        pairs.append((text, _noisy(text, rng)))
    return pairs


def real_pairs(cache_dir: Path) -> list[tuple[str, str]]:
    """(reference, Tesseract output) of every page of the shared receipts and pages (``bench_metrics.real_pairs``:
    Tesseract runs once, its outputs cached in ``cache_dir``); [] after a printed note when the data or Tesseract is
    missing."""
    sys.path.insert(0, str(BENCHMARKS))
    sys.path.insert(0, str(BENCHMARKS.parent))
    try:
        import bench_metrics  # noqa: PLC0415 - the same pages and cache as the metrics benchmark
    except ImportError as exc:
        print(f"real suite: SKIPPED, bench_metrics cannot be imported ({exc})", file=sys.stderr)
        return []
    pairs = bench_metrics.real_pairs(cache_dir)
    return [pair for name in bench_metrics.REAL_DATASETS for pair in pairs.get(name, [])]


def cycled(pairs: Sequence[tuple[str, str]], documents: int) -> list[tuple[str, str]]:
    """``pairs`` repeated in order until there are ``documents``."""
    return list(itertools.islice(itertools.cycle(pairs), documents))


def make_suite(root: Path, pairs: Sequence[tuple[str, str]]) -> None:
    """A replay suite in ``root``: ``data/`` (ground truth, stub images), ``preds/`` (the outputs), the plain test."""
    data, preds = root / "data", root / "preds"
    (data / "images").mkdir(parents=True)
    preds.mkdir()
    truth = {}
    for i, (reference, hypothesis) in enumerate(pairs):
        name = f"doc_{i:05d}.png"
        truth[name] = {"full_text": reference}
        (data / "images" / name).write_bytes(b"\x89PNG\r\n\x1a\n")
        (preds / f"doc_{i:05d}.txt").write_text(hypothesis, encoding="utf-8")
    (data / "ground_truth.json").write_text(json.dumps(truth, ensure_ascii=False), encoding="utf-8")
    (root / "test_plain.py").write_text(PLAIN_TEST, encoding="utf-8")


def _unrelated_plugins() -> list[str]:
    """``-p no:NAME`` for every installed pytest plugin that neither side uses (hypothesis's, anyio's, ...): their
    start-up and summary costs (hypothesis's alone is a fifth of a second) would be added to both runs and flatter
    the ratio. The plugin under test and xdist stay."""
    from importlib.metadata import entry_points

    used = {"ocrmetrics", "xdist", "xdist.looponfail"}
    names = sorted({entry.name for entry in entry_points(group="pytest11")} - used)
    return [arg for name in names for arg in ("-p", f"no:{name}")]


# GNU time's peak resident memory of the process it starts: a child forked from this benchmark inherits this
# process's high-water mark in ru_maxrss (Linux keeps it across exec), which for the larger suites is above pytest's
_TIME = "/usr/bin/time"


def _run(args: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, peak resident memory (MB) and CPU seconds (user + system, xdist's workers included: ``wait4``
    counts the children a process waited for) of one pytest process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_unrelated_plugins(), *args]
    measured = os.access(_TIME, os.X_OK)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        if measured:  # started from GNU time (a small process): the pytest process's own peak memory
            command = [_TIME, "-f", "%M", "-o", rss.name, *command]
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        output = proc.stdout.read() if proc.stdout is not None else b""
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"pytest {' '.join(args)} failed with exit code {proc.returncode}:\n"
                             f"{output.decode(errors='replace')[-3000:]}")
        # kilobytes; under -n 2 the controller's, not the workers'
        peak_kb = int(rss.read().split()[-1]) if measured else usage.ru_maxrss
    return elapsed, peak_kb / 1024, usage.ru_utime + usage.ru_stime


# --tb=line on both sides: pytest 9's long failure summary looks for each failed test's teardown report among every
# report of the run (TerminalReporter._handle_teardown_sections), quadratic in the tests: with 20 % of 20,000
# documents failing it takes minutes in both processes and the ratio would measure pytest's reporter, not the plugin.
# The failures (and the plugin's failure messages) are still made; only their printing is one line each.
PLAIN_ARGS = ["test_plain.py", "-p", "no:ocrmetrics", "--junitxml=plain.xml", "--tb=line"]
PLUGIN_ARGS = ["data", "--ocr-dataset=data", "--ocr-engine=replay:preds", "--ocr-max=cer:0.5", "--junitxml=ocr.xml",
               "--ocr-json=run.json", "--tb=line"]


def _xdist(workers: int) -> list[str]:
    return ["-n", str(workers)] if workers else []


def measure(pairs: Sequence[tuple[str, str]], workers: Sequence[int], repeat: int) -> dict[int, dict[str, float]]:
    """Per worker count: median wall time and peak memory of the plain and the plugin run on ``pairs``, the median
    and spread of the interleaved pairs' ratios, and the output sizes."""
    documents = len(pairs)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_suite(root, pairs)
        for n in workers:  # warm-up: bytecode caches, page cache
            _run(PLAIN_ARGS + _xdist(n), root), _run(PLUGIN_ARGS + _xdist(n), root)
        runs: dict[int, tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]]] = {
            n: ([], []) for n in workers}
        for _ in range(repeat):
            for n in workers:  # plain then plugin, each worker count in turn, every round
                runs[n][0].append(_run(PLAIN_ARGS + _xdist(n), root))
                runs[n][1].append(_run(PLUGIN_ARGS + _xdist(n), root))
        run = json.loads((root / "run.json").read_text(encoding="utf-8"))
        assert len(run["documents"]) == documents, "the plugin run did not score every document"
        result = {}
        for n, (plain, plugin) in runs.items():
            ratios = [b / a for (a, _, _), (b, _, _) in zip(plain, plugin)]
            cpu_ratios = [b / a for (_, _, a), (_, _, b) in zip(plain, plugin)]
            result[n] = {
                "plain_s": statistics.median(t for t, _, _ in plain), "plugin_s": statistics.median(t for t, _, _ in plugin),
                "pair_ratio": statistics.median(ratios), "low": min(ratios), "high": max(ratios),
                "cpu_ratio": statistics.median(cpu_ratios), "cpu_low": min(cpu_ratios), "cpu_high": max(cpu_ratios),
                "plain_mb": statistics.median(m for _, m, _ in plain),
                "plugin_mb": statistics.median(m for _, m, _ in plugin),
                "run_file_mb": (root / "run.json").stat().st_size / 2**20,
                "junit_mb": (root / "ocr.xml").stat().st_size / 2**20,
            }
        return result


def describe(pairs: Sequence[tuple[str, str]]) -> str:
    """Mean reference length, non-ASCII share and the character error rate of a suite's distinct pairs."""
    from rapidfuzz.distance import Levenshtein

    distinct = list(dict.fromkeys(pairs))
    chars = sum(len(r) for r, _ in distinct)
    non_ascii = sum(not r.isascii() for r, _ in distinct)
    cer = sum(Levenshtein.distance(r, h) for r, h in distinct) / max(chars, 1)
    return (f"{len(distinct)} distinct pages, {chars / max(len(distinct), 1):,.0f} reference characters on average, "
            f"{non_ascii} non-ASCII, CER {cer:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", nargs="+", choices=("real", "synthetic"), default=["real", "synthetic"])
    parser.add_argument("--documents", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2], help="0: no xdist; 2: -n 2 on both sides")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "pytest-ocrmetrics-bench-metrics",
                        help="where Tesseract's outputs are cached (bench_metrics.py's default: %(default)s)")
    writing = docs_requested()
    options = parser.parse_args()
    suites: dict[str, list[tuple[str, str]]] = {}
    for suite in ("real", "synthetic"):  # the real one first
        if suite not in options.suites:
            continue
        base = real_pairs(options.cache_dir) if suite == "real" else synthetic_pairs(max(options.documents))
        if base:
            suites[suite] = base
            print(f"{suite} suite: {describe(base)}", file=sys.stderr, flush=True)
    rows = []
    for suite, base in suites.items():
        for documents in options.documents:
            result = measure(cycled(base, documents), options.workers, options.repeat)
            for workers, r in result.items():
                rows.append((suite, documents, workers, r))
            print(f"measured {suite} at {documents} documents", file=sys.stderr, flush=True)
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"{options.repeat} interleaved rounds (wall time of a whole pytest process; plugin: replay, default metrics, "
          "CER threshold, JUnit + run file; plain: one rapidfuzz Levenshtein distance, JUnit)")
    print()
    print("| suite | documents | xdist | plain (s) | plugin (s) | median of the pairs' ratios | spread (pairs) | "
          "CPU time: median of the pairs' ratios (spread) | plugin ms / document | target |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for suite, documents, workers, r in rows:
        print(f"| {suite} | {documents:,} | {f'-n {workers}' if workers else 'none'} | {r['plain_s']:.2f} | "
              f"{r['plugin_s']:.2f} | **{r['pair_ratio']:.2f}x** | {r['low']:.2f}-{r['high']:.2f}x | "
              f"{r['cpu_ratio']:.2f}x ({r['cpu_low']:.2f}-{r['cpu_high']:.2f}x) | "
              f"{1000 * r['plugin_s'] / documents:.2f} | <= 1.5x |")
    print()
    print("| suite | documents | xdist | peak memory plain (MB) | plugin (MB) | plugin / plain | run file (MB) | "
          "JUnit XML (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    for suite, documents, workers, r in rows:
        print(f"| {suite} | {documents:,} | {f'-n {workers}' if workers else 'none'} | {r['plain_mb']:.0f} | "
              f"{r['plugin_mb']:.0f} | **{r['plugin_mb'] / r['plain_mb']:.2f}x** | {r['run_file_mb']:.1f} | "
              f"{r['junit_mb']:.1f} |")

    if writing:
        write_printed("plugin", markdown=True)


if __name__ == "__main__":
    main()
