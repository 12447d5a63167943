"""Time the product's olmOCR-bench facts against olmOCR-bench's own scorer on the same folder, cold and warm.

Run: ``python benchmarks/bench_olmocr.py --setup`` once (it makes two throwaway venvs and the benchmark's source, see
:func:`setup_commands`; ``--python``, ``--olmocr`` and ``--product-python`` name other places), then
``python benchmarks/bench_olmocr.py`` (``--rounds N``, ``--data DIR`` for another sample folder, ``--write-docs`` for
docs/performance.md). The benchmark runs in its venv as a subprocess (never a dependency of the product); without
it only the product is timed, with a note. The product runs in its own venv (this checkout with its ``facts`` extra
and Playwright: no development tool's pytest plugin), else in this interpreter.

The workload: ``../shared/data/olmocr_bench_sample`` (olmOCR-bench's sample data at commit f7cfe4c: 6 PDFs, 34 tests
plus the baseline tests the benchmark adds) copied into a temporary folder with **4 candidates**: the sample's own
``olmocr_pipeline`` outputs and three deterministic rewrites of them (:data:`VARIANTS`: lower-cased, lines shuffled
with a seed taken from the file name, the first half only), so both tools score the same 4 folders, 156 (test,
candidate) verdicts.

Both sides are whole processes, as a user runs them:

* the benchmark: ``python -m olmocr.bench.benchmark --dir FOLDER`` (its defaults: every candidate, 1,000 bootstrap
  samples), through ``_olmocr_bench_chromium.py``, whose only change is the Chromium binary (``/usr/bin/chromium``:
  Playwright's own browser cannot be downloaded here). Its equation cache is ``~/.cache/olmocr/bench/equations``;
  ``HOME`` points into the temporary folder, so the user's own cache is never read or cleared;
* the product: ``pytest FOLDER --ocr-dataset=FOLDER --ocr-engine=replay:FOLDER/<candidate>`` x 4
  ``--ocr-cache-dir=CACHE --ocr-json=run.json`` (one session scores the 4 candidates side by side; the math facts'
  equation layouts and MathML are kept in ``CACHE/math-layout`` and ``CACHE/math-mathml``).

Each round runs *cold* (each tool's equation cache removed first: both start Chromium and lay their equations out)
then *warm* (the caches as the cold run left them: the benchmark's normal state from its second run on), the two
tools interleaved (which goes first alternates by round) so a noisy neighbour slows both alike. Printed: the median
wall time of each side, the median of the pairs' ratios (benchmark / product: above 1 the product is faster) with
their spread, whether the warm runs started a browser, and the agreement of the two tools' pass/fail per test and
candidate (the product's run file ``facts`` against the benchmark's ``[FAIL]`` lines), every difference named.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _markdown import docs_requested, write_printed  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "olmocr_bench_sample"
WRAPPER = Path(__file__).resolve().with_name("_olmocr_bench_chromium.py")
OLMOCR_COMMIT = "f7cfe4c"
DEFAULT_VENV_PYTHON = Path("/tmp/olmvenv/bin/python")
DEFAULT_OLMOCR = Path("/tmp/olmocr_min")
DEFAULT_PRODUCT_PYTHON = Path("/tmp/olmprod/bin/python")
#: what the benchmark's code imports (olmocr/bench, its katex renderer, tables, report): the bench extra's part used
BENCH_REQUIREMENTS = ("fuzzysearch", "rapidfuzz", "playwright", "beautifulsoup4", "lxml", "tqdm", "pypdf", "numpy",
                      "Pillow")
#: only what benchmark.py imports: olmocr/__init__.py would pull in the whole pipeline, so it is left empty
OLMOCR_PATHS = ("olmocr/bench", "olmocr/repeatdetect.py", "olmocr/data/renderpdf.py")
SOURCE_CANDIDATE = "olmocr_pipeline"


def lowercase(text: str, name: str) -> str:
    """The output lower-cased (case-sensitive ``present`` facts and table cells fail, equations may change)."""
    return text.lower()


def shuffled_lines(text: str, name: str) -> str:
    """The output's lines in a shuffled order, seeded by the file's name (CRC-32: the same order on every run and
    Python, unlike ``hash``): ``order`` facts and tables break, ``present`` facts mostly hold."""
    lines = text.split("\n")
    random.Random(zlib.crc32(name.encode("utf-8"))).shuffle(lines)
    return "\n".join(lines)


def first_half(text: str) -> str:
    """The first half of the output's characters (a truncated page)."""
    return text[: len(text) // 2]


#: the candidates: folder name -> rewrite of each output file (text, file name relative to the candidate)
VARIANTS: dict[str, Callable[[str, str], str]] = {
    SOURCE_CANDIDATE: lambda text, name: text,
    "lowercase": lowercase,
    "shuffled_lines": shuffled_lines,
    "truncated_half": lambda text, name: first_half(text),
}


def make_workspace(data: Path, bench: Path) -> list[str]:
    """Copy the sample's fact files and PDFs into ``bench`` and write the 4 candidate folders there.

    The PDFs are copied, not linked: the product reads only files inside its dataset folder.

    Args:
        data: the olmOCR-bench sample folder (``*.jsonl``, ``pdfs/``, ``olmocr_pipeline/``).
        bench: the folder to create; it must not exist.

    Returns:
        The candidate folder names, sorted (as the benchmark orders them).
    """
    bench.mkdir(parents=True)
    for jsonl in sorted(data.glob("*.jsonl")):
        shutil.copyfile(jsonl, bench / jsonl.name)
    shutil.copytree(data / "pdfs", bench / "pdfs")
    source = data / SOURCE_CANDIDATE
    for candidate, rewrite in VARIANTS.items():
        for path in sorted(source.rglob("*.md")):
            name = path.relative_to(source).as_posix()
            target = bench / candidate / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(rewrite(path.read_text(encoding="utf-8"), name), encoding="utf-8")
    return sorted(VARIANTS)


def benchmark_test_ids(bench: Path) -> list[str]:
    """The ids of the tests ``benchmark.py`` runs on ``bench``: every ``*.jsonl`` line's ``id``, plus
    ``<pdf path>_baseline`` for each PDF under ``pdfs/`` that no ``baseline`` test names (as its ``main`` adds them).

    Args:
        bench: a folder in the benchmark's layout.

    Returns:
        The ids, in file order, the added baselines last.
    """
    ids, with_baseline = [], set()
    for jsonl in sorted(bench.glob("*.jsonl")):
        for line in jsonl.read_text(encoding="utf-8").splitlines():
            if line.strip():
                test = json.loads(line)
                ids.append(test["id"])
                if test.get("type") == "baseline":
                    with_baseline.add(test["pdf"])
    pdfs = sorted(path.relative_to(bench / "pdfs").as_posix() for path in (bench / "pdfs").rglob("*.pdf"))
    return ids + [f"{pdf}_baseline" for pdf in pdfs if pdf not in with_baseline]


_CANDIDATE = re.compile(r"^Candidate: (?P<name>.+?)\s*$")
_FAIL = re.compile(r"^\s*\[FAIL\] Test (?P<rest>.+) average pass ratio: (?P<ratio>[0-9.]+) ")
_ERROR = re.compile(r"^\s*\[ERROR\] (?P<message>.+)$")


def benchmark_failures(stdout: str, test_ids: Iterable[str]) -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """The tests each candidate failed, read from ``benchmark.py``'s printed report.

    The benchmark prints ``Candidate: NAME`` and then one ``[FAIL] Test ID on PAGE ... average pass ratio: R`` line
    for every test not passed by all repeats; a test fails when R <= 0.5 (its majority rule), so a test with no line
    passed. A test id is recognised among ``test_ids`` (the longest that starts the line), so ids with spaces work.

    Args:
        stdout: what the benchmark printed.
        test_ids: every test id (:func:`benchmark_test_ids`).

    Returns:
        ``({candidate: failed ids}, {candidate: [error messages]})``; a candidate with errors (a missing file) has
        all its tests failed by the benchmark.
    """
    ids = sorted(test_ids, key=len, reverse=True)
    failures: dict[str, set[str]] = {}
    errors: dict[str, list[str]] = {}
    candidate = None
    for line in stdout.splitlines():
        if match := _CANDIDATE.match(line):
            candidate = match["name"]
            failures.setdefault(candidate, set())
        elif candidate is None:
            continue
        elif match := _FAIL.match(line):
            test_id = next((i for i in ids if match["rest"].startswith(f"{i} on ")), None)
            if test_id is None:
                raise ValueError(f"a [FAIL] line names no known test: {line!r}")
            if float(match["ratio"]) <= 0.5:
                failures[candidate].add(test_id)
        elif match := _ERROR.match(line):
            errors.setdefault(candidate, []).append(match["message"])
    return failures, errors


def product_verdicts(run: Mapping, candidates: Iterable[str]) -> dict[str, dict[str, bool | None]]:
    """Each candidate's fact verdicts from the product's run file (``facts``: ``passed`` True, False or None for a
    fact that could not be checked). The engine ``replay:<candidate>`` is the candidate's (``replay`` when it is the
    only one).

    Args:
        run: the run file, decoded.
        candidates: the candidate folder names.

    Returns:
        ``{candidate: {fact id: passed}}``.
    """
    names = list(candidates)
    verdicts: dict[str, dict[str, bool | None]] = {name: {} for name in names}
    for fact in run.get("facts", []):
        engine = fact["engine"]
        name = engine.split(":", 1)[1] if engine.startswith("replay:") else (names[0] if len(names) == 1 else engine)
        verdicts.setdefault(name, {})[fact["id"]] = fact["passed"]
    return verdicts


@dataclass(frozen=True)
class Agreement:
    """How the two tools' verdicts compare for one candidate."""

    candidate: str
    tests: int  # tests the benchmark runs
    agree: int  # same pass/fail on both sides
    differences: tuple[str, ...]  # "id: benchmark pass, product fail" ...


def agreement(test_ids: list[str], failed: Mapping[str, set[str]], ours: Mapping[str, Mapping[str, bool | None]],
              candidates: Iterable[str]) -> list[Agreement]:
    """Compare the benchmark's verdict (failed when listed in ``failed``) with the product's, test by test.

    A test the product did not report, or reported as not checked (``None``), is a difference, never an agreement.

    Args:
        test_ids: every test the benchmark runs.
        failed: the benchmark's failed ids per candidate (:func:`benchmark_failures`).
        ours: the product's verdicts per candidate (:func:`product_verdicts`).
        candidates: the candidates to compare.

    Returns:
        One :class:`Agreement` per candidate, in the order given.
    """
    rows = []
    for candidate in candidates:
        bench_failed, mine = failed.get(candidate, set()), ours.get(candidate, {})
        agree, differences = 0, []
        for test_id in test_ids:
            theirs = test_id not in bench_failed
            if test_id in mine and mine[test_id] is theirs:
                agree += 1
                continue
            said = ("no verdict" if test_id not in mine else "not checked" if mine[test_id] is None
                    else "pass" if mine[test_id] else "fail")
            differences.append(f"{test_id}: benchmark {'pass' if theirs else 'fail'}, product {said}")
        rows.append(Agreement(candidate, len(test_ids), agree, tuple(differences)))
    return rows


def pair_ratios(benchmark: list[float], product: list[float]) -> tuple[float, float, float]:
    """The median of the pairs' ratios benchmark / product and their spread (min, max); pairs are the same round.

    Args:
        benchmark: the benchmark's times, one per round.
        product: the product's times, same rounds.

    Returns:
        ``(median, min, max)`` of ``benchmark[i] / product[i]``.
    """
    ratios = [b / p for b, p in zip(benchmark, product)]
    return statistics.median(ratios), min(ratios), max(ratios)


def setup_commands(python: Path, olmocr: Path, repo: str, product_python: Path) -> list[list[str]]:
    """The commands that make the two throwaway venvs and the benchmark's source (``--setup`` runs them, printing
    each): the benchmark's venv with what its scorer imports, and the product's with this checkout and its ``facts``
    extra and Playwright only (a user's install: none of the development tools' pytest plugins).

    Args:
        python: the benchmark venv's interpreter to create (``VENV/bin/python``).
        olmocr: the folder to receive ``olmocr/bench`` and what it imports, at commit f7cfe4c.
        repo: a clone of allenai/olmocr (a bare one works) or its URL.
        product_python: the product venv's interpreter to create.

    Returns:
        The commands, in order.
    """
    clone = olmocr.with_name(olmocr.name + "_git")
    fetch = [] if Path(repo).is_dir() else [["git", "clone", "--quiet", repo, str(clone)]]
    git_dir = repo if Path(repo).is_dir() else str(clone)
    return [*fetch,
            ["mkdir", "-p", str(olmocr)],
            ["sh", "-c", f"git -C {git_dir} archive {OLMOCR_COMMIT} {' '.join(OLMOCR_PATHS)} | tar -x -C {olmocr}"],
            ["sh", "-c", f": > {olmocr}/olmocr/__init__.py"],
            [sys.executable, "-m", "venv", str(python.parent.parent)],
            [str(python), "-m", "pip", "install", "--quiet", *BENCH_REQUIREMENTS],
            [sys.executable, "-m", "venv", str(product_python.parent.parent)],
            [str(product_python), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[facts]", "playwright"]]


@dataclass
class Sides:
    """Where each tool runs and keeps its caches, inside one temporary folder."""

    work: Path
    candidates: list[str]
    python: Path | None
    olmocr: Path | None
    product_python: str

    @property
    def bench(self) -> Path:
        return self.work / "bench"

    def product_command(self) -> list[str]:
        engines = [f"--ocr-engine=replay:bench/{name}" for name in self.candidates]
        return [self.product_python, "-m", "pytest", "bench", "--ocr-dataset=bench", *engines, "--ocr-cache-dir=ocr-cache",
                "--ocr-json=run.json"]

    def benchmark_command(self) -> list[str]:
        return [str(self.python), str(WRAPPER), "--dir", "bench"]

    def clear_caches(self) -> None:
        shutil.rmtree(self.work / "ocr-cache", ignore_errors=True)
        shutil.rmtree(self.work / "home", ignore_errors=True)
        (self.work / "home").mkdir()

    def layouts(self) -> int:
        """Equation layouts the product has stored (an equation laid out, hence a browser, adds one)."""
        return sum(1 for _ in (self.work / "ocr-cache" / "math-layout").glob("*/*.json"))

    def run(self, side: str) -> tuple[float, str]:
        """Run one side as a whole process; its wall time and stdout (exit status 1 is failing tests: expected)."""
        # both sides may write their bytecode (__pycache__, git-ignored), as an installed package has it: with
        # PYTHONDONTWRITEBYTECODE set, every run would compile each side's own source again
        base = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        if side == "product":
            command = self.product_command()
            env = {**base, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        else:
            command = self.benchmark_command()
            env = {**base, "HOME": str(self.work / "home"), "PYTHONPATH": str(self.olmocr)}
        start = time.perf_counter()
        done = subprocess.run(command, cwd=self.work, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        if done.returncode not in (0, 1):
            sys.exit(f"the {side} failed (exit {done.returncode}): {' '.join(command)}\n"
                     f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        return wall, done.stdout


def _round(sides: Sides, number: int, times: dict[tuple[str, str], list[float]], notes: dict[str, object]) -> None:
    """One cold and one warm run of each side, interleaved; which side goes first alternates by round."""
    order = ["product", "benchmark"] if number % 2 == 0 else ["benchmark", "product"]
    if sides.python is None:
        order = ["product"]
    sides.clear_caches()
    for phase in ("cold", "warm"):
        layouts_before = sides.layouts()
        for side in order:
            wall, stdout = sides.run(side)
            times.setdefault((phase, side), []).append(wall)
            if side == "benchmark":
                # the benchmark's renderer prints this when it closes a browser it started
                notes[f"{phase} benchmark browsers"] = stdout.count("Cleaning up <Playwright")
                notes.setdefault("benchmark stdout", stdout)
            else:
                notes[f"{phase} product layouts"] = sides.layouts() - layouts_before
                plugins = re.search(r"^plugins: (.*)$", stdout, re.M)
                notes["product plugins"] = plugins[1] if plugins else "none"
                notes.setdefault("run", json.loads((sides.work / "run.json").read_text(encoding="utf-8")))


def _print_times(times: dict[tuple[str, str], list[float]], rounds: int, notes: dict[str, object]) -> None:
    print("| caches | olmOCR-bench (s) | product (s) | benchmark / product | spread (pairs) | browser started |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for phase in ("cold", "warm"):
        product = times[(phase, "product")]
        started = ("product: " + ("no" if notes.get(f"{phase} product layouts") == 0 else "yes")
                   + (f", benchmark: {'no' if notes.get(f'{phase} benchmark browsers') == 0 else 'yes'}"
                      if (phase, "benchmark") in times else ""))
        if (phase, "benchmark") in times:
            bench = times[(phase, "benchmark")]
            median, low, high = pair_ratios(bench, product)
            print(f"| {phase} | {statistics.median(bench):.2f} | {statistics.median(product):.2f} | **{median:.2f}x** "
                  f"| {low:.2f}-{high:.2f}x | {started} |")
        else:
            print(f"| {phase} | (not run) | {statistics.median(product):.2f} | | | {started} |")
    print(f"\nMedians of {rounds} rounds; a pair is one round's two runs of the same phase. Warm: the second run, with "
          "each tool's equation cache as its cold run left it (the benchmark's normal state from its second run on).")


def _print_agreement(sides: Sides, notes: dict[str, object]) -> None:
    test_ids = benchmark_test_ids(sides.bench)
    run = notes["run"]
    assert isinstance(run, dict)
    ours = product_verdicts(run, sides.candidates)
    scores = {row["engine"].split(":", 1)[-1]: row["headline"] for row in run.get("facts_summary", [])}
    if "benchmark stdout" not in notes:
        print("\nAgreement not checked: the benchmark was not run (see --setup).")
        return
    stdout = str(notes["benchmark stdout"])
    failed, errors = benchmark_failures(stdout, test_ids)
    theirs = {m[1]: float(m[2]) / 100 for m in re.finditer(r"^(\S+)\s*: Average Score: ([0-9.]+)%", stdout, re.M)}
    rows = agreement(test_ids, failed, ours, sides.candidates)
    print("\n| candidate | tests | same pass/fail | olmOCR-bench score | product's score |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(f"| {row.candidate} | {row.tests} | {row.agree}/{row.tests} | {theirs.get(row.candidate, float('nan')):.1%} "
              f"| {scores.get(row.candidate, float('nan')):.1%} |")
    differences = [f"{row.candidate}: {d}" for row in rows for d in row.differences]
    differences += [f"{name}: benchmark error: {message}" for name, messages in errors.items() for message in messages]
    total = sum(row.tests for row in rows)
    print(f"\nVerdicts compared: {total}; the same on both sides: {sum(row.agree for row in rows)}."
          + ("" if differences else " No difference."))
    for line in differences:
        print(f"- {line}")


def main() -> None:
    writing = docs_requested()  # --write-docs: the tables into docs/performance.md
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the olmOCR-bench sample folder")
    parser.add_argument("--python", type=Path, default=DEFAULT_VENV_PYTHON,
                        help="the benchmark's throwaway venv's interpreter (default %(default)s)")
    parser.add_argument("--olmocr", type=Path, default=DEFAULT_OLMOCR,
                        help=f"a folder holding olmocr/bench at commit {OLMOCR_COMMIT} (default %(default)s)")
    parser.add_argument("--product-python", type=Path, default=None,
                        help=f"the product's interpreter (default {DEFAULT_PRODUCT_PYTHON} when it exists, made by "
                             "--setup with only the product's facts extra; else this interpreter)")
    parser.add_argument("--rounds", type=int, default=5, help="cold + warm rounds per side (default %(default)s)")
    parser.add_argument("--setup", action="store_true", help="create --python's venv and --olmocr, then exit")
    parser.add_argument("--olmocr-repo", default="https://github.com/allenai/olmocr",
                        help="for --setup: a clone of allenai/olmocr (bare works) or its URL")
    args = parser.parse_args()
    if args.setup:
        for command in setup_commands(args.python, args.olmocr, args.olmocr_repo,
                                      args.product_python or DEFAULT_PRODUCT_PYTHON):
            print("+", " ".join(command), flush=True)
            subprocess.run(command, check=True)
        return
    if not (args.data / "dataset.jsonl").is_file() or not (args.data / SOURCE_CANDIDATE).is_dir():
        sys.exit(f"no olmOCR-bench sample at {args.data} (dataset.jsonl, {SOURCE_CANDIDATE}/); pass --data DIR")
    product_python = args.product_python or (DEFAULT_PRODUCT_PYTHON if DEFAULT_PRODUCT_PYTHON.is_file()
                                             else Path(sys.executable))
    has_benchmark = args.python.is_file() and (args.olmocr / "olmocr" / "bench" / "benchmark.py").is_file()
    if not has_benchmark:
        print(f"Note: no benchmark venv at {args.python} or no olmocr/bench under {args.olmocr}: only the product is "
              "timed. Create them with `python benchmarks/bench_olmocr.py --setup` (or --python/--olmocr).\n")
    with tempfile.TemporaryDirectory(prefix="bench-olmocr-") as temporary:
        work = Path(temporary)
        (work / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # rootdir: .pytest_cache stays out of bench/
        candidates = make_workspace(args.data, work / "bench")
        sides = Sides(work, candidates, args.python if has_benchmark else None, args.olmocr if has_benchmark else None,
                      str(product_python))
        times: dict[tuple[str, str], list[float]] = {}
        notes: dict[str, object] = {}
        load_before = os.getloadavg()[0]
        for number in range(args.rounds):
            _round(sides, number, times, notes)
        tests = len(benchmark_test_ids(sides.bench))
        print(f"olmOCR-bench sample (commit {OLMOCR_COMMIT}): {tests} tests x {len(candidates)} candidates "
              f"({', '.join(candidates)}); whole processes, the two tools interleaved, {args.rounds} rounds. "
              f"The product's pytest plugins: {notes.get('product plugins')}. Load average (1 min) before and after: "
              f"{load_before:.1f} and {os.getloadavg()[0]:.1f}, on {os.cpu_count()} CPUs.\n")
        _print_times(times, args.rounds, notes)
        _print_agreement(sides, notes)
    if writing:
        write_printed("olmocr", markdown=True)


if __name__ == "__main__":
    main()
