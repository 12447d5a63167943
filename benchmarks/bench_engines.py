"""Benchmark: concurrent requests to a remote engine, and the output cache.

(1) 64 documents through the ``openai``-compatible engine against the local fake chat-completions server
    (``tests/engines/fake_server.py``) answering after 100 ms: one request at a time vs 16 in flight
    (the prefetching pool). Target: >= 10x faster.
(2) Tesseract on real pages, cold cache vs warm cache. With ``--suite PATH`` (an example suite folder) the whole
    pytest run is timed twice with one cache folder; otherwise the engine + cache are timed directly on
    ``../shared/data/sroie_receipts`` images. Target: warm >= 20x faster.
(3) The same documents through whole pytest runs, without xdist and with ``-n 2`` (each worker prefetches the
    documents of the tests it was given). Target: ``-n 2`` never slower.

Run from the repository root::

    python benchmarks/bench_engines.py                 # both parts
    python benchmarks/bench_engines.py --skip-tesseract
    python benchmarks/bench_engines.py --suite example_suites/receipts-tesseract

It prints times and ratios; it asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _markdown import docs_requested, write_printed  # --write-docs: the table into docs/performance.md

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_ocrmetrics.core.documents import Document  # noqa: E402
from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache  # noqa: E402
from pytest_ocrmetrics.engines.openai_compat import OPENAI_SPEC  # noqa: E402
from pytest_ocrmetrics.engines.prefetch import Prefetcher  # noqa: E402

SHARED_DATA = ROOT.parent / "shared" / "data"


def _fake_server_module():
    spec = importlib.util.spec_from_file_location("bench_fake_server", ROOT / "tests" / "engines" / "fake_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def bench_concurrency(documents: int, latency_s: float, concurrency: int) -> None:
    fake_server = _fake_server_module()
    with tempfile.TemporaryDirectory() as tmp, fake_server.FakeChatServer(latency_s=latency_s) as server:
        docs = []
        for index in range(documents):
            path = Path(tmp) / f"page{index:03d}.png"
            path.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(2048))
            docs.append(Document(id=path.name, dataset="bench", image_path=path))
        timings: dict[int, float] = {}
        for workers in (1, concurrency):
            engine = OPENAI_SPEC.factory(None, {"base_url": server.base_url, "model": "fake-vlm"})
            started = time.perf_counter()
            with Prefetcher(engine, docs, concurrency=workers) as prefetcher:
                for document in docs:
                    prefetcher.result(document)
            timings[workers] = time.perf_counter() - started
        print(f"(1) remote engine: {documents} documents, server latency {latency_s * 1000:.0f} ms per request")
        for workers, seconds in timings.items():
            print(f"    concurrency {workers:>2}: {seconds:7.2f} s  ({documents / seconds:6.1f} documents/s)")
        ratio = timings[1] / timings[concurrency]
        print(f"    speed-up concurrency {concurrency} vs 1: {ratio:.1f}x (target >= 10x); "
              f"server saw at most {server.max_in_flight} requests in flight")


def _median_runs(variants: dict[str, list[str]], cwd: Path, repeat: int) -> dict[str, float]:
    """Median wall time of each whole command, the variants run interleaved ``repeat`` times."""
    import statistics

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs: dict[str, list[float]] = {label: [] for label in variants}
    for _ in range(repeat):
        for label, command in variants.items():
            started = time.perf_counter()
            subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
            runs[label].append(time.perf_counter() - started)
    return {label: statistics.median(times) for label, times in runs.items()}


FLOOR_TEST = """
import pytest


@pytest.mark.parametrize("index", range({documents}))
def test_nothing(index):
    pass
"""


def bench_xdist(documents: int, latency_s: float, concurrency: int, repeat: int = 3) -> None:
    """Whole pytest runs against the fake server: no xdist vs ``-n 2`` (each worker prefetches its own tests), next
    to the same comparison for as many do-nothing tests without this plugin (pytest-xdist's own cost: starting two
    workers that each import pytest and collect)."""
    import json

    fake_server = _fake_server_module()
    with tempfile.TemporaryDirectory() as tmp, fake_server.FakeChatServer(latency_s=latency_s) as server:
        root = Path(tmp)
        (root / "data" / "images").mkdir(parents=True)
        truth = {}
        for index in range(documents):
            name = f"page{index:03d}.png"
            (root / "data" / "images" / name).write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(64))
            truth[name] = {"full_text": "text"}
        (root / "data" / "ground_truth.json").write_text(json.dumps(truth), encoding="utf-8")
        (root / "test_floor.py").write_text(FLOOR_TEST.format(documents=documents), encoding="utf-8")
        pytest_command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        base = [*pytest_command, "--ocr-dataset=data", "--ocr-engine=openai",
                f"--ocr-engine-option=openai.base_url={server.base_url}", "--ocr-engine-option=openai.model=fake-vlm",
                f"--ocr-concurrency={concurrency}", "--ocr-no-cache"]
        floor = [*pytest_command, "-p", "no:ocrmetrics", "test_floor.py"]
        t = _median_runs({"no xdist": base, "-n 2": [*base, "-n", "2"],
                          "floor": floor, "floor -n 2": [*floor, "-n", "2"]}, root, repeat)
        start_up = t["floor -n 2"] - t["floor"]
        print(f"(3) whole pytest runs, {documents} documents, {latency_s * 1000:.0f} ms latency, "
              f"--ocr-concurrency={concurrency}, median of {repeat}")
        print(f"    no xdist: {t['no xdist']:6.2f} s   -n 2: {t['-n 2']:6.2f} s   -n 2 / no xdist: "
              f"{t['-n 2'] / t['no xdist']:.2f} (target <= 1); server saw at most {server.max_in_flight} requests "
              f"in flight")
        print(f"    pytest-xdist's own cost, {documents} do-nothing tests without this plugin: {t['floor']:.2f} s vs "
              f"{t['floor -n 2']:.2f} s with -n 2 (+{start_up:.2f} s); the OCR run with -n 2 less that: "
              f"{(t['-n 2'] - start_up) / t['no xdist']:.2f}x no xdist")


def _shared_documents(limit: int) -> tuple[str, list[Document]]:
    for name in ("sroie_receipts", "ocr_pages_lines"):
        images = SHARED_DATA / name / "images"
        if images.is_dir():
            paths = sorted(p for p in images.iterdir() if p.is_file())[:limit]
            return name, [Document(id=p.name, dataset=name, image_path=p) for p in paths]
    return "", []


def bench_cache_direct(limit: int) -> None:
    from pytest_ocrmetrics.engines.base import EngineUnavailable
    from pytest_ocrmetrics.engines.registry import default_registry

    dataset, docs = _shared_documents(limit)
    if not docs:
        print(f"(2) skipped: no shared data at {SHARED_DATA}")
        return
    try:
        make = lambda: default_registry(entry_points=False).create("tesseract", {})  # noqa: E731
        make()
    except EngineUnavailable as exc:
        print(f"(2) skipped: {exc}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        timings = []
        for _ in ("cold", "warm"):
            cache = OutputCache(Path(tmp) / "outputs")
            engine = CachingEngine(make(), cache)
            started = time.perf_counter()
            for document in docs:
                engine.recognize(document)
            timings.append(time.perf_counter() - started)
            hits = cache.hits
        cold, warm = timings
    print(f"(2) tesseract + output cache: {len(docs)} documents of {dataset} (engine and cache timed directly)")
    print(f"    cold: {cold:7.2f} s ({cold / len(docs):.2f} s/document)   warm: {warm:7.4f} s ({hits} hits)")
    print(f"    speed-up warm vs cold: {cold / warm:.0f}x (target >= 20x)")


def bench_cache_suite(suite: Path) -> None:
    if not suite.exists():
        print(f"(2) skipped: suite {suite} does not exist")
        return
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                   "--ocr-engine=tesseract", f"--ocr-cache-dir={tmp}"]
        timings = []
        for _ in ("cold", "warm"):
            started = time.perf_counter()
            result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            timings.append(time.perf_counter() - started)
            summary = (result.stdout.strip().splitlines() or ["(no output)"])[-1]
            if result.returncode not in (0, 1):
                print(f"(2) suite run failed (exit {result.returncode}): {summary}\n{result.stderr[-2000:]}")
                return
        cold, warm = timings
    print(f"(2) tesseract example suite {suite}: whole pytest run, cold vs warm output cache")
    print(f"    cold: {cold:7.2f} s   warm: {warm:7.2f} s   last summary: {summary}")
    print(f"    speed-up warm vs cold: {cold / warm:.1f}x (target >= 20x)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1, help="server latency in seconds (default 0.1)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--tesseract-documents", type=int, default=8)
    parser.add_argument("--suite", type=Path, help="time this example suite with pytest instead of the engine alone")
    parser.add_argument("--skip-tesseract", action="store_true")
    parser.add_argument("--skip-xdist", action="store_true", help="skip (3), whole pytest runs with and without -n 2")
    parser.add_argument("--xdist-documents", type=int, nargs="+", default=[64, 512],
                        help="document counts of (3) (default 64 512)")
    writing = docs_requested(argv)
    args = parser.parse_args(argv)
    bench_concurrency(args.documents, args.latency, args.concurrency)
    if not args.skip_xdist:
        for documents in args.xdist_documents:
            bench_xdist(documents, args.latency, 8)
    if not args.skip_tesseract:
        if args.suite:
            bench_cache_suite(args.suite)
        else:
            bench_cache_direct(args.tesseract_documents)
    if writing:
        write_printed("engines")


if __name__ == "__main__":
    main()
