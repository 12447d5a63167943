"""A pytest run that uses no OCR feature pays only for registering the plugin's options, hooks, markers and fixtures.

Each test runs pytest in a subprocess (a fresh interpreter: nothing of this test session's imports leaks in) with a
``conftest.py`` that writes, when pytest unconfigures, the ``pytest_ocrmetrics`` modules in ``sys.modules``. What
the light run imports is asserted exactly, so a module-level import that drags OCR code into every pytest run fails
here; the import time itself is measured by ``benchmarks/bench_import.py``, not asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# what every pytest run imports with the plugin installed: the options and markers, the hook specifications, the stash
# keys, the fixtures (none of them imports OCR code)
LIGHT = {
    "pytest_ocrmetrics",
    "pytest_ocrmetrics.plugin",
    "pytest_ocrmetrics.plugin.fixtures",
    "pytest_ocrmetrics.plugin.hookspecs",
    "pytest_ocrmetrics.plugin.keys",
    "pytest_ocrmetrics.plugin.options",
}
# what starting an OCR run imports among others
STARTED = {"pytest_ocrmetrics.plugin.configure", "pytest_ocrmetrics.plugin.items", "pytest_ocrmetrics.scoring.runner",
           "pytest_ocrmetrics.engines.registry", "pytest_ocrmetrics.metrics.registry"}

DUMP_MODULES = """
import json
import sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    who = getattr(config, "workerinput", {}).get("workerid", "main")
    modules = sorted(name for name in sys.modules if name.split(".")[0] == "pytest_ocrmetrics")
    (config.rootpath / f"modules-{who}.json").write_text(json.dumps({
        "modules": modules, "plugin": config.pluginmanager.hasplugin("ocrmetrics")}))
"""

UNRELATED = """
def test_unrelated():
    assert sum([1, 2]) == 3
"""


def _modules(root: Path, who: str = "main") -> set[str]:
    dumped = json.loads((root / f"modules-{who}.json").read_text())
    assert dumped["plugin"], "the ocrmetrics plugin was not loaded: nothing was measured"
    return set(dumped["modules"])


def _unexpected(modules: set[str], allowed: set[str]) -> str:
    return f"imported by a run that uses no OCR feature: {sorted(modules - allowed)}"


def test_a_run_without_ocr_imports_only_what_registers_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DUMP_MODULES)
    pytester.makepyfile(test_unrelated=UNRELATED)
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)
    modules = _modules(pytester.path)
    assert modules == LIGHT, _unexpected(modules, LIGHT)
    assert "OCR metrics" not in result.stdout.str()


def test_a_run_without_ocr_under_xdist_stays_light(pytester: pytest.Pytester) -> None:
    """The controller imports nothing more; a worker only the cleaning of what it sends (every report, OCR or not,
    is made UTF-8 before it travels)."""
    pytest.importorskip("xdist")
    pytester.makeconftest(DUMP_MODULES)
    pytester.makepyfile(test_unrelated=UNRELATED)
    pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly").assert_outcomes(passed=1)
    controller = _modules(pytester.path)
    assert controller == LIGHT, _unexpected(controller, LIGHT)
    for worker in ("gw0", "gw1"):
        modules = _modules(pytester.path, worker)
        allowed = LIGHT | {"pytest_ocrmetrics.plugin.transport"} | {m for m in modules
                                                                   if m.startswith("pytest_ocrmetrics.core")}
        assert modules <= allowed, _unexpected(modules, allowed)


def test_markers_and_fixtures_are_registered_without_ocr(pytester: pytest.Pytester) -> None:
    """``--strict-markers`` knows the OCR markers and ``--fixtures`` lists the OCR fixtures, still without loading the
    OCR code; a marker without an OCR fixture does nothing, as before."""
    pytester.makeconftest(DUMP_MODULES)
    pytester.makepyfile(test_marked="""
        import pytest

        @pytest.mark.ocr_thresholds(cer=0.05)
        @pytest.mark.ocr_dataset("nowhere")
        def test_marked():
            pass
        """)
    pytester.runpytest_subprocess("--strict-markers", "-p", "no:randomly").assert_outcomes(passed=1)
    assert _modules(pytester.path) == LIGHT
    listed = pytester.runpytest_subprocess("--fixtures", "-p", "no:randomly")
    for name in ("ocr_document", "ocr_engine", "ocr_output", "ocr_score"):
        assert name in listed.stdout.str()


def test_an_ocr_fixture_starts_the_run_at_collection(pytester: pytest.Pytester) -> None:
    """A test function asking for an OCR fixture, with no option given: the run starts when it is collected and
    behaves as it always did (no engine selected: one skipped test naming the registered engines, a conftest's
    among them)."""
    pytester.makeconftest(DUMP_MODULES + """

def pytest_ocrmetrics_register_engines(registry):
    from pytest_ocrmetrics.engines.base import EngineSpec

    registry.register(EngineSpec("conftest-engine", lambda arg, options: None, description="never created"))
""")
    pytester.makepyfile(test_ocr="""
        import pytest

        @pytest.mark.ocr_dataset("data")
        def test_text(ocr_output):
            pass
        """, test_unrelated=UNRELATED)
    result = pytester.runpytest_subprocess("-rs", "-p", "no:randomly")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*no OCR engine selected: pass --ocr-engine=NAME (registered engines:*conftest-engine*"])
    modules = _modules(pytester.path)
    assert modules >= STARTED, f"not imported by an OCR run: {sorted(STARTED - modules)}"


def test_a_typo_in_an_ocr_option_or_ini_key_still_fails_at_startup(pytester: pytest.Pytester) -> None:
    """An ``--ocr-*`` option or its ini key starts the run at configure time: a wrong value is refused before any
    test runs, whatever the tests use."""
    pytester.makepyfile(test_unrelated=UNRELATED)
    result = pytester.runpytest_subprocess("--ocr-summary=fulll")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-summary='fulll' is not valid*did you mean 'full'*"])
    pytester.makeini("[pytest]\nocr_summary = fulll\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-summary='fulll' is not valid*"])


def test_a_text_run_without_facts_does_not_load_the_facts_code(pytester: pytest.Pytester) -> None:
    """A dataset of plain texts (no page-level facts), replayed, with the summary table and a run file: the facts
    modules (olmOCR-bench's checks, their summary) stay unimported."""
    pytester.makeconftest(DUMP_MODULES)
    data = pytester.mkdir("data")
    (data / "images").mkdir()
    (data / "images" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (data / "ground_truth.json").write_text(json.dumps({"a.png": {"full_text": "TOTAL 12.50"}}))
    preds = pytester.mkdir("preds")
    (preds / "a.txt").write_text("TOTAL 12.5O")
    result = pytester.runpytest_subprocess("data", "--ocr-dataset=data", "--ocr-engine=replay:preds",
                                           "--ocr-json=run.json", "-p", "no:randomly")
    result.assert_outcomes(passed=1)
    assert "OCR metrics" in result.stdout.str()
    modules = _modules(pytester.path)
    assert modules >= STARTED
    assert not {m for m in modules if m.startswith("pytest_ocrmetrics.metrics.facts")}, sorted(modules)
