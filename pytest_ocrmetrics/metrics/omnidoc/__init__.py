"""OmniDocBench's end-to-end page scores, one page at a time: text blocks, reading order, tables, display formulas.

The model writes a page as Markdown; :func:`score_page` cuts it into blocks (:mod:`.segment`), normalises each
category (:mod:`.normalize`), matches predicted to ground-truth blocks as the benchmark's "quick match" does
(:mod:`.match`; tables by a Hungarian assignment on their HTML) and returns the benchmark's six page numbers:

- ``text_block_edit``: over the page's matched text blocks (ignored categories excluded), the sum of edit distances
  of the normalised texts over the sum of ``max(len(gt), len(pred))``; lower is better.
- ``reading_order_edit``: the edit distance between the ground-truth order of the matched text blocks and the order
  in which the prediction gives them, over the longer sequence; lower is better.
- ``table_edit``: as ``text_block_edit``, on the normalised HTML of the page's tables; lower is better.
- ``table_teds`` / ``table_teds_s``: the mean TEDS / structure-only TEDS over the page's tables; higher is better.
- ``formula_edit``: as ``text_block_edit``, on the normalised LaTeX of the page's display formulas; lower is better.

A page whose ground truth has no such element has ``None`` for that metric (not 0). The benchmark's leaderboard
numbers are the mean of the page values for the four edit distances, and the mean over all *tables* for TEDS and
TEDS-S (:func:`leaderboard_means` computes both from a list of :class:`PageScores`).

Knowing differences from the benchmark's code are listed in ``docs/explanation/omnidocbench.md``.

Example:
    >>> page = {"page_info": {"image_path": "p.jpg"}, "extra": {"relation": []},
    ...         "layout_dets": [{"category_type": "text_block", "order": 1, "anno_id": 0, "text": "Hello world"}]}
    >>> score_page(page, "Hello world").text_block_edit
    0.0
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein

from pytest_ocrmetrics.metrics.omnidoc.match import (
    IGNORED_CATEGORIES,
    TEXT_CATEGORIES,
    Pair,
    quick_match,
    simple_match,
)
from pytest_ocrmetrics.metrics.omnidoc.normalize import (
    clean_text,
    latex_to_unicode,
    normalize_html_table,
)
from pytest_ocrmetrics.metrics.omnidoc.segment import (
    FORMULA,
    HTML_TABLE,
    LATEX_TABLE,
    TEXT,
    PredictedBlock,
    segment_markdown,
)
from pytest_ocrmetrics.metrics.omnidoc.teds import TableTooLargeError, teds_pair

__all__ = [
    "OMNIDOC_METRICS",
    "BlockMatch",
    "OmniDocInputError",
    "PageScores",
    "TableTooLargeError",
    "leaderboard_means",
    "missing_modules",
    "page_has",
    "score_page",
]

OMNIDOC_METRICS = ("text_block_edit", "reading_order_edit", "table_edit", "table_teds", "table_teds_s",
                   "formula_edit")

# the longest prediction scored; OmniDocBench pages are a few thousand characters, a runaway model may write megabytes
MAX_PREDICTION_CHARS = 1_000_000

_MIX_CATEGORIES = (*TEXT_CATEGORIES, "equation_isolated")
_TABLE_CELL_NOISE = re.compile(r"\$\\cdot\$")


class OmniDocInputError(ValueError):
    """A page or prediction the scorer refuses (malformed ground truth, a runaway prediction); one sentence."""


@dataclass(frozen=True)
class BlockMatch:
    """One matched (or unmatched) ground-truth/prediction pair.

    Attributes:
        category: ``"text"``, ``"table"``, ``"formula"``, or the ground-truth category of an ignored block
            (``"header"``, ``"page_number"``, …; those count in no metric).
        ground_truth: the normalised ground-truth text (``""`` when only predicted).
        prediction: the normalised prediction text (``""`` when missing).
        edit: the normalised edit distance of this pair.
        teds: the table's TEDS (tables only).
        teds_s: the table's structure-only TEDS (tables only).
    """

    category: str
    ground_truth: str
    prediction: str
    edit: float
    teds: float | None = None
    teds_s: float | None = None


@dataclass(frozen=True)
class PageScores:
    """The benchmark's six numbers for one page, and the block matches they come from.

    ``None`` means the page has no such element (the benchmark leaves the page out of that metric's mean).
    """

    text_block_edit: float | None
    reading_order_edit: float | None
    table_edit: float | None
    table_teds: float | None
    table_teds_s: float | None
    formula_edit: float | None
    matches: tuple[BlockMatch, ...]

    def as_dict(self) -> dict[str, float | None]:
        """The six metrics by name.

        Returns:
            ``{name: value or None}`` in :data:`OMNIDOC_METRICS` order.
        """
        return {name: getattr(self, name) for name in OMNIDOC_METRICS}


@dataclass
class _Sample:
    """One compared pair as the benchmark's edit metric sees it: raw and normalised sides."""

    gt: str
    pred: str
    norm_gt: str
    norm_pred: str

    def sides(self) -> tuple[str, str]:
        return self.norm_gt or self.gt, self.norm_pred or self.pred

    def counts(self) -> tuple[int, int] | None:
        gt, pred = self.sides()
        if not gt and not pred:
            return None
        return Levenshtein.distance(pred, gt), max(len(gt), len(pred))

    def edit(self) -> float:
        counts = self.counts()
        return counts[0] / counts[1] if counts else 0.0


def _page_edit(samples: Iterable[_Sample]) -> float | None:
    edits = upper = 0
    seen = False
    for sample in samples:
        counts = sample.counts()
        if counts is None:
            continue
        seen = True
        edits += counts[0]
        upper += counts[1]
    if not seen or upper == 0:
        return None
    return edits / upper


def _merge_truncated(page: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The page's blocks by category; blocks linked by ``truncated`` relations joined into one (benchmark rule)."""
    groups: list[list[Any]] = []
    truncated: dict[Any, Any] = {}
    extra = page.get("extra")
    for relation in (extra.get("relation") if isinstance(extra, Mapping) else None) or []:
        if not isinstance(relation, Mapping) or relation.get("relation_type") != "truncated":
            continue
        source, target = relation.get("source_anno_id"), relation.get("target_anno_id")
        if source is None or target is None:
            continue
        truncated[source] = truncated[target] = None
        joined = False
        for group in groups:
            if source in group or target in group:
                group.extend((source, target))
                joined = True
        if not joined:
            groups.append([source, target])
    by_category: dict[str, list[dict[str, Any]]] = {}
    for item in page["layout_dets"]:
        if item.get("anno_id") in truncated:
            truncated[item["anno_id"]] = item
        else:
            by_category.setdefault(item["category_type"], []).append(item)
    for group in groups:
        blocks = [truncated[key] for key in group if truncated.get(key) is not None]
        if not blocks:
            continue
        blocks.sort(key=lambda block: block.get("order") or 0)
        first = blocks[0]
        by_category.setdefault(first["category_type"], []).append({
            "category_type": first["category_type"], "order": first.get("order"), "anno_id": first.get("anno_id"),
            "text": "".join(str(block.get("text", "")) for block in blocks), "merge_list": blocks})
    return by_category


def _by_order(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: item.get("order") or 0)


def _table_cells(block: PredictedBlock) -> list[PredictedBlock]:
    """An unmatched predicted table's single-string cells, as text blocks for the text match (benchmark rule)."""
    from bs4 import BeautifulSoup  # type: ignore[import-untyped,import-not-found,unused-ignore]

    cells = []
    for cell in BeautifulSoup(block.content, "html.parser").find_all("td"):
        if cell.string:
            cells.append(PredictedBlock(TEXT, block.position, _TABLE_CELL_NOISE.sub("", cell.string).strip(),
                                        block.fine))
    return cells


_EXTRA_MODULES = ("apted", "lxml", "pylatexenc", "scipy", "bs4", "numpy")


def missing_modules() -> list[str]:
    """The modules of the ``omnidoc`` extra that cannot be imported here (empty when the extra is installed).

    Returns:
        Their import names, e.g. ``["apted"]``.
    """
    from importlib.util import find_spec

    return [name for name in _EXTRA_MODULES if find_spec(name) is None]


def _check(page: Mapping[str, Any], prediction: str) -> None:
    missing = missing_modules()
    if missing:
        raise OmniDocInputError(f"OmniDocBench scores need the omnidoc extra (missing: {', '.join(missing)}); "
                                "install it with: pip install 'pytest-ocrmetrics[omnidoc]'.")
    if not isinstance(prediction, str):
        raise OmniDocInputError(f"the prediction must be text, not {type(prediction).__name__}.")
    if len(prediction) > MAX_PREDICTION_CHARS:
        raise OmniDocInputError(f"the prediction has {len(prediction):,} characters, more than the "
                                f"{MAX_PREDICTION_CHARS:,} an OmniDocBench page is scored on.")
    if not isinstance(page, Mapping) or not isinstance(page.get("layout_dets"), list):
        raise OmniDocInputError("the ground-truth page has no 'layout_dets' list, so it is not an OmniDocBench page.")
    for number, item in enumerate(page["layout_dets"]):
        if not isinstance(item, Mapping) or not isinstance(item.get("category_type"), str):
            raise OmniDocInputError(f"layout_dets[{number}] of the ground-truth page has no 'category_type'.")
        category = item["category_type"]
        key = "text" if category in TEXT_CATEGORIES else "latex" if category == "equation_isolated" else None
        if key and not isinstance(item.get(key), str):
            raise OmniDocInputError(f"layout_dets[{number}] ({category}) of the ground-truth page has no '{key}' text.")
        order = item.get("order")
        if order is not None and (isinstance(order, bool) or not isinstance(order, (int, float))):
            raise OmniDocInputError(f"layout_dets[{number}] of the ground-truth page has a non-numeric 'order' "
                                    f"({order!r}).")


def _score_tables(gt_tables: list[dict[str, Any]], blocks: list[PredictedBlock]
                  ) -> tuple[list[tuple[_Sample, float, float]], list[PredictedBlock]]:
    """Tables: each ground-truth table with its assigned prediction, and the unmatched predictions' cells."""
    html_tables = [b for b in blocks if b.category == HTML_TABLE]
    latex_tables = [b for b in blocks if b.category == LATEX_TABLE]
    gt_html = [str(item.get("html", "")) for item in gt_tables]
    gt_html = [h for h in gt_html if h]
    if not gt_html:
        return [], []
    pairs: list[tuple[str, str]] = []
    leftovers: list[PredictedBlock] = []
    if len(latex_tables) > len(html_tables) or not html_tables:
        # LaTeX tables: the benchmark converts them with LaTeXML only in its table task; end to end they score as
        # missing tables, like no table at all
        pairs = [(h, "") for h in gt_html]
    else:
        assignment, unmatched = simple_match(gt_html, [b.content for b in html_tables])
        pairs = [(gt_html[g], html_tables[p].content if p is not None else "") for g, p, _ in assignment]
        for p in unmatched:
            leftovers.extend(_table_cells(html_tables[p]))
    scored = []
    for gt, pred in pairs:
        sample = _Sample(gt, pred, normalize_html_table(gt), normalize_html_table(pred) if pred else "")
        gt_side, pred_side = sample.sides()
        teds, teds_s = teds_pair(pred_side, gt_side)
        scored.append((sample, teds, teds_s))
    return scored, leftovers


def _reading_order(pairs: list[Pair]) -> float | None:
    matched = [(p.gt_position, p.pred_position) for p in pairs
               if p.gt_position != [""] and p.pred_position is not None]
    gt_all = [p.gt_position for p in pairs if p.gt_position != [""]]
    predicted = [position for gt_position, _ in sorted(matched, key=lambda m: m[1]) for position in gt_position]
    predicted = [x for x in predicted if x]
    truth = sorted(x for positions in gt_all for x in positions if x)
    if not predicted and not truth:
        return None
    return Levenshtein.distance(truth, predicted) / max(len(predicted), len(truth))


def score_page(page: Mapping[str, Any], prediction: str) -> PageScores:
    """Score one page's Markdown against its OmniDocBench ground truth, as the benchmark's end-to-end evaluation does.

    Args:
        page: one OmniDocBench ground-truth page dict (``page_info``, ``layout_dets``, ``extra``).
        prediction: the model's Markdown for the page.

    Returns:
        The six page numbers (``None`` where the page has no such element) and the block matches.

    Raises:
        OmniDocInputError: the page is not an OmniDocBench page, or the prediction is not text or is over
            :data:`MAX_PREDICTION_CHARS` characters.
        TableTooLargeError: a table is too large or too deeply nested for the tree edit distance.
    """
    _check(page, prediction)
    elements = _merge_truncated(page)
    blocks = segment_markdown(prediction)
    mix = _mixed_blocks(blocks)
    tables: list[tuple[_Sample, float, float]] = []
    if elements.get("table"):
        tables, leftovers = _score_tables(_by_order(elements["table"]), blocks)
        mix.extend(leftovers)
    gt_mix = _by_order([item for category in _MIX_CATEGORIES for item in elements.get(category, [])])
    pairs = [p for p in quick_match(gt_mix, mix) if p.complete]
    text_pairs = [p for p in pairs if p.gt_category in TEXT_CATEGORIES and p.gt_category not in IGNORED_CATEGORIES]
    text_samples = [_Sample(p.gt, p.pred, p.norm_gt, p.norm_pred) for p in text_pairs]
    matches = [BlockMatch("text", s.norm_gt, s.norm_pred, s.edit()) for s in text_samples]
    formula_samples = _formula_samples(pairs, text_samples, matches)
    for sample, teds, teds_s in tables:
        matches.append(BlockMatch("table", sample.norm_gt, sample.norm_pred, sample.edit(), teds, teds_s))
    matches += _ignored_and_extra_matches(pairs)
    return PageScores(
        text_block_edit=_page_edit(text_samples),
        reading_order_edit=_reading_order(text_pairs) if text_pairs else None,
        table_edit=_page_edit(sample for sample, _, _ in tables),
        table_teds=sum(t for _, t, _ in tables) / len(tables) if tables else None,
        table_teds_s=sum(t for _, _, t in tables) / len(tables) if tables else None,
        formula_edit=_page_edit(formula_samples),
        matches=tuple(matches),
    )


def _mixed_blocks(blocks: Iterable[PredictedBlock]) -> list[PredictedBlock]:
    """The predicted text blocks, then the predicted display formulas (the benchmark's mixed candidates)."""
    by_category: dict[str, list[PredictedBlock]] = {}
    for block in blocks:
        if block.category in (TEXT, FORMULA):
            by_category.setdefault(block.category, []).append(block)
    return [block for group in by_category.values() for block in group]


def _formula_samples(pairs: Sequence[Any], text_samples: list[_Sample], matches: list[BlockMatch]) -> list[_Sample]:
    """The matched display formulas as samples; a formula the model wrote as text is compared as text (the
    benchmark's rule) and goes to ``text_samples``. Each adds its :class:`BlockMatch` to ``matches``."""
    formula_samples: list[_Sample] = []
    for pair in (p for p in pairs if p.gt_category == "equation_isolated" and p.gt_idx):
        if pair.pred_category not in ("equation_inline", "equation_isolated", ""):
            try:
                as_text = latex_to_unicode(pair.gt)
            except Exception:  # noqa: BLE001 - the benchmark keeps a formula pylatexenc cannot render
                as_text = pair.gt
            sample = _Sample(as_text, pair.pred, clean_text(as_text), pair.norm_pred)
            text_samples.append(sample)
            matches.append(BlockMatch("text", sample.norm_gt, sample.norm_pred, sample.edit()))
        else:
            sample = _Sample(pair.gt, pair.pred, pair.norm_gt, pair.norm_pred)
            formula_samples.append(sample)
            matches.append(BlockMatch("formula", sample.norm_gt, sample.norm_pred, sample.edit()))
    return formula_samples


def _ignored_and_extra_matches(pairs: Iterable[Any]) -> list[BlockMatch]:
    """Matches of ignored ground-truth blocks (headers, footers, ...) and predicted blocks with no ground truth."""
    matches: list[BlockMatch] = []
    for pair in pairs:
        if pair.gt_category in IGNORED_CATEGORIES:
            sample = _Sample(pair.gt, pair.pred, pair.norm_gt, pair.norm_pred)
            matches.append(BlockMatch(pair.gt_category, pair.norm_gt, pair.norm_pred, sample.edit()))
        elif not pair.gt_idx and pair.pred_idx:
            kind = "formula" if "equation" in pair.pred_category else "text"
            matches.append(BlockMatch(kind, "", pair.norm_pred, 1.0))
    return matches


def page_has(page: Mapping[str, Any]) -> set[str]:
    """Which of the six metrics the page's ground truth can have a value for.

    Args:
        page: one OmniDocBench ground-truth page dict.

    Returns:
        A subset of :data:`OMNIDOC_METRICS`: the text and reading-order metrics when the page has a non-ignored text
        block, the table metrics when it has a table with HTML, ``formula_edit`` when it has a display formula.
    """
    has: set[str] = set()
    for item in page.get("layout_dets") or []:
        category = item.get("category_type")
        if category in TEXT_CATEGORIES and category not in IGNORED_CATEGORIES and str(item.get("text", "")).strip():
            has.update(("text_block_edit", "reading_order_edit"))
        elif category == "table" and item.get("html"):
            has.update(("table_edit", "table_teds", "table_teds_s"))
        elif category == "equation_isolated" and item.get("latex"):
            has.add("formula_edit")
    return has


def leaderboard_means(pages: Iterable[PageScores]) -> dict[str, float | None]:
    """The benchmark's leaderboard numbers over pages: edit distances averaged over pages, TEDS over all tables.

    Args:
        pages: the pages' scores.

    Returns:
        ``{metric: mean or None}`` for the six metrics (``None`` when no page has that element).
    """
    pages = list(pages)
    out: dict[str, float | None] = {}
    for name in ("text_block_edit", "reading_order_edit", "table_edit", "formula_edit"):
        values = [v for v in (getattr(p, name) for p in pages) if v is not None]
        out[name] = sum(values) / len(values) if values else None
    for name, attribute in (("table_teds", "teds"), ("table_teds_s", "teds_s")):
        values = [getattr(m, attribute) for p in pages for m in p.matches if m.category == "table"]
        out[name] = sum(values) / len(values) if values else None
    return out
