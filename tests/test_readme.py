"""The README stays a true front door: short, its first commands the ones CI and the tests run, its links alive.

Every option, ini key and metric is documented in the generated reference (``tests/docs/test_docs_reference.py``).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS_PAGES = [p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md")]
DOCS_AND_README = [README, *DOCS_PAGES]


def test_readme_is_at_most_12_kb() -> None:
    assert len(README.encode("utf-8")) <= 12 * 1024


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.findall(r"^python -m pytest.*$", ci, re.M)[-1]
    assert command == "python -m pytest -n 2"
    assert f"```bash\npip install -e \".[test,tesseract,rapidocr,deepseek]\"\n{command}\n```" in README


def test_ci_builds_the_documentation_site_before_the_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.index("mkdocs build --strict") < ci.index("python -m pytest -n 2")
    assert re.search(r'pip install .*-e "\.\[[^\]]*\bdocs\b', ci)


def test_first_commands_are_in_the_readme() -> None:
    assert 'pip install -e ".[rapidocr]"\npytest example_suites --ocr-engine=rapidocr' in README


def test_install_commands_work_before_the_package_is_published() -> None:
    """pytest-ocrmetrics is not on an index: every `pip install` of it goes through a path or git."""
    for text in DOCS_AND_README:
        for command in re.findall(r"pip install [^\n`]*pytest-ocrmetrics[^\n`]*", text):
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


def test_readme_links_and_picture_exist() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if "://" not in t]
    assert "docs/assets/report.png" in local
    for target in local:
        assert (ROOT / target).exists(), target
    picture = ROOT / "docs" / "assets" / "report.png"
    assert picture.read_bytes().startswith(b"\x89PNG") and picture.stat().st_size < 200 * 1024


def test_readme_has_no_session_diaries() -> None:
    for text in DOCS_AND_README:
        assert not re.search(r"\bsession \d+'s\b|\bSession \d+\b", text)

