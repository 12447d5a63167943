"""Benchmark: what the HTML report's charts cost at 20,000 documents, in file size and render time.

Renders the same synthetic run (one engine, one dataset, tagged documents, a baseline comparison) with and without
the charts section in one process, interleaved rounds, the best of each, and prints the charts' share of the file and of the
render time (the ratio with / without). Run: python benchmarks/bench_report_charts.py [documents]
"""

from __future__ import annotations

import gc
import random
import sys
import time
from pathlib import Path
from typing import Callable

from _markdown import docs_requested, write_printed  # --write-docs: the table into docs/performance.md

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from ocr_run_factory import make_doc, make_run, summarize  # noqa: E402

from pytest_ocrmetrics.gating import compare_runs  # noqa: E402
from pytest_ocrmetrics.reporting.html import render_html  # noqa: E402

ROUNDS = 7


def corpus(n: int, seed: int = 1) -> tuple[dict, dict]:
    """A run of ``n`` tagged documents with skewed CER (with its ``summary_by_tag``), and a baseline against which
    every 40th got worse."""
    rng = random.Random(seed)
    docs, old = [], []
    for i in range(n):
        before = rng.betavariate(1.2, 12)
        cer = before + 0.08 if i % 40 == 0 else max(0.0, before + rng.uniform(-0.004, 0.004))
        doc = make_doc(f"doc{i:05d}.png", {"cer": cer, "wer": min(1.0, 3 * cer)})
        doc["tags"] = [("receipt", "invoice", "faded")[i % 3]]
        docs.append(doc)
        old.append(make_doc(doc["id"], {"cer": before, "wer": min(1.0, 3 * before)}))
    run = make_run(docs)
    # the rows per tag, as the plugin writes them into a run whose documents carry tags
    run["summary_by_tag"] = [{"tag": tag, **row} for tag in ("receipt", "invoice", "faded")
                             for row in summarize([d for d in docs if tag in d["tags"]])]
    return run, make_run(old)


def timed(render: Callable[[], str]) -> tuple[float, str]:
    gc.collect()
    start = time.perf_counter()
    text = render()
    return time.perf_counter() - start, text


def main() -> None:
    writing = docs_requested()
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    run, old = corpus(n)
    comparison = compare_runs(old, run, ["cer:0.01"], resamples=0)
    for label, kwargs in (("no baseline", {}), ("with a baseline", {"comparison": comparison})):
        with_times, without_times = [], []
        for _ in range(ROUNDS):  # interleaved, best of each: the machine's load moves both alike
            with_time, with_text = timed(lambda: render_html(run, **kwargs))  # noqa: B023 - timed now
            without_time, _ = timed(lambda: render_html(run, with_charts=False, **kwargs))  # noqa: B023
            with_times.append(with_time)
            without_times.append(without_time)
        with_time, without_time = min(with_times), min(without_times)
        start = with_text.index('<section id="charts">')
        section = with_text[start:with_text.index("</section>", start) + len("</section>")]
        size, chart_bytes = len(with_text.encode("utf-8")), len(section.encode("utf-8"))
        print(f"{n:,} documents, {label}: report {size / 1e6:.2f} MB, charts {chart_bytes / 1e3:.1f} kB "
              f"({chart_bytes / size:.2%} of the file, {with_text.count('<svg')} charts, "
              f"{section.count('<') - section.count('</')} elements); render {with_time:.2f}s with charts, "
              f"{without_time:.2f}s without (ratio {with_time / without_time:.3f}, charts "
              f"{(with_time - without_time) / with_time:.1%} of the time)")
    if writing:
        write_printed("report_charts")


if __name__ == "__main__":
    main()
