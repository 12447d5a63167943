"""OmniDocBench's "quick match" of predicted blocks to ground-truth blocks, and its simple (Hungarian) table match.

The rules are the benchmark's (``utils/match_quick.py``, ``utils/match.py``), restated:

1. Ground-truth and predicted lines are normalised per category (:mod:`.normalize`); lines whose raw or normalised text
   is empty are dropped. The benchmark then looks blocks' order and kind up by the position in the list *before*
   that drop; this is kept, since the reading order depends on it.
2. Ground-truth blocks of the ignored categories (captions, footnotes, headers, footers, page numbers, algorithm code)
   take every prediction within normalised edit distance 0.25 of them out of the match.
3. For the others: a first edit-distance matrix; a ground-truth block with no prediction under 0.25 may take a run of
   consecutive predictions (a block the model split), judged by substring distance; the runs chosen are joined and the
   matrix rebuilt; the Hungarian assignment pairs blocks; pairs over 0.7 are undone; an unpaired ground-truth block
   whose text appears (substring distance under 0.4) inside a prediction joins that prediction (blocks the model
   merged); what remains unpaired is paired by a second Hungarian assignment, scored 1.
"""

from __future__ import annotations

import re
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from pytest_ocrmetrics.metrics.omnidoc.normalize import (
    normalize_formula,
    normalize_text_block,
)
from pytest_ocrmetrics.metrics.omnidoc.segment import FORMULA, TEXT, PredictedBlock

if TYPE_CHECKING:
    import numpy as np

TEXT_CATEGORIES = (
    "text_block", "title", "code_txt", "code_txt_caption", "reference", "equation_caption", "figure_caption",
    "figure_footnote", "table_caption", "table_footnote", "code_algorithm", "code_algorithm_caption", "header",
    "footer", "page_footnote", "page_number",
)
IGNORED_CATEGORIES = (
    "figure_caption", "figure_footnote", "table_caption", "table_footnote", "code_algorithm",
    "code_algorithm_caption", "header", "footer", "page_footnote", "page_number", "equation_caption",
)

_ARRAY = re.compile(r"\\begin\{array\}\{(?P<spec>[^}]*)\}(?P<body>.*?)\\end\{array\}", re.DOTALL)
_ARRAY_ROW = re.compile(r"\\\\")


@dataclass
class Pair:
    """One entry of the match: ground-truth block(s) and prediction(s), by index into the matcher's kept lines.

    ``gt_idx``/``pred_idx`` are empty for an unpaired side; ``gt_position`` holds the ground-truth ``order`` of each
    block and ``pred_position`` the first prediction's offset (``None`` when none); ``edit`` is the benchmark's pair
    distance (the scores recompute theirs from the ``norm_*`` strings, as the benchmark does).
    """

    gt_idx: list[int]
    pred_idx: list[int]
    gt: str = ""
    pred: str = ""
    norm_gt: str = ""
    norm_pred: str = ""
    gt_category: str = ""
    pred_category: str = ""
    gt_position: list[Any] = field(default_factory=list)
    pred_position: int | None = None
    edit: float = 1.0
    complete: bool = True  # False: the benchmark's loop skipped this entry (it then counts nowhere)


def _edit_matrix(rows: list[str], cols: list[str]) -> np.ndarray:
    """Normalised edit distances ``d / max(len)``; exactly the benchmark's doubles (integer distances divided)."""
    import numpy as np

    if not rows or not cols:
        return np.zeros((len(rows), len(cols)))
    distances = cdist(rows, cols, scorer=Levenshtein.distance, dtype=np.int64, workers=1)
    longest = np.maximum.outer(np.array([len(r) for r in rows]), np.array([len(c) for c in cols]))
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix: np.ndarray = distances / longest
    matrix[longest == 0] = 0.0
    return matrix


def _ratio(a: str, b: str) -> float:
    return Levenshtein.distance(a, b) / max(len(a), len(b))


# The split/merge search compares every window of one block with another: on a runaway prediction (one paragraph of
# a megabyte, or a hundred thousand tiny ones) that is hours. The benchmark stops the quick match after 30 s of wall
# time and falls back to its simple match; this budget does the same deterministically, counted in 64-bit words of
# rapidfuzz's bit-parallel Levenshtein (plus a fixed cost per call). Real pages use well under a thousandth of it.
WINDOW_BUDGET = 400_000_000
_budget: ContextVar[list[int]] = ContextVar("omnidoc_window_budget")


class _OverBudget(Exception):
    """The quick match would take too long: fall back to the simple match."""


@lru_cache(maxsize=8192)
def _window_distance(long: str, short: str) -> float:
    """The smallest ``d(window, short) / len(short)`` over the windows of ``long`` as long as ``short``.

    Each window's distance is computed only below the best so far (rapidfuzz's ``score_cutoff``), which returns the
    same minimum; results are cached, since the split-block search asks for the same pairs again and again.
    """
    size = len(short)
    windows = len(long) - size + 1
    remaining = _budget.get(None)
    if remaining is not None:
        remaining[0] -= windows * size * (size // 64 + 1) + 64
        if remaining[0] < 0:
            raise _OverBudget
    best = size + 1
    for start in range(windows):
        distance = Levenshtein.distance(long[start:start + size], short, score_cutoff=best - 1)
        if distance < best:
            best = distance
            if best == 0:
                break
    return best / size


def _pred_in_gt(gt: str, pred: str) -> float | None:
    if len(gt) >= len(pred) > 0:
        return _window_distance(gt, pred)
    return None


def _gt_in_pred(pred: str, gt: str) -> float:
    if len(pred) >= len(gt) > 0:
        return _window_distance(pred, gt)
    return 1.0


def split_array_formulas_gt(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ground-truth display formula that is a one-column ``array`` becomes one formula per row (order 7 -> 7.1, …).

    Args:
        items: ground-truth blocks.

    Returns:
        The blocks, each such formula replaced by its rows (``\\[row\\]``).
    """
    out: list[dict[str, Any]] = []
    for item in items:
        latex = item.get("latex", "")
        if item.get("category_type") == "equation_isolated" and "\\begin{array" in latex:
            match = _ARRAY.search(latex)
            if match and _single_column(match.group("spec")):
                rows = [row.strip() for row in _ARRAY_ROW.split(match.group("body")) if row.strip()]
                base = float(item.get("order") or 0)
                for number, row in enumerate(rows, start=1):
                    out.append({**item, "latex": f"\\[{row}\\]", "order": round(base + number / 10, 1)})
                continue
        out.append(item)
    return out


def _single_column(spec: str) -> bool:
    spec = re.sub(r"\s+|\|", "", spec)
    spec = re.sub(r"@{[^}]*}", "", spec)
    spec = re.sub(r"!{[^}]*}", "", spec)
    return spec in {"l", "c", "r"}


def split_array_formulas_pred(blocks: list[PredictedBlock]) -> list[PredictedBlock]:
    """A predicted one-column ``array`` formula becomes one ``\\[row\\]`` formula per row, at the row's offset.

    Args:
        blocks: predicted blocks.

    Returns:
        The blocks, each such formula replaced by its rows.
    """
    out: list[PredictedBlock] = []
    for block in blocks:
        if block.category == FORMULA and "\\begin{array" in block.content:
            match = _ARRAY.search(block.content)
            if match and _single_column(match.group("spec")):
                body = match.group("body")
                cursor = 0
                for row in (r.strip() for r in _ARRAY_ROW.split(body)):
                    if not row:
                        continue
                    found = body.find(row, cursor)
                    at = cursor if found == -1 else found
                    cursor = at + len(row)
                    out.append(PredictedBlock(block.category, block.position + match.start("body") + at,
                                              f"\\[{row.strip()}\\]", block.fine))
                continue
        out.append(block)
    return out


def _gt_line(item: dict[str, Any]) -> tuple[str, str] | None:
    category = item["category_type"]
    if category in TEXT_CATEGORIES:
        text = str(item["text"])
        return text, normalize_text_block(text)
    if category == "equation_isolated":
        latex = str(item["latex"])
        return latex, normalize_formula(latex)
    return None


def _pred_line(block: PredictedBlock) -> tuple[str, str]:
    if block.category == TEXT:
        return block.content, normalize_text_block(block.content)
    if block.category == FORMULA:
        return block.content, normalize_formula(block.content)
    return block.content, block.content


def _gt_order(item: dict[str, Any]) -> Any:
    return item.get("order") or item.get("position", [""])[0]


@dataclass
class _Lines:
    """The kept (non-empty) lines of one side, and the raw list the benchmark indexes by kept position."""

    raw: list[str]
    norm: list[str]
    categories: list[str]


def _majority_category(categories: list[str]) -> str:
    clean = [c for c in categories if c not in IGNORED_CATEGORIES]
    return Counter(clean or categories).most_common(1)[0][0]


def _pair_table(gt_norm: list[str], pred_norm: list[str], gt_all: set[int], pred_all: set[int],
                final: dict[tuple[int, ...], dict[str, Any]]) -> list[dict[str, Any]]:
    """The benchmark's conversion of the chosen matches to entries, leftovers paired by a second assignment."""
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped,import-not-found,unused-ignore]

    converted: list[dict[str, Any]] = []
    for key, info in final.items():
        pred_text = " ".join(pred_norm[p] for p in key)
        for gt_idx in sorted(set(info["gt_indices"])):
            converted.append({"gt_idx": int(gt_idx), "pred_idx": list(key), "edit": info["edit"],
                              "gt": gt_norm[gt_idx], "pred": pred_text})
    matched_gt = set().union(*[set(info["gt_indices"]) for info in final.values()])
    unmatched_gt = gt_all - matched_gt
    matched_pred = {p for key in final for p in key}
    unmatched_pred = pred_all - matched_pred
    if unmatched_pred:
        if unmatched_gt:
            gts, preds = list(unmatched_gt), list(unmatched_pred)
            matrix = [[_ratio(gt_norm[g], pred_norm[p]) for p in preds] for g in gts]
            rows, cols = linear_sum_assignment(matrix)
            for r, c in zip(rows, cols):
                converted.append({"gt_idx": int(gts[r]), "pred_idx": [preds[c]], "edit": 1,
                                  "gt": gt_norm[gts[r]], "pred": pred_norm[preds[c]]})
        else:
            converted.append({"gt_idx": "", "pred_idx": list(unmatched_pred), "edit": 1, "gt": "",
                              "pred": " ".join(pred_norm[p] for p in unmatched_pred)})
    else:
        for gt_idx in unmatched_gt:
            converted.append({"gt_idx": int(gt_idx), "pred_idx": "", "edit": 1, "gt": gt_norm[gt_idx], "pred": ""})
    return converted


def _merge_by_prediction(converted: list[dict[str, Any]], n_gt: int) -> list[dict[str, Any]]:
    """Entries sharing a prediction become one (ground truths in entry order); unpaired ground truths appended."""
    merged: list[dict[str, Any]] = []
    seen_pred: set[tuple[Any, ...]] = set()
    seen_gt: set[Any] = set()
    for entry in converted:
        key = tuple(entry["pred_idx"]) if isinstance(entry["pred_idx"], list) else (entry["pred_idx"],)
        if key in seen_pred or key == ("",):
            continue
        gts = [entry["gt_idx"]]
        for other in converted:
            other_key = tuple(other["pred_idx"]) if isinstance(other["pred_idx"], list) else (other["pred_idx"],)
            if other_key == key and other is not entry:
                gts.append(other["gt_idx"])
                seen_gt.add(other["gt_idx"])
        merged.append({"gt_idx": gts, "pred_idx": entry["pred_idx"], "edit": entry["edit"]})
        seen_pred.add(key)
        seen_gt.add(entry["gt_idx"])
    for gt_idx in range(n_gt):
        if gt_idx not in seen_gt:
            merged.append({"gt_idx": [gt_idx], "pred_idx": [""], "edit": 1})
    return merged


def _judge_run(gt: str, run: list[str], threshold: float = 0.6) -> tuple[bool, bool]:
    """Whether the last prediction of ``run`` belongs to the split block ``gt``, and whether to try one more."""
    if len(run) == 1:
        return False, False
    current, merged = " ".join(run[:-1]), " ".join(run)
    if _ratio(gt, merged) > _ratio(gt, current):
        return False, False
    for part in run[:-1]:
        distance = _pred_in_gt(gt, part)
        if distance is None or distance > threshold:
            return False, False
    added = _pred_in_gt(gt, run[-1])
    if added is None:
        return False, False
    return added < threshold, len(merged) <= len(gt)


def _final_runs(runs: list[list[int]], costs: list[float]) -> list[list[int]]:
    """Among overlapping candidate runs, the benchmark's choice of a non-overlapping set (lowest mean cost)."""
    if not runs or not costs:
        return []
    ordered = sorted(zip(runs, costs), key=lambda item: item[0][0])
    groups: list[list[tuple[list[int], float]]] = [[ordered[0]]]
    for item in ordered[1:]:
        if any(idx in member[0] for member in groups[-1] for idx in item[0]):
            groups[-1].append(item)
        else:
            groups.append([item])
    chosen: list[list[int]] = []
    for group in groups:
        if len(group) == 1:
            chosen.append(group[0][0])
            continue
        paths: dict[int, list[tuple[list[int], float]]] = {0: [group[0]]}
        for run in group[1:]:
            new_path = True
            for path in paths.values():
                duplicate = same = False
                for member in list(path):
                    if member[0] == run[0]:
                        duplicate = same = True
                        if member[1] > run[1]:
                            path.pop(path.index(member))
                            path.append(run)
                    elif any(a == b for a in member[0] for b in run[0]):
                        duplicate = True
                if not duplicate:
                    path.append(run)
                    new_path = False
                if same:
                    new_path = False
            if new_path:
                paths[len(paths)] = [run]
        best_cost, best = float("inf"), []
        for path in paths.values():
            cost = sum(member[1] for member in path) / len(path)
            if cost < best_cost:
                best, best_cost = [member[0] for member in path], cost
        chosen.extend(best)
    return chosen


def _join_split_predictions(cost: np.ndarray, gt: list[str], pred: list[str]
                            ) -> tuple[np.ndarray, list[int | list[int]]]:
    """Runs of consecutive predictions joined where a ground-truth block was split; the matrix rebuilt."""
    import numpy as np

    first = np.argwhere(cost < 0.25)
    masked_gt = [int(i[0]) for i in first]
    masked_pred = [int(i[1]) for i in first]
    free_gt = [i for i in range(cost.shape[0]) if i not in masked_gt]
    free_pred = [i for i in range(cost.shape[1]) if i not in masked_pred]
    runs: list[list[int]] = []
    run_costs: list[float] = []
    for g in free_gt:
        best_cost, best_run = float("inf"), None
        for p in free_pred:
            step = 1
            run = [pred[p]]
            while not (p + step in masked_pred or p + step >= len(pred)):
                run.append(pred[p + step])
                belongs, more = _judge_run(gt[g], run)
                if not belongs:
                    break
                step += 1
                if not more:
                    break
            joined = " ".join(pred[p:p + step])
            distance = _ratio(gt[g], joined)
            if distance < best_cost:
                best_cost, best_run = distance, list(range(p, p + step))
        if best_run:
            runs.append(best_run)
            run_costs.append(best_cost)
    final = _final_runs(runs, run_costs)
    if not final:
        return cost, list(range(len(pred)))
    layout: list[int | list[int]] = list(range(len(pred)))
    for chosen in final:
        at = layout.index(chosen[0])
        del layout[at:at + len(chosen)]
        layout.insert(at, chosen)
    lines = [" ".join(pred[x[0]:x[-1] + 1]) if isinstance(x, list) else pred[x] for x in layout]
    return _edit_matrix(gt, lines), layout


def _quick_core(gt: list[str], pred: list[str]) -> list[dict[str, Any]]:
    """The non-ignored part of the quick match on normalised lines; entries index ``gt``/``pred``."""
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped,import-not-found,unused-ignore]

    cost, layout = _join_split_predictions(_edit_matrix(gt, pred), gt, pred)
    rows, cols = linear_sum_assignment(cost)
    row_list = list(rows)
    matches: dict[int, dict[str, Any]] = {}
    unmatched_gt: list[int] = []
    unmatched_pred: list[int] = []
    for i in range(len(gt)):
        if i not in row_list:
            unmatched_gt.append(i)
            continue
        k = row_list.index(i)
        target = layout[cols[k]]
        span = list(range(target[0], target[-1] + 1)) if isinstance(target, list) else [target]
        edit = cost[rows[k]][cols[k]]
        if edit > 0.7:
            unmatched_pred.extend(span)
            unmatched_gt.append(i)
        else:
            matches[i] = {"pred_indices": span, "edit": edit}
            for p in span:
                if p in unmatched_pred:
                    unmatched_pred.remove(p)
    inside: dict[int, list[int]] = {}
    for p, text in enumerate(pred):
        hits = [g for g in unmatched_gt if _gt_in_pred(text, gt[g]) < 0.4]
        if hits:
            inside[p] = hits
    final: dict[tuple[int, ...], dict[str, Any]] = {}
    done: set[int] = set()
    for g, info in matches.items():
        key = tuple(sorted(info["pred_indices"]))
        if key in final:
            if g not in done:
                final[key]["gt_indices"].append(g)
                done.add(g)
        else:
            final[key] = {"gt_indices": [g], "edit": info["edit"]}
            done.add(g)
    for p, gts in inside.items():
        key = (p,)
        if key in final:
            for g in gts:
                if g not in done:
                    final[key]["gt_indices"].append(g)
                    done.add(g)
        else:
            final[key] = {"gt_indices": [g for g in gts if g not in done], "edit": None}
            done.update(final[key]["gt_indices"])
    for key, info in final.items():
        gts = sorted(set(info["gt_indices"]))
        if not gts:
            info["edit"] = 1
        elif len(gts) > 1:
            merged, first = "".join(gt[g] for g in gts), pred[key[0]]
            info["edit"] = Levenshtein.distance(merged, first) / max(len(merged), len(first))
        else:
            joined = " ".join(pred[p] for p in key)
            info["edit"] = Levenshtein.distance(gt[gts[0]], joined) / max(len(gt[gts[0]]), len(joined))
    converted = _pair_table(gt, pred, set(range(len(gt))), set(range(len(pred))), final)
    return _merge_by_prediction(converted, len(gt))


def _ignored_core(gt: list[str], pred: list[str]) -> tuple[list[dict[str, Any]], list[int]]:
    """Ignored-category blocks: every prediction within 0.25 of one is taken out; returns entries and those indices."""
    import numpy as np

    matrix = _edit_matrix(gt, pred)
    hits = np.argwhere(matrix < 0.25)
    taken = [int(h[1]) for h in hits]
    taken_lines = [pred[i] for i in taken]
    by_gt: dict[int, dict[str, Any]] = {}
    for k, (g, p) in enumerate(hits):
        by_gt[int(g)] = {"pred_indices": [k], "edit": matrix[g][p]}
    final: dict[tuple[int, ...], dict[str, Any]] = {}
    for g, info in by_gt.items():
        final[(info["pred_indices"][0],)] = {"gt_indices": [g], "edit": None}
    for key, info in final.items():
        joined = " ".join(taken_lines[p] for p in key)
        g = info["gt_indices"][0]
        info["edit"] = Levenshtein.distance(gt[g], joined) / max(len(gt[g]), len(joined))
    converted = _pair_table(gt, taken_lines, set(range(len(gt))), set(range(len(taken_lines))), final)
    merged = _merge_by_prediction(converted, len(gt))
    for entry in merged:  # prediction indices back to the page's, through the taken list
        if entry["pred_idx"] != [""] and isinstance(entry["pred_idx"], list):
            entry["pred_idx"] = [taken[p] for p in entry["pred_idx"]]
    return merged, taken


def _finish(entries: list[dict[str, Any]], gt_keep: list[int], pred_keep: list[int], gt: _Lines, pred: _Lines,
            gt_items: list[dict[str, Any]], pred_items: list[PredictedBlock], *, formulas_as_arrays: bool
            ) -> list[Pair]:
    """Entries to :class:`Pair` records, with the benchmark's lookups (and its skip after a removed entry)."""
    pairs: list[Pair] = []
    skip_next = False
    for entry in entries:
        if skip_next:  # the benchmark removes an entry from the list it iterates: the next one is never finished
            skip_next = False
            pairs.append(Pair([], [], complete=False))
            continue
        gts = [] if entry["gt_idx"] in ([""], "") else list(entry["gt_idx"])
        preds = [] if entry["pred_idx"] in ([""], "") else list(entry["pred_idx"])
        if not gts:
            kind = pred_items[preds[0]].kind if preds else ""
            if kind == "equation_inline":
                skip_next = True
                continue
        local_gt = [gt_keep[g] for g in gts]  # index into the side's kept lines
        local_pred = [pred_keep[p] for p in preds]
        pair = Pair(local_gt, local_pred, edit=float(entry["edit"]))
        if gts:
            pair.gt_category = _majority_category([gt.categories[g] for g in local_gt])
        pair.gt_position = [_gt_order(gt_items[g]) for g in local_gt]
        pair.pred_position = pred_items[local_pred[0]].position if local_pred else None
        pair.pred_category = pred_items[local_pred[0]].kind if local_pred else ""
        raw_gt = [gt.raw[g] for g in local_gt]
        raw_pred = [pred.raw[p] for p in local_pred]
        if formulas_as_arrays and pair.gt_category == "equation_isolated" and len(raw_gt) > 1:
            pair.gt = _as_array(raw_gt)
        else:
            pair.gt = "".join(raw_gt)
        if formulas_as_arrays and "equation" in pair.pred_category and len(raw_pred) > 1:
            pair.pred = _as_array(raw_pred)
        else:
            pair.pred = "".join(raw_pred)
        pair.norm_gt = "".join(gt.norm[g] for g in local_gt)
        pair.norm_pred = "".join(pred.norm[p] for p in local_pred)
        pairs.append(pair)
    return pairs


def _as_array(lines: list[str]) -> str:
    rows = " \\\\ ".join("{" + line.strip("$").strip("\n") + "}" for line in lines)
    return "\\begin{array}{l} " + rows + " \\end{array}"


def _lines(gt_items: list[dict[str, Any]], pred_items: list[PredictedBlock]) -> tuple[_Lines, _Lines]:
    """The kept lines of both sides: raw and normalised text both non-empty (the benchmark's filter)."""
    gt = _Lines([], [], [])
    for item in gt_items:
        line = _gt_line(item)
        if line and line[0] and line[1]:
            gt.raw.append(line[0])
            gt.norm.append(line[1])
            gt.categories.append(item["category_type"])
    pred = _Lines([], [], [])
    for block in pred_items:
        raw, norm = _pred_line(block)
        if raw and norm:
            pred.raw.append(raw)
            pred.norm.append(norm)
            pred.categories.append(block.kind)
    return gt, pred


def quick_match(gt_items: list[dict[str, Any]], pred_items: list[PredictedBlock]) -> list[Pair]:
    """Match a page's ground-truth text and formula blocks to its predicted blocks (the benchmark's quick match).

    When the split/merge search would exceed :data:`WINDOW_BUDGET`, the page falls back to :func:`simple_text_match`,
    as the benchmark does when its quick match runs past 30 seconds.

    Args:
        gt_items: the page's ground-truth blocks of the text and display-formula categories, sorted by ``order``.
        pred_items: the predicted text and formula blocks (tables not matched to a ground-truth table included).

    Returns:
        The pairs, ignored categories included (their ``gt_category`` says so); ``complete=False`` marks an entry
        the benchmark skips.
    """
    token = _budget.set([WINDOW_BUDGET])
    try:
        return _quick_match(gt_items, pred_items)
    except _OverBudget:
        return simple_text_match(gt_items, pred_items)
    finally:
        _budget.reset(token)
        _window_distance.cache_clear()  # the cache serves one page: it must not keep a long run's texts alive


def _quick_match(gt_items: list[dict[str, Any]], pred_items: list[PredictedBlock]) -> list[Pair]:
    gt_items = split_array_formulas_gt(gt_items)
    order = sorted(range(len(pred_items)),
                   key=lambda i: (pred_items[i].kind == "equation_inline", pred_items[i].position, i))
    pred_items = split_array_formulas_pred([pred_items[i] for i in order])
    gt, pred = _lines(gt_items, pred_items)

    if not gt.norm or not pred.norm:
        pairs = []
        for g in range(len(gt.norm)):
            pairs.append(Pair([g], [], gt=gt.raw[g], norm_gt=gt.norm[g], gt_category=gt.categories[g],
                              gt_position=[_gt_order(gt_items[g])]))
        for p in range(len(pred.norm) if not gt.norm else 0):
            pairs.append(Pair([], [p], pred=pred.raw[p], norm_pred=pred.norm[p], pred_category=pred_items[p].kind,
                              pred_position=pred_items[p].position))
        return pairs
    if len(gt.norm) == 1 and len(pred.norm) == 1:
        return [Pair([0], [0], gt=gt.raw[0], pred=pred.raw[0], norm_gt=gt.norm[0], norm_pred=pred.norm[0],
                     gt_category=gt.categories[0], pred_category=pred_items[0].kind,
                     gt_position=[_gt_order(gt_items[0])], pred_position=pred_items[0].position,
                     edit=_ratio(gt.norm[0], pred.norm[0]))]

    ignored_keep = [i for i, c in enumerate(gt.categories) if c in IGNORED_CATEGORIES]
    kept = [i for i, c in enumerate(gt.categories) if c not in IGNORED_CATEGORIES]
    ignored_pairs: list[Pair] = []
    taken: list[int] = []
    if ignored_keep:
        entries, taken = _ignored_core([gt.norm[i] for i in ignored_keep], pred.norm)
        ignored_pairs = _finish(entries, ignored_keep, list(range(len(pred.norm))), gt, pred, gt_items, pred_items,
                                formulas_as_arrays=False)
    free_pred = [i for i in range(len(pred.norm)) if i not in taken]
    entries = _quick_core([gt.norm[i] for i in kept], [pred.norm[i] for i in free_pred])
    pairs = _finish(entries, kept, free_pred, gt, pred, gt_items, pred_items, formulas_as_arrays=True)
    return pairs + ignored_pairs


def simple_text_match(gt_items: list[dict[str, Any]], pred_items: list[PredictedBlock]) -> list[Pair]:
    """The benchmark's fallback match: one Hungarian assignment on normalised edit distance, no split or merge.

    As in the benchmark, the prediction at index 0 gets no position or kind (it tests the index for truth), and the
    predictions left unassigned form one prediction-only pair.

    Args:
        gt_items: as for :func:`quick_match`.
        pred_items: as for :func:`quick_match`.

    Returns:
        The pairs.
    """
    gt, pred = _lines(gt_items, pred_items)
    pairs: list[Pair] = []
    if not gt.norm:
        if pred.norm:
            every = list(range(len(pred.norm)))
            pairs.append(Pair([], every, pred="".join(pred.raw), norm_pred="".join(pred.norm),
                              pred_category=pred_items[0].kind, pred_position=pred_items[0].position))
        return pairs
    if not pred.norm:
        return [Pair([g], [], gt=gt.raw[g], norm_gt=gt.norm[g], gt_category=gt.categories[g],
                     gt_position=[_gt_order(gt_items[g])]) for g in range(len(gt.norm))]
    assignment, unmatched = simple_match(gt.norm, pred.norm)
    for g, p, edit in assignment:
        pair = Pair([g], [] if p is None else [p], gt=gt.raw[g], norm_gt=gt.norm[g], gt_category=gt.categories[g],
                    gt_position=[_gt_order(gt_items[g])], edit=edit)
        if p is not None:
            pair.pred, pair.norm_pred = pred.raw[p], pred.norm[p]
            if p:  # the benchmark's `if pred_idx`: index 0 counts as no prediction for these two
                pair.pred_position, pair.pred_category = pred_items[p].position, pred_items[p].kind
        pairs.append(pair)
    if unmatched:
        pairs.append(Pair([], unmatched, pred="".join(pred.raw[p] for p in unmatched),
                          norm_pred="".join(pred.norm[p] for p in unmatched),
                          pred_category=pred_items[unmatched[0]].kind,
                          pred_position=pred_items[unmatched[0]].position))
    return pairs


def simple_match(gt_lines: list[str], pred_lines: list[str]) -> tuple[list[tuple[int, int | None, float]], list[int]]:
    """Hungarian assignment on normalised edit distance (the benchmark's table match, on raw HTML strings).

    Args:
        gt_lines: the ground-truth tables, non-empty.
        pred_lines: the predicted tables, non-empty.

    Returns:
        ``([(gt_index, pred_index or None, edit)], unmatched prediction indices)``.
    """
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped,import-not-found,unused-ignore]

    cost = _edit_matrix(gt_lines, pred_lines)
    rows, cols = linear_sum_assignment(cost)
    by_row = {int(r): int(c) for r, c in zip(rows, cols)}
    out: list[tuple[int, int | None, float]] = []
    for g in range(len(gt_lines)):
        if g in by_row:
            out.append((g, by_row[g], float(cost[g][by_row[g]])))
        else:
            out.append((g, None, 1.0))
    taken = set(by_row.values())
    return out, [p for p in range(len(pred_lines)) if p not in taken]
