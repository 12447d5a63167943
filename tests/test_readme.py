"""The README stays true: every option, ini key and metric is documented, and CI runs the README's test command."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.plugin.options import _OPTIONS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("option,ini", [(o[0], o[1]) for o in _OPTIONS])
def test_every_option_and_ini_key_is_documented(option: str, ini: str) -> None:
    assert f"`{option}" in README
    assert f"`{ini}`" in README


@pytest.mark.parametrize("name", list(METRICS))
def test_every_metric_is_defined(name: str) -> None:
    assert f"| `{name}` |" in README


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.findall(r"^python -m pytest.*$", ci, re.M)[-1]
    assert command in README


def test_first_commands_are_in_the_readme() -> None:
    assert 'pip install -e ".[rapidocr]"\npytest example_suites --ocr-engine=rapidocr' in README


def test_install_commands_work_before_the_package_is_published() -> None:
    """pytest-ocrmetrics is not on an index: every `pip install` of it in the README goes through a path or git."""
    for command in re.findall(r"pip install [^\n`]*pytest-ocrmetrics[^\n`]*", README):
        if "pytest-ocrmetrics-" in command:  # a third-party engine package named as an example
            continue
        assert "git+" in command or "/" in command.split("pytest-ocrmetrics")[0], command


def test_readme_mentions_a_virtual_environment_and_the_version_command() -> None:
    assert "python3 -m venv .venv && . .venv/bin/activate" in README
    assert "`ocrmetrics --version`" in README


def test_report_files_of_the_readme_commands_are_git_ignored() -> None:
    ignored = set((ROOT / ".gitignore").read_text(encoding="utf-8").split())
    written = set(re.findall(r"(?:--junitxml|--ocr-json|--ocr-html|--ocr-markdown)=([\w-]+\.[\w.]+)", README))
    assert written, "the README writes report files"
    for name in written:
        assert any(fnmatch.fnmatch(f"/{name}", pattern) for pattern in ignored), name
