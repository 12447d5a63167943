"""Shared fixtures for the project's own tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

# pytester's in-process runs drop every module first imported during the run (SysModulesSnapshot): a later run would
# import a second copy, whose classes an isinstance check of the first copy refuses ("expected an ocr_score
# (DocumentScore) ..., not DocumentScore" when tests/test_output_goldens.py ran alone). Imported here, they are kept.
import pytest_ocrmetrics.assertions  # noqa: F401, E402
import pytest_ocrmetrics.plugin.session  # noqa: F401, E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (real human-transcribed ground truth); tests using it skip on a clone without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared OCR ground truth not found at {SHARED_DATA} (only present in the project's workspace and CI)")
    return SHARED_DATA


CHROMIUM = os.environ.get("OCR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (the system's, ``$OCR_CHROMIUM``) driven by Playwright for Python; skips without either."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed "
                                   "(pip install playwright; the browser itself comes from the system: apt-get install chromium)")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no chromium executable at {CHROMIUM} (apt-get install chromium, or set OCR_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``plugin_args``: a plugin test runs without xdist; one marked ``xdist_transport`` (its subject is what workers
    send the controller: records, reports, the summary) runs a second time with two workers (syrupy's pattern)."""
    if "plugin_args" in metafunc.fixturenames:
        variants, ids = [[]], ["no-xdist"]
        if metafunc.definition.get_closest_marker("xdist_transport"):
            variants, ids = [[], ["-n", "2"]], ["no-xdist", "xdist-2"]
        metafunc.parametrize("plugin_args", variants, ids=ids, indirect=True)


@pytest.fixture
def plugin_args(request: pytest.FixtureRequest) -> list[str]:
    """Extra pytest arguments of a plugin test's inner run: none, or ``-n 2`` (see pytest_generate_tests)."""
    if request.param:
        pytest.importorskip("xdist")
    return list(request.param)
