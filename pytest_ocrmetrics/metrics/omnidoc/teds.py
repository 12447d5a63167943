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


def _config() -> Any:  # apted is imported on first use; an apted Config (apted is untyped)
    from apted import Config  # type: ignore[import-untyped,import-not-found,unused-ignore]

    class _CellConfig(Config):  # type: ignore[misc]  # Config is Any: apted has no type hints
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
    scores = []
    for structure_only in (False, True):
        try:
            distance = _fast_distance(pred, true, structure_only)
            if distance is None:  # not a plain table > tr > td tree: the general algorithm
                distance = _apted_distance(pred, true, structure_only, n_nodes)
            scores.append(1.0 - float(distance) / n_nodes)
        except TableTooLargeError:
            raise
        except Exception:  # noqa: BLE001 - the benchmark sets a table it cannot score to 0
            scores.append(0.0)
    return scores[0], scores[1]


MAX_GENERAL_TREE_NODES = 1000


def _apted_distance(pred: Any, true: Any, structure_only: bool, n_nodes: int) -> float:
    if n_nodes > MAX_GENERAL_TREE_NODES:
        raise TableTooLargeError(f"a table of {n_nodes} HTML elements that is not a plain table/tr/td grid is more "
                                 f"than the {MAX_GENERAL_TREE_NODES} the general tree edit distance compares.")
    from apted import APTED  # type: ignore[import-untyped,import-not-found,unused-ignore]

    tree_pred, tree_true = _tree(pred, structure_only), _tree(true, structure_only)
    return float(APTED(tree_pred, tree_true, _config()).compute_edit_distance())


def _grid(table: Any, structure_only: bool, alphabet: dict[str, str]) -> list[list[tuple[int, int, str]]] | None:
    """A ``table > tr > td`` tree as rows of ``(colspan, rowspan, content)``; ``None`` for any other shape.

    Cell content is the cell's token list (tags and characters, as the benchmark tokenises it) written as a string of
    one character per distinct token, so the Levenshtein distance of two strings is that of the two token lists.
    """
    rows = []
    for row in table:
        if row.tag != "tr":
            return None
        cells = []
        for cell in row:
            if cell.tag != "td":
                return None
            content = ""
            if not structure_only:
                tokens: list[str] = []
                _tokens(cell, tokens)
                content = "".join(alphabet.setdefault(token, chr(0xF0000 + len(alphabet))) for token in tokens[1:-1])
            cells.append((int(cell.attrib.get("colspan", "1")), int(cell.attrib.get("rowspan", "1")), content))
        rows.append(cells)
    return rows


def _fast_distance(pred: Any, true: Any, structure_only: bool) -> float | None:
    """The exact tree edit distance of two ``table > tr > td`` trees in O(n1 * n2), or ``None`` for another shape.

    Both roots are ``table`` (renaming one to the other costs 0, so mapping root to root is optimal) and every ``td``
    is a leaf, so the forests met by the Zhang-Shasha recursion are "the first rows, then the first cells of the next
    row with its ``tr`` deleted": one state per node count. ``fd[s1][s2] = min(fd[s1-1][s2] + 1, fd[s1][s2-1] + 1,
    fd[s1 - size(t1)][s2 - size(t2)] + ted(t1, t2))`` where ``t`` is the rightmost tree of the state (a whole row or a
    loose cell). ``ted`` of two rows is the alignment of their cells (renaming ``tr`` costs 0), of a row with ``k``
    cells and a cell ``k + min(cell costs)`` (or 1 when ``k == 0``), of two cells the benchmark's rename cost. Each
    row of the table is filled at once with numpy (``min(a[j], f[j-1] + 1)`` is a running minimum of ``a[j] - j``).
    apted computes the same optimum; ``tests/omnidoc/test_matcher.py`` checks the two against each other.
    """
    import numpy as np

    alphabet: dict[str, str] = {}
    grid_pred, grid_true = _grid(pred, structure_only, alphabet), _grid(true, structure_only, alphabet)
    if grid_pred is None or grid_true is None:
        return None
    if grid_pred == grid_true:
        return 0.0
    cells_pred = [cell for row in grid_pred for cell in row]
    cells_true = [cell for row in grid_true for cell in row]
    # one extra row and column of 1s: a valid index for the placeholders that np.where masks out
    leaf = np.ones((len(cells_pred) + 1, len(cells_true) + 1))
    leaf[:-1, :-1] = _leaf_costs(cells_pred, cells_true)

    def states(grid: list[list[tuple[int, int, str]]]) -> tuple[list[int], list[int], list[int]]:
        # per state (node count s >= 1): the rightmost tree's kind (row index, or -1 - leaf index), its size
        kinds, sizes, first_cell = [], [], []
        leaf_base = 0
        for number, row in enumerate(grid):
            for j in range(len(row)):  # loose cells of this row (its tr deleted), then the whole row
                kinds.append(-1 - (leaf_base + j))
                sizes.append(1)
            kinds.append(number)
            sizes.append(len(row) + 1)
            first_cell.append(leaf_base)
            leaf_base += len(row)
        return kinds, sizes, first_cell

    kinds1, sizes1, first1 = states(grid_pred)
    kinds2, sizes2, first2 = states(grid_true)
    rows1 = [list(range(first1[r], first1[r] + len(grid_pred[r]))) for r in range(len(grid_pred))]
    rows2 = [list(range(first2[r], first2[r] + len(grid_true[r]))) for r in range(len(grid_true))]
    n1, n2 = len(kinds1), len(kinds2)
    row_row = np.empty((len(rows1), len(rows2)))
    for a, cells_a in enumerate(rows1):
        for b, cells_b in enumerate(rows2):
            row_row[a, b] = _align(leaf[np.ix_(cells_a, cells_b)]) if cells_a and cells_b else \
                float(len(cells_a) + len(cells_b))
    # ted(tree at state s1, tree at each state s2), built per kind of the s1 tree
    kinds2_arr = np.array(kinds2, dtype=np.int64)
    is_row2 = kinds2_arr >= 0
    row_index2 = np.where(is_row2, kinds2_arr, 0)
    leaf_index2 = np.where(is_row2, len(cells_true), -1 - kinds2_arr)
    k2 = np.array([len(rows2[r]) for r in row_index2]) if n2 else np.zeros(0)
    min_leaf_over_row2 = np.array([leaf[:, cells].min(axis=1) if cells else np.ones(len(cells_pred) + 1)
                                   for cells in rows2]).T if rows2 else np.zeros((len(cells_pred) + 1, 0))
    sizes2_arr = np.array(sizes2, dtype=np.int64)
    steps = np.arange(n2 + 1, dtype=float)
    previous = steps.copy()  # fd[0][s2] = s2
    table = [previous]
    for s1 in range(1, n1 + 1):
        kind, size = kinds1[s1 - 1], sizes1[s1 - 1]
        if kind >= 0:  # a whole row of k cells against each s2 tree
            k = len(rows1[kind])
            cells = rows1[kind]
            if k:
                against_leaf = k + leaf[cells][:, leaf_index2].min(axis=0)
            else:
                against_leaf = np.ones(n2)
            cost = np.where(is_row2, row_row[kind][row_index2], against_leaf)
        else:  # a loose cell against each s2 tree
            cell = -1 - kind
            against_row = np.where(k2 > 0, k2 + (min_leaf_over_row2[cell][row_index2] if rows2 else 0), 1.0)
            cost = np.where(is_row2, against_row, leaf[cell][leaf_index2])
        diagonal = table[s1 - size][np.arange(1, n2 + 1) - sizes2_arr] + cost
        candidates = np.empty(n2 + 1)
        candidates[0] = s1
        candidates[1:] = np.minimum(previous[1:] + 1, diagonal)
        current = np.minimum.accumulate(candidates - steps) + steps
        table.append(current)
        previous = current
    return float(previous[n2])


def _leaf_costs(cells1: list[tuple[int, int, str]], cells2: list[tuple[int, int, str]]) -> Any:
    """The benchmark's rename cost of every pair of cells: 1 if the spans differ, else normalised content distance."""
    import numpy as np
    from rapidfuzz.process import cdist

    if not cells1 or not cells2:
        return np.zeros((len(cells1), len(cells2)))
    costs = cdist([c[2] for c in cells1], [c[2] for c in cells2], scorer=Levenshtein.normalized_distance,
                  dtype=np.float64, workers=1)
    spans1 = np.array([(c[0], c[1]) for c in cells1])
    spans2 = np.array([(c[0], c[1]) for c in cells2])
    differ = (spans1[:, None, 0] != spans2[None, :, 0]) | (spans1[:, None, 1] != spans2[None, :, 1])
    costs[differ] = 1.0
    return costs


def _align(costs: Any) -> float:
    """Edit distance of two cell sequences: substitution ``costs[i, j]``, insertion and deletion 1."""
    import numpy as np

    rows, cols = costs.shape
    steps = np.arange(cols + 1, dtype=float)
    previous = steps.copy()
    for i in range(1, rows + 1):
        candidates = np.empty(cols + 1)
        candidates[0] = i
        candidates[1:] = np.minimum(previous[1:] + 1, previous[:-1] + costs[i - 1])
        previous = np.minimum.accumulate(candidates - steps) + steps
    return float(previous[cols])
