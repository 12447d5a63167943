"""The ``assert_<metric>_below`` / ``assert_<metric>_above`` helpers are real functions, one per registry metric.

They used to be written into the module's ``globals()`` in a loop, which type checkers and IDEs cannot see. Now
``pytest_ocrmetrics/assertions.py`` holds them as written source between two marker lines; these tests check that
block against the metric registry (a metric added, renamed or re-described without its helper fails here).
Run ``python tests/test_assertion_helpers.py`` to rewrite the block from the registry.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ASSERTIONS = ROOT / "pytest_ocrmetrics" / "assertions.py"
BEGIN = ("# ---- generated from the metric registry by `python tests/test_assertion_helpers.py`; "
         "do not edit by hand ----")
END = "# ---- end of the generated helpers ----"


def _split(source: str) -> tuple[str, str, str]:
    """(what comes before the block, the block between the markers, what comes after)."""
    if BEGIN not in source or END not in source:
        raise AssertionError(f"{ASSERTIONS} has lost its marker lines:\n{BEGIN}\n{END}")
    head, rest = source.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    return head, block, tail


def _helper_name(metric: str, lower_is_better: bool) -> str:
    return f"assert_{metric}_{'below' if lower_is_better else 'above'}"


def render_block(handwritten: set[str]) -> str:
    """The generated block for the registry as it is: one function per metric whose helper is not written by hand
    (``handwritten``: the functions defined above the block), then their names added to ``__all__``."""
    from pytest_ocrmetrics.metrics.registry import METRICS

    functions, names = [], []
    for metric, spec in METRICS.items():
        name = _helper_name(metric, spec.lower_is_better)
        if name in handwritten:
            continue
        bound = "at most" if spec.lower_is_better else "at least"
        doc = textwrap.fill(f'"""Assert {spec.description} is {bound} ``limit``.', width=116,
                            initial_indent="    ", subsequent_indent="    ", break_long_words=False,
                            break_on_hyphens=False)
        doc += ("\n\n    Args:\n"
                "        result: an ``ocr_score``, an ``ocr_output`` or a string (with ``reference=``).\n"
                "        limit: the limit (a fraction or a percentage such as ``\"5%\"``); ``None``: the document's own.\n"
                "        **kwargs: ``reference=`` and ``document=``, as for :func:`assert_metric`.\n\n"
                "    Returns:\n"
                f"        The value of ``{metric}``.\n"
                '    """')
        functions.append(
            f"def {name}(result: Any, limit: float | str | None = None, **kwargs: Any) -> float:\n"
            f"{doc}\n"
            "    __tracebackhide__ = True\n"
            f"    return assert_metric(result, {metric!r}, limit, **kwargs)\n"
        )
        names.append(name)
    listed = "".join(f'    "{name}",\n' for name in names)
    return "\n\n" + "\n\n".join(functions) + f"\n\n__all__ += [\n{listed}]\n"


def _handwritten(head: str) -> set[str]:
    return {node.name for node in ast.parse(head).body if isinstance(node, ast.FunctionDef)}


def test_the_generated_block_matches_the_registry() -> None:
    head, block, _ = _split(ASSERTIONS.read_text(encoding="utf-8"))
    expected = render_block(_handwritten(head))
    assert block == expected, (
        "pytest_ocrmetrics/assertions.py's generated helpers differ from the metric registry; "
        "run `python tests/test_assertion_helpers.py` to rewrite them"
    )


def test_every_metric_has_a_statically_defined_exported_helper() -> None:
    """Each registry metric's helper is a ``def`` in the module's source (what a type checker reads) and in
    ``__all__``, and it checks that metric."""
    from pytest_ocrmetrics import assertions
    from pytest_ocrmetrics.metrics.registry import METRICS

    tree = ast.parse(ASSERTIONS.read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "globals"], "no globals() writes"
    for metric, spec in METRICS.items():
        name = _helper_name(metric, spec.lower_is_better)
        assert name in defined, name
        assert name in assertions.__all__, name
        helper = getattr(assertions, name)
        assert helper.__name__ == name
        assert helper.__module__ == "pytest_ocrmetrics.assertions"
        assert spec.description.split()[0] in (helper.__doc__ or ""), name
        assert list(inspect.signature(helper).parameters)[0] == "result", name


def test_a_generated_helper_checks_its_metric_in_its_direction() -> None:
    from pytest_ocrmetrics.assertions import assert_bow_f1_above, assert_ser_below

    assert assert_bow_f1_above("INVOICE 12345", 0.9, reference="INVOICE 12345") == 1.0
    with pytest.raises(AssertionError, match=r"bow_f1 = 0\.5, must be >= 0\.9"):
        assert_bow_f1_above("INVOICE 99", 0.9, reference="INVOICE 12345")
    assert assert_ser_below("same", 0.0, reference="same") == 0.0
    with pytest.raises(AssertionError, match=r"ser = 1, must be <= 0"):
        assert_ser_below("other", 0.0, reference="same")


def test_a_generated_helper_is_importable_from_the_package_root() -> None:
    import pytest_ocrmetrics
    from pytest_ocrmetrics import assertions

    assert pytest_ocrmetrics.assert_crr_above is assertions.assert_crr_above


def _rewrite() -> None:
    """Rewrite the generated block of ``assertions.py`` from the registry (the code must import)."""
    sys.path.insert(0, str(ROOT))
    source = ASSERTIONS.read_text(encoding="utf-8")
    head, _, tail = _split(source)
    ASSERTIONS.write_text(head + BEGIN + render_block(_handwritten(head)) + END + tail, encoding="utf-8")
    print(f"rewrote the generated helpers of {ASSERTIONS}")


if __name__ == "__main__":
    _rewrite()
