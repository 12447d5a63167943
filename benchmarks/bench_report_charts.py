"""Benchmark: what the HTML report's charts cost at 20,000 documents, in file size and render time.

Renders the same synthetic run (one engine, one dataset, tagged documents, a baseline comparison) with and without
the charts section in one process, best of a few rounds each, and prints the charts' share of the file and of the
render time (the ratio with / without). Run: python benchmarks/bench_report_charts.py [documents]
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from ocr_run_factory import make_doc, make_run  # noqa: E402

from pytest_ocrmetrics.gating import compare_runs  # noqa: E402
from pytest_ocrmetrics.reporting.html import render_html  # noqa: E402

ROUNDS = 3


def corpus(n: int, seed: int = 1) -> tuple[dict, dict]:
    """A run of ``n`` tagged documents with skewed CER, and a baseline against which every 40th got worse."""
    rng = random.Random(seed)
    docs, old = [], []
    for i in range(n):
        before = rng.betavariate(1.2, 12)
        cer = before + 0.08 if i % 40 == 0 else max(0.0, before + rng.uniform(-0.004, 0.004))
        doc = make_doc(f"doc{i:05d}.png", {"cer": cer, "wer": min(1.0, 3 * cer)})
        doc["tags"] = [("receipt", "invoice", "faded")[i % 3]]
        docs.append(doc)
        old.append(make_doc(doc["id"], {"cer": before, "wer": min(1.0, 3 * before)}))
    return make_run(docs), make_run(old)


def best(render: object, rounds: int = ROUNDS) -> tuple[float, str]:
    times, text = [], ""
    for _ in range(rounds):
        start = time.perf_counter()
        text = render()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times), text


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    run, old = corpus(n)
    comparison = compare_runs(old, run, ["cer:0.01"], resamples=0)
    for label, kwargs in (("no baseline", {}), ("with a baseline", {"comparison": comparison})):
        with_time, with_text = best(lambda: render_html(run, **kwargs))
        without_time, without_text = best(lambda: render_html(run, with_charts=False, **kwargs))
        start = with_text.index('<section id="charts">')
        section = with_text[start:with_text.index("</section>", start) + len("</section>")]
        size, chart_bytes = len(with_text.encode("utf-8")), len(section.encode("utf-8"))
        print(f"{n:,} documents, {label}: report {size / 1e6:.2f} MB, charts {chart_bytes / 1e3:.1f} kB "
              f"({chart_bytes / size:.2%} of the file, {with_text.count('<svg')} charts, "
              f"{section.count('<') - section.count('</')} elements); render {with_time:.2f}s with charts, "
              f"{without_time:.2f}s without (ratio {with_time / without_time:.3f}, charts "
              f"{(with_time - without_time) / with_time:.1%} of the time)")


if __name__ == "__main__":
    main()
