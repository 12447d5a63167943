"""Run olmOCR-bench's own ``olmocr/bench/benchmark.py`` unchanged, with Chromium from the system instead of Playwright's.

Used by ``bench_olmocr.py`` in the benchmark's throwaway venv (never imported by the product or its tests). The one
change: Playwright's ``BrowserType.launch`` gets ``executable_path`` (``OLMOCR_CHROMIUM``, default
``/usr/bin/chromium``) when the caller gives none, because ``python -m playwright install chromium`` cannot download
its browser here. Everything else, the equation renders and their SQLite cache under ``~/.cache/olmocr`` included, is
the benchmark's code as it is at the checked-out commit.

Run: ``PYTHONPATH=OLMOCR_SOURCE VENV/bin/python benchmarks/_olmocr_bench_chromium.py --dir BENCH_FOLDER [...]``
(the arguments are ``benchmark.py``'s own).
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

from playwright.sync_api import BrowserType  # type: ignore[import-not-found,unused-ignore]

_launch = BrowserType.launch


def _launch_system_chromium(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``BrowserType.launch`` with the system's Chromium when no executable is named."""
    if kwargs.get("executable_path") is None:
        kwargs["executable_path"] = os.environ.get("OLMOCR_CHROMIUM", "/usr/bin/chromium")
    return _launch(self, *args, **kwargs)


BrowserType.launch = _launch_system_chromium  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.argv = ["olmocr.bench.benchmark", *sys.argv[1:]]
    runpy.run_module("olmocr.bench.benchmark", run_name="__main__", alter_sys=True)
