"""Benchmarks write their tables into docs/performance.md between markers (benchmarks/_markdown.py)."""

from __future__ import annotations

import datetime as dt
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import _markdown  # noqa: E402

PAGE = ("# Performance\n\nintro\n\n<!-- bench:a -->\nold a\n<!-- /bench:a -->\n\nmiddle\n\n"
        "<!-- bench:b -->\nold b\n<!-- /bench:b -->\n")


def test_replace_section_replaces_only_its_own_section() -> None:
    page = _markdown.replace_section(PAGE, "a", "| x |\n|---|\n| 1 |\n")
    assert "<!-- bench:a -->\n| x |\n|---|\n| 1 |\n<!-- /bench:a -->" in page
    assert "old a" not in page and "old b" in page and "intro" in page and "middle" in page
    assert _markdown.replace_section(page, "a", "| x |\n|---|\n| 1 |") == page  # idempotent


@pytest.mark.parametrize("page", [PAGE.replace("<!-- /bench:a -->", ""), PAGE + PAGE])
def test_a_missing_or_doubled_section_is_one_sentence(page: str) -> None:
    with pytest.raises(ValueError, match=r"exactly one '<!-- bench:a -->'"):
        _markdown.replace_section(page, "a", "new")


def test_the_section_has_the_table_the_machine_and_the_date() -> None:
    body = _markdown.section_body("line 1\nline 2\n", markdown=False, when=dt.date(2026, 11, 26), where="box")
    assert body == "```text\nline 1\nline 2\n```\n\n_Machine: box · Date: 2026-11-26_"
    assert _markdown.section_body("| t |", markdown=True, when=dt.date(2026, 1, 2), where="box").startswith("| t |\n")


def test_write_docs_flag_records_what_the_benchmark_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "performance.md"
    page.write_text(PAGE, encoding="utf-8")
    argv = ["bench.py", "--documents", "5", "--write-docs"]
    assert _markdown.docs_requested(argv) is True
    assert argv == ["bench.py", "--documents", "5"]
    print("| documents | ratio |\n|---|---|\n| 5 | 1.2x |")
    _markdown.write_printed("b", markdown=True, path=page)
    text = page.read_text(encoding="utf-8")
    assert "<!-- bench:b -->\n| documents | ratio |\n|---|---|\n| 5 | 1.2x |\n\n_Machine: " in text
    assert "old a" in text and "old b" not in text
    assert "| 5 | 1.2x |" in capsys.readouterr().out  # still printed to the terminal
    assert _markdown.docs_requested(["bench.py"]) is False


def test_every_benchmark_that_writes_docs_has_its_section_in_the_page() -> None:
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    names = set()
    for path in (ROOT / "benchmarks").glob("bench_*.py"):
        found = re.findall(r'write_printed\("(\w+)"', path.read_text(encoding="utf-8"))
        assert found, f"{path.name} cannot write its table with --write-docs"
        names.update(found)
    for name in names:
        assert page.count(f"<!-- bench:{name} -->") == 1 and page.count(f"<!-- /bench:{name} -->") == 1, name
