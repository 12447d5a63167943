"""``ocrmetrics merge`` of the shards of a run against the unsharded run's report writing, and ``ocrmetrics compare``.

The run is the plugin's run file of the **real-output suite** of ``bench_plugin.py`` (the shared receipts and pages
with Tesseract's outputs, cycled to ``--documents``): made once with the plugin (replay engine, default metrics) and
kept (``--run`` reuses a run file). Its documents are split into ``--shards`` shard files exactly as
``--ocr-shard=K/N`` splits them (``sharding.shard_index``), each a run file with its ``shard`` entry, written as the
plugin writes its run file (one document per line, then the merge index with the digest of the lines: the merge
copies the lines and reads the index instead of decoding them, see ``runfile/merge_index.py``); and a second set
without the index, as older versions wrote them (each line checked as text, see ``runfile/verbatim.py``).

Each round times, interleaved (so a noisy neighbour slows all alike), in this process, in CPU time of the process
(``time.process_time``: the work runs in one thread, and CPU time is much steadier than wall time on a shared
machine):

- **report writing**: what the plugin does at the end of the unsharded session to write its run file (the
  documents already added to a ``RunResults``, untimed): ``to_run`` (summary with bootstrap intervals, facts),
  ``sanitize_run`` and the streamed JSON write;
- **shard writing**: the same, for a run that is one shard (``--ocr-shard=1/1``): what the merge index adds to a
  shard's session end;
- **merge**: ``ocrmetrics merge shard-*.json -o merged.json`` (the CLI in-process: read, check, merge, recompute the
  summary, write), by default (the structure check), of the shard files without their index, and with
  ``--validate`` (the full JSON schema: the behaviour before issue 21);
- **compare**: ``ocrmetrics compare run.json run.json``, by default and with ``--validate``.

Prints the medians, the ratios to the report writing (target: merge <= 1.5x) with the spread of the rounds' own
ratios. ``--validate-rounds`` bounds the slow ``--validate`` rounds (0 leaves them out).

    python benchmarks/bench_merge.py [--documents 20000] [--shards 8] [--repeat 3] [--validate-rounds 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import Any, Callable

from _markdown import docs_requested, write_printed  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent))
sys.path.insert(0, str(BENCHMARKS))

from pytest_ocrmetrics import __version__  # noqa: E402
from pytest_ocrmetrics.cli import main as cli  # noqa: E402
from pytest_ocrmetrics.core.safe_text import sanitize_run, write_lines_atomic  # noqa: E402
from pytest_ocrmetrics.reporting.files import run_lines  # noqa: E402
from pytest_ocrmetrics.runfile.results import RunResults  # noqa: E402
from pytest_ocrmetrics.runfile.sharding import shard_index  # noqa: E402


def make_run(root: Path, documents: int, cache_dir: Path) -> Path:
    """The plugin's run file of the real-output suite at ``documents`` (made once in ``root``)."""
    import bench_plugin

    path = root / "run.json"
    if path.exists():
        return path
    pairs = bench_plugin.real_pairs(cache_dir)
    if not pairs:
        raise SystemExit("no real-output suite here (see bench_plugin.py); pass --run RUN.json")
    bench_plugin.make_suite(root, bench_plugin.cycled(pairs, documents))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *bench_plugin.PLUGIN_ARGS],
                   cwd=root, env=env, stdout=subprocess.DEVNULL, check=False)
    return path


def split(run: dict[str, Any], count: int, folder: Path, *, index: bool = True) -> list[str]:
    """``run``'s documents as ``count`` shard files (as ``--ocr-shard=K/count`` splits them), each written as the
    plugin writes its run file (``run_lines``: one document per line, the layout the merge copies documents from,
    then the merge index); ``index=False``: without the index, as before it (``folder/old-shard-K.json``)."""
    paths = []
    for k in range(1, count + 1):
        shard = {**run, "documents": [d for d in run["documents"] if shard_index(d["dataset"], d["id"], count) == k],
                 "shard": {"index": k, "count": count}}
        path = folder / f"{'' if index else 'old-'}shard-{k}.json"
        write_lines_atomic(path, run_lines(shard))
        if not index:
            text = path.read_text(encoding="utf-8")
            path.write_text(text[:text.rindex(',\n"merge_index": {')] + "}\n", encoding="utf-8")
        paths.append(str(path))
    return paths


def report_writer(run: dict[str, Any], out: Path, *, shard: bool = False) -> Callable[[], None]:
    """The plugin's session-end run-file writing for ``run``'s documents (added to a ``RunResults`` beforehand);
    ``shard``: of a run that is shard 1 of 1 (its file ends with the merge index)."""
    results = RunResults(normalization=run["normalization"], seed=run.get("bootstrap", {}).get("seed", 0))
    for doc in run["documents"]:
        record = {k: v for k, v in doc.items() if k != "tests"}
        record["nodeid"] = (doc.get("tests") or [doc.get("nodeid") or doc["id"]])[0]
        results.add(record, doc["outcome"], doc.get("message"))
    resamples = run.get("bootstrap", {}).get("resamples", 1000)

    def write() -> None:
        written = results.to_run(plugin_version=__version__, pytest_version="bench", resamples=resamples,
                                 shard={"index": 1, "count": 1} if shard else None)
        written["bootstrap"] = {"seed": results.seed, "resamples": resamples}
        write_lines_atomic(out, run_lines(sanitize_run(written)))

    return write


def command(*args: str) -> Callable[[], None]:
    def call() -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            code = cli(list(args))
        if code not in (0, 1):
            raise SystemExit(f"ocrmetrics {' '.join(args)} exited {code}: {err.getvalue()}")
    return call


def timed(function: Callable[[], None]) -> float:
    """CPU seconds of this process (all the work is in this thread: a machine shared with other work disturbs CPU time
    much less than wall time)."""
    start = time.process_time()
    function()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=20000)
    parser.add_argument("--run", type=Path, help="use this run file instead of making one")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--validate-rounds", type=int, default=1, help="rounds that also time --validate")
    parser.add_argument("--work-dir", type=Path, help="keep the suite and files here (default: a temporary folder)")
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "pytest-ocrmetrics-bench-metrics")
    docs = docs_requested()  # --write-docs: the table into docs/performance.md
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = options.work_dir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        path = options.run or make_run(root, options.documents, options.cache_dir)
        run = json.loads(path.read_text(encoding="utf-8"))
        run["documents"] = run["documents"][:options.documents]
        full = root / "unsharded.json"
        full.write_text(json.dumps(run, ensure_ascii=False), encoding="utf-8")
        shards = split(run, options.shards, root)
        old_shards = split(run, options.shards, root, index=False)
        out = root / "merged.json"
        tasks: dict[str, Callable[[], None]] = {
            "report writing": report_writer(run, root / "written.json"),
            "shard writing": report_writer(run, root / "written-shard.json", shard=True),
            "merge": command("merge", *shards, "-o", str(out)),
            "merge, shards without the index": command("merge", *old_shards, "-o", str(root / "merged-old.json")),
            "compare": command("compare", str(full), str(full)),
        }
        slow = {"merge --validate": command("merge", *shards, "-o", str(out), "--validate"),
                "compare --validate": command("compare", str(full), str(full), "--validate")}
        times: dict[str, list[float]] = {name: [] for name in [*tasks, *slow]}
        for round_ in range(options.repeat):
            timed_now = {**tasks, **(slow if round_ < options.validate_rounds else {})}
            for name, task in timed_now.items():
                times[name].append(timed(task))
            print(f"round {round_ + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f}s" for n in timed_now),
                  file=sys.stderr, flush=True)
        merged = json.loads(out.read_text(encoding="utf-8"))
        assert len(merged["documents"]) == len(run["documents"]), "the merge lost documents"
        old = (root / "merged-old.json").read_text(encoding="utf-8").split("\n", 2)[2]
        assert out.read_text(encoding="utf-8").split("\n", 2)[2] == old, "the merges differ (their created aside)"
        size = sum(Path(p).stat().st_size for p in shards) / 2**20
    writing = times["report writing"]
    print(f"`python benchmarks/bench_merge.py --documents {options.documents} --shards {options.shards} "
          f"--repeat {options.repeat} --validate-rounds {options.validate_rounds}`: Python "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"{len(run['documents']):,} documents of the real-output suite in {options.shards} shard files "
          f"({size:.0f} MB, written as the plugin writes them, with their merge index; and the same files without "
          f"it, as older versions wrote them); in-process CPU times (`process_time`), median of "
          f"{options.repeat} interleaved rounds ({min(options.validate_rounds, options.repeat)} with `--validate`). "
          f"*Report writing* is what the plugin does at the end of the unsharded session to write its run file "
          f"(summary with bootstrap intervals, sanitising, the streamed JSON); *shard writing* the same for a run "
          f"that is one shard (its file ends with the merge index).")
    print()
    print("| step | median (s) | / report writing | spread of the rounds' ratios | target |")
    print("|---|---|---|---|---|")
    for name, values in times.items():
        if not values:
            continue
        ratios = [value / writing[i] for i, value in enumerate(values)]
        target = "<= 1.5x" if name == "merge" else ""
        print(f"| {name} | {statistics.median(values):.2f} | **{statistics.median(ratios):.2f}x** | "
              f"{min(ratios):.2f}-{max(ratios):.2f}x | {target} |")
    if docs:
        write_printed("merge", markdown=True)


if __name__ == "__main__":
    main()
