"""The generated reference names everything the code defines: options, ini keys, metrics, subcommands, modules.

The pages come from ``docs/_gen/reference.py`` (a MkDocs hook); these tests call it directly, so they need no MkDocs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "_gen" / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
PAGES = GEN.pages()
OPTIONS = importlib.import_module(GEN.OPTIONS_MODULE)._OPTIONS
METRICS = importlib.import_module(GEN.METRICS_MODULE).METRICS
PARSER = importlib.import_module(GEN.CLI_MODULE).build_parser()


@pytest.mark.parametrize(("option", "ini"), [(o[0], o[1]) for o in OPTIONS])
def test_every_option_and_ini_key_is_in_the_options_page(option: str, ini: str) -> None:
    lines = PAGES[GEN.OPTIONS_PAGE].splitlines()
    rows = [line for line in lines if line.startswith((f"| `{option}=", f"| `{option}` "))]
    assert len(rows) == 1, option
    assert f"| `{ini}` |" in rows[0]


def test_the_options_page_has_one_row_per_option() -> None:
    rows = [line for line in PAGES[GEN.OPTIONS_PAGE].splitlines() if line.startswith("| `--")]
    assert len(rows) == len(OPTIONS)


@pytest.mark.parametrize("name", list(METRICS))
def test_every_metric_is_in_the_registry_page(name: str) -> None:
    spec = METRICS[name]
    rows = [line for line in PAGES[GEN.METRICS_PAGE].splitlines() if line.startswith(f"| `{name}` (")]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].strip("|").split(" | ")]
    assert cells[1] == spec.better and cells[2] == spec.requires and cells[3] == spec.unit
    assert spec.description.split()[0] in rows[0]
    assert spec.specification and spec.specification.split()[0] in rows[0], "say which definition it follows"
    if spec.aggregation == "micro":
        assert f"Σ `{spec.numerator}` / Σ `{spec.denominator}`" in rows[0]


def test_the_registry_page_has_one_row_per_metric() -> None:
    rows = [line for line in PAGES[GEN.METRICS_PAGE].splitlines() if re.match(r"\| `\w+` \(", line)]
    assert len(rows) == len(METRICS)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    for action in PARSER._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("ocrmetrics has no subcommands")


@pytest.mark.parametrize("command", list(_subparsers()))
def test_every_subcommand_and_its_options_are_in_the_cli_page(command: str) -> None:
    page = PAGES[GEN.CLI_PAGE]
    assert f"\n## {command}\n" in page
    section = page.split(f"\n## {command}\n", 1)[1].split("\n## ", 1)[0]
    for action in _subparsers()[command]._actions:
        for option in action.option_strings:
            if option not in ("-h", "--help"):
                assert f"`{option}" in section or f", {option}" in section, (command, option)


def test_the_hooks_page_renders_the_hook_specs_module() -> None:
    hooks = importlib.import_module(GEN.HOOKS_MODULE)
    assert [n for n in vars(hooks) if n.startswith("pytest_ocrmetrics_")], "no hooks to document"
    assert f"::: {GEN.HOOKS_MODULE}" in PAGES[GEN.HOOKS_PAGE]


@pytest.mark.parametrize(("slug", "title", "module"), GEN.API_MODULES)
def test_every_api_module_exists_and_has_its_page(slug: str, title: str, module: str) -> None:
    importlib.import_module(module)
    assert PAGES[f"{GEN.API_DIR}/{slug}.md"].count(f"::: {module}") == 1


def test_every_generated_and_hand_written_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for path in [GEN.OPTIONS_PAGE, GEN.METRICS_PAGE, GEN.CLI_PAGE, GEN.HOOKS_PAGE]:
        assert f": {path}" in config, path
    assert "Python API: GENERATED" in config
    for page in (ROOT / "docs").rglob("*.md"):
        name = page.relative_to(ROOT / "docs").as_posix()
        assert f": {name}" in config, f"{name} is not in the nav of mkdocs.yml"


# --- docstrings: the public functions the API pages show carry Args:/Returns: --------------------------------------

def _documented_modules() -> list[str]:
    import pytest_ocrmetrics.metrics as metrics

    names = [f"pytest_ocrmetrics.metrics.{info.name}" for info in pkgutil.iter_modules(metrics.__path__)]
    return sorted([*names, "pytest_ocrmetrics.assertions", "pytest_ocrmetrics.evaluator",
                   "pytest_ocrmetrics.engines.base"])


def _public_functions(module_name: str) -> list[tuple[str, object]]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
    return [(n, getattr(module, n)) for n in names
            if inspect.isfunction(getattr(module, n, None)) and getattr(module, n).__module__ == module_name]


@pytest.mark.parametrize("module_name", _documented_modules())
def test_public_functions_have_args_and_returns_sections(module_name: str) -> None:
    missing = []
    for name, function in _public_functions(module_name):
        doc = inspect.getdoc(function) or ""
        signature = inspect.signature(function)
        parameters = [p for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        returns_something = signature.return_annotation not in (None, "None")
        if (parameters and "Args:" not in doc) or (returns_something and "Returns:" not in doc):
            missing.append(name)
    assert not missing, f"{module_name}: no Args:/Returns: section in {', '.join(missing)}"


def test_doctest_examples_become_code_blocks_on_the_site() -> None:
    spec = importlib.util.spec_from_file_location("doctest_fences", ROOT / "docs" / "_gen" / "doctest_fences.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "What it does.\n\n    >>> f(x)[0][1]\n    2\n\nAfter.\n\n```\n>>> left alone\n```"
    assert module.fence_doctests(text) == (
        "What it does.\n\n\n    ```pycon\n    >>> f(x)[0][1]\n    2\n    ```\n\n\nAfter.\n\n```\n>>> left alone\n```")
