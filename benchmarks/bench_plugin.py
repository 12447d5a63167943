"""Plugin overhead and memory: N documents through the replay engine vs a plain parametrized pytest test.

Both runs score the same texts; the plugin run computes the default metric set (with a CER threshold) and writes JUnit
XML and the JSON run file, the plain run computes CER with rapidfuzz in a hand-written parametrized test and writes
JUnit XML. For each size, one warm-up run of each, then ``--repeat`` rounds that run plain and plugin back to back
(interleaved, so a noisy neighbour slows both), each a fresh ``pytest`` subprocess with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` removed: otherwise pytest re-parses and assertion-rewrites every plugin module on every
run, a start-up cost users do not pay). Prints the median wall times and their ratio (target: plugin <= 1.5x plain,
growing linearly), the median of the interleaved pairs' own ratios (steadier on a busy machine) and the peak
resident memory of each process (``ru_maxrss`` from ``wait4``; target <= 2x plain).

    python benchmarks/bench_plugin.py [--documents 500 2000 8000 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _markdown import docs_requested, write_printed  # --write-docs: the table into docs/performance.md

WORDS = ("invoice total amount date customer number street city payment due tax net gross item quantity price "
         "receipt order shipping reference account balance").split()

PLAIN_TEST = '''
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
'''


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


def make_suite(root: Path, documents: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    data, preds = root / "data", root / "preds"
    (data / "images").mkdir(parents=True)
    preds.mkdir()
    truth = {}
    for i in range(documents):
        name = f"doc_{i:05d}.png"
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10))) for _ in range(rng.randint(3, 8))]
        text = "\n".join(lines)
        truth[name] = {"full_text": text}
        (data / "images" / name).write_bytes(b"\x89PNG\r\n\x1a\n")
        (preds / f"doc_{i:05d}.txt").write_text(_noisy(text, rng), encoding="utf-8")
    (data / "ground_truth.json").write_text(json.dumps(truth), encoding="utf-8")
    (root / "test_plain.py").write_text(PLAIN_TEST, encoding="utf-8")


def _run(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of one pytest process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    output = proc.stdout.read() if proc.stdout is not None else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"pytest {' '.join(args)} failed with exit code {proc.returncode}:\n"
                         f"{output.decode(errors='replace')[-3000:]}")
    return elapsed, usage.ru_maxrss / 1024  # Linux: kilobytes


PLAIN_ARGS = ["test_plain.py", "-p", "no:ocrmetrics", "--junitxml=plain.xml"]
PLUGIN_ARGS = ["data", "--ocr-dataset=data", "--ocr-engine=replay:preds", "--ocr-max=cer:0.5", "--junitxml=ocr.xml",
               "--ocr-json=run.json"]


def measure(documents: int, repeat: int) -> dict[str, float]:
    """Median wall time and peak memory of the plain and the plugin run at ``documents``, and the output sizes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_suite(root, documents)
        _run(PLAIN_ARGS, root), _run(PLUGIN_ARGS, root)  # warm-up: bytecode caches, page cache
        plain, plugin = [], []
        for _ in range(repeat):
            plain.append(_run(PLAIN_ARGS, root))
            plugin.append(_run(PLUGIN_ARGS, root))
        run = json.loads((root / "run.json").read_text(encoding="utf-8"))
        assert len(run["documents"]) == documents, "the plugin run did not score every document"
        return {
            "plain_s": statistics.median(t for t, _ in plain), "plugin_s": statistics.median(t for t, _ in plugin),
            "pair_ratio": statistics.median(b / a for (a, _), (b, _) in zip(plain, plugin)),
            "plain_mb": statistics.median(m for _, m in plain), "plugin_mb": statistics.median(m for _, m in plugin),
            "run_file_mb": (root / "run.json").stat().st_size / 2**20, "junit_mb": (root / "ocr.xml").stat().st_size / 2**20,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, nargs="+", default=[500, 2000, 8000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    writing = docs_requested()
    options = parser.parse_args()
    rows = []
    for documents in options.documents:
        rows.append((documents, measure(documents, options.repeat)))
        print(f"measured {documents} documents", file=sys.stderr, flush=True)
    print(f"median of {options.repeat} interleaved runs (wall time of a whole pytest process; plugin: default metrics, "
          "CER threshold, JUnit + run file)")
    print("| documents | plain (s) | plugin (s) | plugin / plain | median of the pairs' ratios | plugin ms / document |")
    print("|---|---|---|---|---|---|")
    for documents, r in rows:
        print(f"| {documents:,} | {r['plain_s']:.2f} | {r['plugin_s']:.2f} | **{r['plugin_s'] / r['plain_s']:.2f}x** | "
              f"{r['pair_ratio']:.2f}x | {1000 * r['plugin_s'] / documents:.2f} |")
    print()
    print("| documents | peak memory plain (MB) | plugin (MB) | plugin / plain | run file (MB) | JUnit XML (MB) |")
    print("|---|---|---|---|---|---|")
    for documents, r in rows:
        print(f"| {documents:,} | {r['plain_mb']:.0f} | {r['plugin_mb']:.0f} | **{r['plugin_mb'] / r['plain_mb']:.2f}x** | "
              f"{r['run_file_mb']:.1f} | {r['junit_mb']:.1f} |")
    if writing:
        write_printed("plugin", markdown=True)


if __name__ == "__main__":
    main()
