"""TEDS and TEDS-S: tree-edit-distance similarity of two HTML tables (Zhong et al., 2020), as OmniDocBench computes it.

The table is parsed with lxml's HTML parser (comments dropped), its ``body/table`` element turned into a tree whose
``td`` nodes carry colspan, rowspan and, for TEDS, the cell's content as a list of tokens (tag names and single
characters). The tree edit distance is computed by ``apted`` with unit insert/delete costs; renaming two nodes costs 1
when tag, colspan or rowspan differ, the normalised Levenshtein distance of the two cells' tokens for ``td`` nodes
(TEDS), and 0 otherwise. ``TEDS = 1 - distance / max(node count)``; TEDS-S ignores cell content.

apted's algorithm is quadratic in memory and cubic in time in the worst case: a table over :data:`MAX_TABLE_NODES`
nodes or :data:`MAX_TABLE_DEPTH` levels is refused with one sentence (:class:`TableTooLargeError`) rather than
left to exhaust the machine.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz.distance import Levenshtein

MAX_TABLE_NODES = 5000
MAX_TABLE_DEPTH = 64


class TableTooLargeError(ValueError):
    """A table too large or too deeply nested for the tree edit distance; the message is one sentence."""


class _Node:
    __slots__ = ("children", "colspan", "content", "rowspan", "tag")

    def __init__(self, tag: str, colspan: int | None, rowspan: int | None, content: list[str] | None) -> None:
        self.tag = tag
        self.colspan = colspan
        self.rowspan = rowspan
        self.content = content
        self.children: list[_Node] = []


def _config():  # apted is imported on first use
    from apted import Config  # type: ignore[import-untyped,import-not-found,unused-ignore]

    class _CellConfig(Config):
        def rename(self, node1: _Node, node2: _Node) -> float:
            if node1.tag != node2.tag or node1.colspan != node2.colspan or node1.rowspan != node2.rowspan:
                return 1.0
            if node1.tag == "td" and (node1.content or node2.content):
                first, second = node1.content or [], node2.content or []
                return Levenshtein.distance(first, second) / max(len(first), len(second))
            return 0.0

        def children(self, node: _Node) -> list[_Node]:
            return node.children

    return _CellConfig()


def _tokens(element: Any, out: list[str]) -> None:
    out.append(f"<{element.tag}>")
    if element.text is not None:
        out.extend(element.text)
    for child in element:
        _tokens(child, out)
    if element.tag != "unk":
        out.append(f"</{element.tag}>")
    if element.tag != "td" and element.tail is not None:
        out.extend(element.tail)


def _tree(element: Any, structure_only: bool) -> _Node:
    if element.tag == "td":
        cell: list[str] = []
        if not structure_only:
            _tokens(element, cell)
            cell = cell[1:-1]
        return _Node("td", int(element.attrib.get("colspan", "1")), int(element.attrib.get("rowspan", "1")), cell)
    node = _Node(element.tag, None, None, None)
    node.children = [_tree(child, structure_only) for child in element]
    return node


def _depth(element: Any) -> int:
    deepest, stack = 0, [(element, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_TABLE_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in node)
    return deepest


def _table(markup: str) -> Any | None:
    from lxml import html  # type: ignore[import-untyped,import-not-found,unused-ignore]

    parser = html.HTMLParser(remove_comments=True, encoding="utf-8")
    root = html.fromstring(markup, parser=parser)
    tables = root.xpath("body/table")
    return tables[0] if tables else None


def teds_pair(prediction: str, ground_truth: str) -> tuple[float, float]:
    """TEDS and TEDS-S of a predicted table against the ground-truth table (both normalised HTML).

    Args:
        prediction: the predicted table, ``<html><body><table>…`` as :func:`normalize_html_table` writes it.
        ground_truth: the ground-truth table in the same form.

    Returns:
        ``(teds, teds_s)``, each in [0, 1]; 0 when either side is empty or has no ``body/table`` (the benchmark's
        rule), or when the tree cannot be built (a non-integer colspan, for example).

    Raises:
        TableTooLargeError: either table has more than :data:`MAX_TABLE_NODES` nodes or is nested deeper than
            :data:`MAX_TABLE_DEPTH`.
    """
    if not prediction or not ground_truth:
        return 0.0, 0.0
    try:
        pred, true = _table(prediction), _table(ground_truth)
    except Exception:  # noqa: BLE001 - lxml rejects the markup: the benchmark scores the table 0
        return 0.0, 0.0
    if pred is None or true is None:
        return 0.0, 0.0
    for side, table in (("predicted", pred), ("ground-truth", true)):
        nodes = len(table.xpath(".//*"))
        if nodes > MAX_TABLE_NODES:
            raise TableTooLargeError(f"the {side} table has {nodes} HTML elements, more than the {MAX_TABLE_NODES} "
                                     "that TEDS compares; split the page or drop the table.")
        if _depth(table) > MAX_TABLE_DEPTH:
            raise TableTooLargeError(f"the {side} table is nested more than {MAX_TABLE_DEPTH} levels deep, more than "
                                     "TEDS compares; check the model's HTML.")
    n_nodes = max(len(pred.xpath(".//*")), len(true.xpath(".//*")))
    from apted import APTED  # type: ignore[import-untyped,import-not-found,unused-ignore]

    scores = []
    for structure_only in (False, True):
        try:
            tree_pred, tree_true = _tree(pred, structure_only), _tree(true, structure_only)
            distance = APTED(tree_pred, tree_true, _config()).compute_edit_distance()
            scores.append(1.0 - float(distance) / n_nodes)
        except Exception:  # noqa: BLE001 - the benchmark sets a table it cannot score to 0
            scores.append(0.0)
    return scores[0], scores[1]
