"""Tables in an engine's Markdown or HTML output, as olmOCR-bench reads them (``olmocr/bench/table_parsing.py``).

A table is a grid of cells with their neighbours up, down, left and right (rowspan and colspan make several) and
their headings (the first row and column of a Markdown table, ``<th>`` and ``<thead>`` cells of an HTML table).
HTML is parsed with the standard library into the same tree BeautifulSoup's ``html.parser`` builds (no implicit
closing of ``<td>``/``<tr>``, void elements such as ``<br>`` close at once), so the benchmark's verdicts carry over
without a BeautifulSoup dependency.

>>> [t.cell_text for t in parse_markdown_tables("| a | b |\\n|---|---|\\n| 1 | 2 |")]
[{(0, 0): 'a', (0, 1): 'b', (1, 0): '1', (1, 1): '2'}]
>>> table = parse_html_tables("<table><tr><th colspan=2>H</th></tr><tr><td>x</td><td>y</td></tr></table>")[0]
>>> sorted(table.down_relations[(0, 0)])
[(1, 0), (1, 1)]
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

__all__ = ["TableData", "parse_markdown_tables", "parse_html_tables"]

Cell = tuple[int, int]


@dataclass(frozen=True)
class TableData:
    """One table: the text of each cell by (row, column) of its top-left corner, heading cells, and neighbours."""

    cell_text: dict[Cell, str]
    heading_cells: set[Cell]
    is_rectangular: bool
    up_relations: dict[Cell, set[Cell]]
    down_relations: dict[Cell, set[Cell]]
    left_relations: dict[Cell, set[Cell]]
    right_relations: dict[Cell, set[Cell]]

    def _walk_heading_relations(self, start: Cell, relation: dict[Cell, set[Cell]]) -> set[Cell]:
        headings: set[Cell] = set()
        ends: set[Cell] = set()
        visited: set[Cell] = set()
        to_visit = {start}
        while to_visit:
            current = to_visit.pop()
            visited.add(current)
            if current in self.heading_cells:
                headings.add(current)
            if not relation.get(current):
                ends.add(current)
            else:
                to_visit |= relation[current]
        headings.discard(start)
        ends.discard(start)
        return headings or ends

    def top_heading_relations(self, row: int, col: int) -> set[Cell]:
        """The heading cells above (row, col), or the topmost cells of its column(s) when none is a heading."""
        return self._walk_heading_relations((row, col), self.up_relations)

    def left_heading_relations(self, row: int, col: int) -> set[Cell]:
        """The heading cells left of (row, col), or the leftmost cells of its row(s) when none is a heading."""
        return self._walk_heading_relations((row, col), self.left_relations)


def _span(value: Any, default: int = 1) -> int:
    if value in (None, "", 0):
        return default
    try:
        span = int(value)
    except (TypeError, ValueError):
        return default
    return span if span > 0 else default


def _build(row_specs: list[list[dict[str, Any]]]) -> TableData | None:
    """The benchmark's ``_build_table_data_from_specs``: place spanning cells on a grid and link neighbours."""
    if not row_specs:
        return None
    cell_text: dict[Cell, str] = {}
    heading_cells: set[Cell] = set()
    meta: dict[Cell, tuple[int, int, int, int]] = {}
    occupancy: list[list[Cell | None]] = []
    active: list[tuple[Cell, int] | None] = []
    for row_idx, cells in enumerate(row_specs):
        occupancy.append(_place_row(row_idx, cells, active, cell_text, heading_cells, meta))
    while any(entry is not None for entry in active):  # rows that only cells spanning down from above fill
        occupancy.append([_continue_span(active, col) for col in range(len(active))])
    if not cell_text:
        return None
    columns = {i for row in occupancy for i, value in enumerate(row) if value is not None}
    if not columns:
        return None
    width = max(columns) + 1
    for row in occupancy:
        if len(row) < width:
            row.extend([None] * (width - len(row)))
        else:
            del row[width:]
    up, down, left, right = _neighbours(meta, occupancy, width)
    return TableData(
        cell_text=cell_text,
        heading_cells=heading_cells,
        is_rectangular=not any(value is None for row in occupancy for value in row),
        up_relations={c: set(up[c]) for c in cell_text},
        down_relations={c: set(down[c]) for c in cell_text},
        left_relations={c: set(left[c]) for c in cell_text},
        right_relations={c: set(right[c]) for c in cell_text},
    )


def _continue_span(active: list[tuple[Cell, int] | None], col: int) -> Cell | None:
    """The cell spanning down into column ``col`` of this row (one row fewer left to span), or None."""
    entry = active[col]
    if entry is None:
        return None
    cell_id, remaining = entry
    remaining -= 1
    active[col] = (cell_id, remaining) if remaining > 0 else None
    return cell_id


def _place_row(row_idx: int, cells: list[dict[str, Any]], active: list[tuple[Cell, int] | None],
               cell_text: dict[Cell, str], heading_cells: set[Cell],
               meta: dict[Cell, tuple[int, int, int, int]]) -> list[Cell | None]:
    """One row's grid entries: columns taken by cells spanning down from above, the row's own cells placed in the
    free columns (recorded in ``cell_text``, ``heading_cells``, ``meta``; ``active`` tracks their row spans)."""
    entries: list[Cell | None] = []
    col = spec_idx = 0
    while spec_idx < len(cells) or col < len(active):
        if col < len(active) and active[col] is not None:
            entries.append(_continue_span(active, col))
            col += 1
            continue
        if spec_idx >= len(cells):
            entries.append(None)  # col < len(active) here: a gap under no spanning cell
            col += 1
            continue
        spec = cells[spec_idx]
        spec_idx += 1
        rowspan = max(1, spec["rowspan"])
        colspan = max(1, spec["colspan"])
        cell_id = (row_idx, col)
        cell_text[cell_id] = spec["text"] or ""
        if spec["is_heading"]:
            heading_cells.add(cell_id)
        meta[cell_id] = (row_idx, col, rowspan, colspan)
        if len(active) < col + colspan:
            active.extend([None] * (col + colspan - len(active)))
        for offset in range(colspan):
            entries.append(cell_id)
            active[col + offset] = (cell_id, rowspan - 1) if rowspan > 1 else None
        col += colspan
    return entries


Relations = dict[Cell, set[Cell]]


def _neighbours(meta: dict[Cell, tuple[int, int, int, int]], occupancy: list[list[Cell | None]],
                width: int) -> tuple[Relations, Relations, Relations, Relations]:
    """(up, down, left, right): for each cell, the first other cell in that direction from each row / column it
    spans."""
    height = len(occupancy)
    up: Relations = defaultdict(set)
    down: Relations = defaultdict(set)
    left: Relations = defaultdict(set)
    right: Relations = defaultdict(set)
    for cell_id, (r0, c0, rowspan, colspan) in meta.items():
        r1, c1 = r0 + rowspan - 1, c0 + colspan - 1
        for r in range(r0, r1 + 1):
            _first(occupancy, cell_id, ((r, c) for c in range(c1 + 1, width)), right)
            _first(occupancy, cell_id, ((r, c) for c in range(c0 - 1, -1, -1)), left)
        for c in range(c0, c1 + 1):
            _first(occupancy, cell_id, ((r, c) for r in range(r1 + 1, height)), down)
            _first(occupancy, cell_id, ((r, c) for r in range(r0 - 1, -1, -1)), up)
    return up, down, left, right


def _first(occupancy: list[list[Cell | None]], cell_id: Cell, positions: Any, into: Relations) -> None:
    """Link ``cell_id`` to the first other cell at ``positions`` (walked in order), if any."""
    for r, c in positions:
        neighbour = occupancy[r][c]
        if neighbour is None or neighbour == cell_id:
            continue
        into[cell_id].add(neighbour)
        return


# -- Markdown --------------------------------------------------------------------------------------------------------
def _markdown_rows(lines: list[str]) -> list[list[str]]:
    separator = None
    for i, line in enumerate(lines):
        content = line.replace("|", "").strip()
        if content and all(c in "- :" for c in content):
            separator = i
            break
    rows = []
    for i, line in enumerate(lines):
        if i == separator or (line.strip() and all(c in "- :|" for c in line)):
            continue
        cells = [cell.strip() for cell in line.split("|")]
        if cells and cells[0] == "":
            cells = cells[1:]
        if cells and cells[-1] == "":
            cells = cells[:-1]
        if cells:
            rows.append(cells)
    return rows


def _markdown_table(lines: list[str]) -> TableData | None:
    rows = _markdown_rows(lines)
    if not rows:
        return None
    return _build([[{"text": cell, "rowspan": 1, "colspan": 1, "is_heading": r == 0 or c == 0}
                    for c, cell in enumerate(row)] for r, row in enumerate(rows)])


def parse_markdown_tables(text: str) -> list[TableData]:
    """Every Markdown table in ``text``: runs of two or more lines containing ``|``."""
    tables: list[TableData] = []
    block: list[str] = []
    for line in text.strip().split("\n") + [""]:  # the sentinel closes a table at the end
        if "|" in line:
            block.append(line)
            continue
        if len(block) >= 2:
            table = _markdown_table(block)
            if table:
                tables.append(table)
        block = []
    return tables


# -- HTML ------------------------------------------------------------------------------------------------------------
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "menuitem", "meta",
                   "param", "source", "track", "wbr", "basefont", "bgsound", "command", "frame", "image", "isindex",
                   "nextid", "spacer"})


@dataclass
class _Node:
    name: str
    attrs: dict[str, str | None]
    parent: _Node | None
    children: list[_Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join("\n" if isinstance(c, _Node) and c.name == "br" else c if isinstance(c, str) else c.text()
                       for c in self.children)

    def descendants(self, names: frozenset[str]) -> list[_Node]:
        found = []
        for child in self.children:
            if isinstance(child, _Node):
                if child.name in names:
                    found.append(child)
                found.extend(child.descendants(names))
        return found


class _TreeBuilder(HTMLParser):
    """A tree like BeautifulSoup's ``html.parser`` builder: an end tag closes the nearest open element of its name."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("[document]", {}, None)
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in _VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(_Node(tag, dict(attrs), self.current))

    def handle_endtag(self, tag: str) -> None:
        node: _Node | None = self.current
        while node is not None and node.name != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def html_row_specs(text: str) -> list[list[list[dict[str, Any]]]]:
    """Per ``<table>`` (nested ones too), per ``<tr>``, its direct ``<th>``/``<td>`` cells: text (``<br>`` as a line
    break, stripped), rowspan, colspan and whether it is a heading (``<th>``, or a row inside ``<thead>``)."""
    if "<table" not in text.lower():
        return []
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    tables = []
    for table in builder.root.descendants(frozenset({"table"})):
        rows = table.descendants(frozenset({"tr"}))
        if not rows:
            continue
        specs = []
        for row_idx, row in enumerate(rows):
            in_head = False
            ancestor = row.parent
            while ancestor is not None:
                if ancestor.name == "thead":
                    in_head = True
                    break
                ancestor = ancestor.parent
            spec = []
            for cell in (c for c in row.children if isinstance(c, _Node) and c.name in ("th", "td")):
                raw_rowspan, raw_colspan = cell.attrs.get("rowspan"), cell.attrs.get("colspan")
                rowspan = _span(raw_rowspan)
                if isinstance(raw_rowspan, str) and raw_rowspan.strip() == "0":
                    rowspan = max(1, len(rows) - row_idx)
                spec.append({"text": cell.text().strip(), "rowspan": rowspan, "colspan": _span(raw_colspan),
                             "is_heading": cell.name == "th" or in_head})
            specs.append(spec)
        tables.append(specs)
    return tables


def parse_html_tables(text: str) -> list[TableData]:
    """Every ``<table>`` in ``text`` (nested ones too, each on its own), with rowspan/colspan and heading cells."""
    return [table for table in (_build(specs) for specs in html_row_specs(text)) if table]
