"""What the installed plugin costs a pytest run that uses no OCR feature: its imports against pytest's own.

Runs ``python -X importtime -m pytest test_unrelated.py`` (one test that uses no OCR option, marker or fixture) in a
fresh subprocess ``--runs`` times, after one warm-up run (bytecode caches written: a user's start-up does not
recompile the package each time). From each run's import-time log it sums the *top-level* entries whose module
starts with ``pytest_ocrmetrics`` (pytest loads the plugin through ``importlib``, so its modules appear as top-level
entries; a module imported lazily later in the run, during configure or collection, is top-level too) and divides
by pytest's own ``pytest`` entry of the same process: a ratio, steadier than milliseconds on a busy machine.
Prints a Markdown table with the median and the spread (min, max) of the plugin's time, pytest's time and the
ratio, and the ``pytest_ocrmetrics`` modules the run imported. Target: a median ratio of at most 0.15.

The checkout's code is measured (its root goes first on ``PYTHONPATH``); when no ``pytest11`` entry point names
the plugin (not installed), it is loaded with ``-p pytest_ocrmetrics.plugin``, as an installed plugin would be.

    python benchmarks/bench_import.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _markdown import docs_requested, write_printed  # noqa: E402  (--write-docs: the table into docs/performance.md)

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.15
UNRELATED_TEST = "def test_unrelated():\n    assert sum([1, 2]) == 3\n"
# "import time:  self [us] | cumulative | <indent>module": a top-level entry has exactly one space before its name
_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)\s*$")


def top_level_entries(log: str) -> list[tuple[str, int]]:
    """``(module, cumulative microseconds)`` of each top-level entry of a ``-X importtime`` log."""
    entries = []
    for line in log.splitlines():
        match = _LINE.match(line)
        if match and len(match.group(3)) == 1:
            entries.append((match.group(4), int(match.group(2))))
    return entries


def plugin_and_pytest_us(log: str) -> tuple[int, int, list[str]]:
    """The plugin's summed top-level import time, pytest's own, and every ``pytest_ocrmetrics`` module imported."""
    entries = top_level_entries(log)
    plugin = sum(us for name, us in entries if name.split(".")[0] == "pytest_ocrmetrics")
    own = next((us for name, us in entries if name == "pytest"), 0)
    modules = sorted({m.group(4) for line in log.splitlines() if (m := _LINE.match(line))
                      and m.group(4).split(".")[0] == "pytest_ocrmetrics"})
    return plugin, own, modules


def _plugin_installed() -> bool:
    return any(ep.value.startswith("pytest_ocrmetrics") for ep in metadata.entry_points(group="pytest11"))


def run_once(folder: Path, extra: list[str]) -> str:
    """One pytest run of the unrelated test with ``-X importtime``; its import-time log (stderr)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-X", "importtime", "-m", "pytest", "test_unrelated.py", "-q", "-p", "no:randomly",
               *extra]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the pytest run failed ({done.returncode}):\n{done.stdout}\n{done.stderr[-2000:]}")
    return done.stderr


def _spread(values: list[float], unit: str, digits: int) -> tuple[str, str]:
    return (f"{statistics.median(values):.{digits}f}{unit}",
            f"{min(values):.{digits}f}–{max(values):.{digits}f}{unit}")


def main(argv: list[str] | None = None) -> int:
    writing = docs_requested(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="measured runs (after one warm-up run)")
    args = parser.parse_args(argv)
    extra = [] if _plugin_installed() else ["-p", "pytest_ocrmetrics.plugin"]
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        folder = Path(tmp)
        (folder / "test_unrelated.py").write_text(UNRELATED_TEST, encoding="utf-8")
        run_once(folder, extra)  # warm-up: bytecode caches
        plugin_ms, pytest_ms, ratios = [], [], []
        modules: set[str] = set()
        for _ in range(args.runs):
            plugin, own, imported = plugin_and_pytest_us(run_once(folder, extra))
            plugin_ms.append(plugin / 1000)
            pytest_ms.append(own / 1000)
            ratios.append(plugin / own if own else float("nan"))
            modules.update(imported)
    print(f"Plugin import cost in a pytest run of one unrelated test ({args.runs} runs, "
          f"{'installed entry point' if not extra else '-p pytest_ocrmetrics.plugin'}; Python "
          f"{sys.version.split()[0]})\n")
    print("| measure | median | spread (min–max) |")
    print("|---|---|---|")
    for label, values, unit, digits in (("pytest_ocrmetrics top-level imports", plugin_ms, " ms", 1),
                                        ("pytest's own import", pytest_ms, " ms", 1),
                                        ("ratio plugin / pytest", ratios, "", 3)):
        median, spread = _spread(values, unit, digits)
        print(f"| {label} | {median} | {spread} |")
    ratio = statistics.median(ratios)
    print(f"\ntarget: ratio <= {TARGET}: {'met' if ratio <= TARGET else 'NOT met'} ({ratio:.3f})")
    print(f"\n{len(modules)} pytest_ocrmetrics modules imported: {', '.join(sorted(modules)) or 'none'}")
    if writing:
        write_printed("import", markdown=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
