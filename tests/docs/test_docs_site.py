"""The documentation site builds with ``mkdocs build --strict`` and works in a browser.

Skipped, with the reason, where the ``docs`` extra is not installed (``pip install -e ".[docs]"``).
"""

from __future__ import annotations

import functools
import http.server
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module with ``mkdocs build --strict``."""
    for module in NEEDED:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            pytest.skip(f"{module} is not installed: pip install -e \".[docs]\"")
    folder = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return folder


@pytest.fixture(scope="module")
def site_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _text(site: Path, page: str) -> str:
    html = (site / page / "index.html").read_text(encoding="utf-8")
    return re.sub(r"<[^>]+>", "", html)


def _generator() -> Any:
    """docs/_gen/reference.py, whose constants name the modules the reference is generated from."""
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "_gen" / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_built_reference_names_every_option_metric_command_and_hook(site: Path) -> None:
    generator = _generator()
    options = _text(site, "reference/options")
    assert all(row["option"] in options and row["ini"] in options for row in generator.option_rows())
    metrics = _text(site, "reference/metrics")
    assert all(row["name"] in metrics for row in generator.metric_rows())
    cli = _text(site, "reference/cli")
    assert all(name in cli for name in generator.cli_commands())
    hooks = _text(site, "reference/hooks")
    names = [n for n in vars(importlib.import_module(generator.HOOKS_MODULE)) if n.startswith("pytest_ocrmetrics_")]
    assert names and all(name in hooks for name in names)


def test_the_api_reference_shows_docstring_sections(site: Path) -> None:
    html = (site / "reference/api/metrics-text/index.html").read_text(encoding="utf-8")
    text = _text(site, "reference/api/metrics-text")
    assert "score_text" in text and "empty_reference" in text
    assert "Args:" not in text  # the Google-style sections are parsed into tables, not printed raw
    assert html.count('class="doc-section-title"') >= 9


def test_the_site_navigates_and_searches_in_a_browser(site_url: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site_url, wait_until="networkidle")
    nav = page.locator("nav.md-nav--primary")
    for section in ("Tutorial", "How-to", "Explanation", "Reference", "Performance", "Changelog"):
        assert nav.get_by_text(section, exact=True).count() >= 1, section
    page.locator("nav.md-nav--primary a", has_text="Your first suite").first.click()
    page.wait_for_url("**/tutorial/first-suite/")
    assert page.locator("h1").first.inner_text().rstrip("¶ \n") == "Your first suite"
    page.locator("input.md-search__input").click()
    page.keyboard.type("baseline", delay=20)  # typed: the search listens to key events
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    assert page.locator(".md-search-result__item").count() > 0
    page.goto(site_url + "reference/options/", wait_until="networkidle")
    assert page.locator("table").first.locator("tr").count() > 30
    assert not errors, errors
    page.close()
