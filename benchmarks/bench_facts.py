"""Time olmOCR-bench facts on the sample (``../shared/data/olmocr_bench_sample``): per fact, per type, math with and
without the browser step, and as a ratio of the page's CER.

Run: ``python benchmarks/bench_facts.py`` (``--rounds N``; ``--data DIR`` for another olmOCR-bench folder with an
``olmocr_pipeline/`` candidate, e.g. the full benchmark data set).

Per fact type it prints the number of facts and the mean time per check (best of the rounds), warm caches excluded
for math: each round clears the KaTeX MathML and layout caches, so "math (browser)" includes rendering every
equation in headless Chromium (the browser is started once, before timing), and "math (no browser)" runs steps 1-2
only (the layout step reports itself skipped). The last line compares one page's checks with one CER on the same
page (Markdown normalized with ``markdown+nfc+whitespace`` against the olmOCR output itself, a ratio, not a claim).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from _markdown import docs_requested, write_printed  # --write-docs: the table into docs/performance.md

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_ocrmetrics.datasets.loading import load_dataset  # noqa: E402
from pytest_ocrmetrics.engines.replay import ReplayEngine  # noqa: E402
from pytest_ocrmetrics.metrics.facts import (
    check_fact,  # noqa: E402
    math_layout,  # noqa: E402
)
from pytest_ocrmetrics.metrics.facts import equations as facts_math  # noqa: E402
from pytest_ocrmetrics.metrics.text import cer  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "olmocr_bench_sample"


def _clear_math_caches() -> None:
    facts_math.render_mathml.cache_clear()
    math_layout.render_spans.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=5)
    writing = docs_requested()
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"no olmOCR-bench data at {args.data}; pass --data DIR")
    dataset = load_dataset(args.data)
    engine = ReplayEngine(args.data / "olmocr_pipeline")
    pages = [(document, engine.recognize(document).text) for document in dataset]
    facts = [(fact, text) for document, text in pages for fact in document.facts]
    browser = math_layout.layout_available()
    if browser:
        math_layout.render_spans("x")  # start Chromium outside the timings

    def time_kind(selected: list, *, no_browser: bool = False) -> float:
        best = float("inf")
        saved = math_layout._chromium
        if no_browser:
            math_layout._chromium = lambda: None  # type: ignore[assignment]
            math_layout._BROWSER.close()
        try:
            for _ in range(args.rounds):
                _clear_math_caches()
                start = time.perf_counter()
                for fact, text in selected:
                    check_fact(fact, text)
                best = min(best, (time.perf_counter() - start) / max(len(selected), 1))
        finally:
            math_layout._chromium = saved  # type: ignore[assignment]
        return best

    by_type: dict[str, list] = defaultdict(list)
    for fact, text in facts:
        by_type[fact.type].append((fact, text))
    print(f"{len(facts)} facts on {len(pages)} pages ({args.data}); best of {args.rounds} rounds; "
          f"browser for the math layout step: {'yes' if browser else 'no'}")
    print(f"{'type':<20} {'facts':>5} {'ms/fact':>10}")
    for kind in sorted(by_type):
        if kind == "math":
            if browser:
                print(f"{'math (browser)':<20} {len(by_type[kind]):>5} {time_kind(by_type[kind]) * 1e3:>10.3f}")
            print(f"{'math (no browser)':<20} {len(by_type[kind]):>5} "
                  f"{time_kind(by_type[kind], no_browser=True) * 1e3:>10.3f}")
        else:
            print(f"{kind:<20} {len(by_type[kind]):>5} {time_kind(by_type[kind]) * 1e3:>10.3f}")
    non_math = [(f, t) for f, t in facts if f.type != "math"]
    per_fact = time_kind(non_math)
    cer_times = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for _, text in pages:
            cer(text, text + " x", normalize="markdown+nfc+whitespace")
        cer_times.append((time.perf_counter() - start) / len(pages))
    print(f"non-math fact / one page CER: {per_fact / statistics.median(cer_times):.2f}x "
          f"({per_fact * 1e3:.3f} ms vs {statistics.median(cer_times) * 1e3:.3f} ms)")
    if writing:
        write_printed("facts")


if __name__ == "__main__":
    main()
