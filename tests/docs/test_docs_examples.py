"""The tutorial and how-to pages' commands run, so the documentation cannot drift from the product.

Each page's ``python`` and shell blocks run in order in a fresh folder holding a copy of ``example_suites/`` (see
``docs_examples.py`` for the directives that skip a block or write it to a file). Shell blocks run with the test's
Python environment first on the PATH, so ``pytest`` and ``ocrmetrics`` are this checkout's.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from docs_examples import Page, read_page  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted([*DOCS.glob("tutorial/*.md"), *DOCS.glob("how-to/*.md")])
RUN_PAGES = [p for p in PAGES if read_page(p).runnable]


def _missing(requirement: str) -> str | None:
    if requirement == "tesseract":
        if shutil.which("tesseract") is None:
            return "the tesseract binary is not installed: apt-get install tesseract-ocr"
        if importlib.util.find_spec("pytesseract") is None:
            return 'pytesseract is not installed: pip install "pytest-ocrmetrics[tesseract]"'
        return None
    if importlib.util.find_spec(requirement) is None and shutil.which(requirement) is None:
        return f"{requirement} is not installed"
    return None


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def run_page(page: Page, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every runnable block of ``page`` in ``folder``; fail naming the page and line of the first that fails."""
    shutil.copytree(ROOT / "example_suites", folder / "example_suites",
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    monkeypatch.chdir(folder)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    env = _environment()
    where = page.path.relative_to(ROOT)
    for block in page.runnable:
        if block.file is not None:
            target = folder / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
        elif block.kind == "python":
            exec(compile(block.code, f"{where}:{block.line}", "exec"), namespace)  # noqa: S102
        else:
            proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=folder, env=env,
                                  capture_output=True, text=True, timeout=600)
            assert proc.returncode == block.exit, (
                f"{where}:{block.line}: exit {proc.returncode}, expected {block.exit}\n$ {block.code}\n"
                f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("path", RUN_PAGES, ids=[str(p.relative_to(DOCS)) for p in RUN_PAGES])
def test_page_commands_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = read_page(path)
    for requirement in page.requires:
        reason = _missing(requirement)
        if reason:
            pytest.skip(f"{path.name}: {reason}")
    run_page(page, tmp_path, monkeypatch)


def test_every_tutorial_and_how_to_block_runs_or_says_why_not() -> None:
    """A Python or shell block that is neither run nor written to a file must carry its reason."""
    for path in PAGES:
        for block in read_page(path).blocks:
            if block.kind and block.skip is not None:
                assert block.skip.strip(), f"{path.relative_to(ROOT)}:{block.line}: a skip without a reason"


def test_the_tutorial_runs_commands() -> None:
    tutorial = [p for p in RUN_PAGES if p.parent.name == "tutorial"]
    assert {p.name for p in tutorial} == {"first-suite.md", "datasets.md", "engines.md"}


def test_the_runner_reads_directives(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("<!-- docs-test: requires tesseract -->\n\n<!-- docs-test: skip needs a GPU -->\n"
                    "```bash\nnvidia-smi\n"
                    "```\n\n<!-- docs-test: file data/x.json -->\n```json\n{}\n```\n\n- item\n\n  ```python\n  x = 1\n"
                    "  ```\n\n<!-- docs-test: exit 1 -->\n```sh\nfalse\n```\n\n```text\nshown only\n```\n",
                    encoding="utf-8")
    parsed = read_page(page)
    assert parsed.requires == ["tesseract"]
    assert [(b.language, b.skip, b.file, b.exit) for b in parsed.blocks] == [
        ("bash", "needs a GPU", None, 0), ("json", None, "data/x.json", 0), ("python", None, None, 0),
        ("sh", None, None, 1), ("text", None, None, 0)]
    assert [b.code for b in parsed.runnable] == ["{}\n", "x = 1\n", "false\n"]


def test_a_failing_block_names_its_page_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "p.md"
    page.write_text("# t\n\n```bash\ntrue\n```\n\n```bash\nexit 3\n```\n", encoding="utf-8")
    parsed = read_page(page)
    parsed.path = ROOT / "docs" / "p.md"
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(AssertionError, match=r"docs/p.md:7: exit 3, expected 0"):
        run_page(parsed, work, monkeypatch)
