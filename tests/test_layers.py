"""The package's import contract: layers follow the data's path, and only the plugin imports pytest.

Every ``import`` in the package (module level or inside a function: a lazy import is still a dependency) is read with
``ast``; a module may import its own layer or a lower one, never a higher one. The layers, low to high::

    core -> metrics -> datasets -> engines -> scoring -> runfile, assertions -> gating -> reporting
         -> front ends: plugin (the only importer of pytest), cli, evaluator (cli may import evaluator)

Drawn in the README's "Developing" section; change both together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_ocrmetrics"

#: layer of each top-level part of the package; a module imports only parts of its own rank or lower
LAYERS: dict[str, int] = {
    "core": 0, "metrics": 1, "datasets": 2, "engines": 3, "scoring": 4, "runfile": 5, "assertions": 5,
    "gating": 6, "reporting": 7, "plugin": 8, "evaluator": 8, "cli": 9,
}
#: front ends that must not import each other (cli may use the evaluator, the evaluator's page and the plugin nothing)
FRONT_ENDS = {"plugin", "evaluator"}
PYTEST_MODULES = {"pytest", "_pytest", "xdist", "pluggy"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in ``path``; ``from package import module`` names the module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            if node.module.startswith("pytest_ocrmetrics"):
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _part(dotted: str) -> str | None:
    """The top-level part of the package ``dotted`` belongs to (``None`` for the package root itself)."""
    parts = dotted.split(".")
    return parts[1] if parts[0] == "pytest_ocrmetrics" and len(parts) > 1 else None


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {_part(_module_name(path)) for path in _modules()} - {None}
    assert parts <= set(LAYERS), f"give these a layer in LAYERS (and the README's drawing): {sorted(parts - set(LAYERS))}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_imports_follow_the_layers(path: Path) -> None:
    source = _part(_module_name(path))
    if source is None:  # the package root re-exports the public API lazily; it may name any layer
        return
    problems = []
    for line, target in _imports(path):
        top = target.split(".")[0]
        if top in PYTEST_MODULES and source != "plugin":
            problems.append(f"line {line}: imports {target} (only the plugin may import pytest)")
        part = _part(target)
        if part is None or part == source or part not in LAYERS:
            continue
        if LAYERS[part] > LAYERS[source] or (part in FRONT_ENDS and source in FRONT_ENDS):
            problems.append(f"line {line}: {source} (layer {LAYERS[source]}) imports upward into {target} "
                            f"(layer {LAYERS[part]})")
    assert not problems, "\n".join(problems)
