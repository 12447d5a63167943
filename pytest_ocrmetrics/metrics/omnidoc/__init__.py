"""PLACEHOLDER for the OmniDocBench metric core (issue 22, item 2), written by the plugin branch only so that the
dataset, scoring hook and reports can be built and tested. The branch ``feat/omnidoc-core`` owns this package and
replaces this file when merged: the interface below is the agreed one, the numbers are NOT the benchmark's.

The placeholder scores each element kind with one naive normalized edit distance of the whole page's ground truth of
that kind against the whole prediction (no Markdown segmentation, no block matching, no TEDS: ``table_teds`` is
``1 - table_edit``). A prediction equal to that ground truth scores 0 / 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["OMNIDOC_METRICS", "BlockMatch", "PageScores", "score_page", "page_has"]

_PLACEHOLDER = True  # tests use this to skip the benchmark-exact assertions until the real core lands

OMNIDOC_METRICS = ("text_block_edit", "reading_order_edit", "table_edit", "table_teds", "table_teds_s",
                   "formula_edit")

_TEXT_CATEGORIES = frozenset({"text_block", "title", "code_txt", "code_txt_caption", "reference", "equation_caption",
                              "text_mask", "list", "abstract"})
_TABLE_CATEGORIES = frozenset({"table"})
_FORMULA_CATEGORIES = frozenset({"equation_isolated"})


@dataclass(frozen=True)
class BlockMatch:
    """One ground-truth block (or merged group) matched to a piece of the prediction."""

    category: str
    ground_truth: str
    prediction: str
    edit: float
    teds: float | None = None
    teds_s: float | None = None


@dataclass(frozen=True)
class PageScores:
    """One page's scores; None where the page has no such element."""

    text_block_edit: float | None
    reading_order_edit: float | None
    table_edit: float | None
    table_teds: float | None
    table_teds_s: float | None
    formula_edit: float | None
    matches: tuple[BlockMatch, ...]

    def as_dict(self) -> dict[str, float | None]:
        """The six metrics by name."""
        return {name: getattr(self, name) for name in OMNIDOC_METRICS}


def _blocks(page: Mapping[str, Any], categories: frozenset[str]) -> list[str]:
    dets = [d for d in page.get("layout_dets") or () if isinstance(d, Mapping)
            and d.get("category_type") in categories and not d.get("ignore")]
    dets.sort(key=lambda d: float(d["order"]) if isinstance(d.get("order"), (int, float)) else 1e9)
    out = []
    for det in dets:
        value = det.get("html") or det.get("latex") or det.get("text") or ""
        out.append(str(value))
    return out


def page_has(page: Mapping[str, Any]) -> set[str]:
    """The metric names this page has elements for."""
    has: set[str] = set()
    if _blocks(page, _TEXT_CATEGORIES):
        has |= {"text_block_edit", "reading_order_edit"}
    if _blocks(page, _TABLE_CATEGORIES):
        has |= {"table_edit", "table_teds", "table_teds_s"}
    if _blocks(page, _FORMULA_CATEGORIES):
        has.add("formula_edit")
    return has


def _edit(a: str, b: str) -> float:
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_distance(a, b))


def score_page(page: Mapping[str, Any], prediction: str) -> PageScores:
    """Naive placeholder scores of ``prediction`` (Markdown) against one OmniDocBench page."""
    has = page_has(page)
    matches = []
    values: dict[str, float | None] = dict.fromkeys(OMNIDOC_METRICS)
    for category, names, cats in (("text_block", ("text_block_edit", "reading_order_edit"), _TEXT_CATEGORIES),
                                  ("table", ("table_edit",), _TABLE_CATEGORIES),
                                  ("equation_isolated", ("formula_edit",), _FORMULA_CATEGORIES)):
        if names[0] not in has:
            continue
        truth = "\n\n".join(_blocks(page, cats))
        edit = _edit(truth, prediction)
        for name in names:
            values[name] = edit
        if category == "table":
            values["table_teds"] = values["table_teds_s"] = 1.0 - edit
            matches.append(BlockMatch(category, truth, prediction, edit, 1.0 - edit, 1.0 - edit))
        else:
            matches.append(BlockMatch(category, truth, prediction, edit))
    return PageScores(**values, matches=tuple(matches))  # type: ignore[arg-type]
