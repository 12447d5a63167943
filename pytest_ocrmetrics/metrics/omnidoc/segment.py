"""Cut a page's Markdown into OmniDocBench's predicted blocks: text, HTML / pipe / LaTeX tables, display formulas, code.

The order of the steps and their rules are those of the benchmark's ``md_tex_filter`` (``utils/extract.py``,
``utils/table_utils.py``): LaTeX tables, then HTML tables, then formulas, then pipe tables (converted to HTML), then
fenced code are taken out (blanked with spaces, so later positions hold), and what remains is split into paragraphs
on blank lines (on single newlines when the page has no blank line). Each block keeps the start offset the benchmark
gives it, because the reading order and the tie-breaking of the matcher depend on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TEXT = "text_all"
FORMULA = "equation_isolated"
HTML_TABLE = "html_table"
LATEX_TABLE = "latex_table"


@dataclass
class PredictedBlock:
    """One block cut from the prediction.

    Attributes:
        category: ``text_all``, ``equation_isolated``, ``html_table`` or ``latex_table``.
        position: the block's start offset in the (partly rewritten) page, the key the benchmark sorts blocks by.
        content: the block's text (a formula as ``\\[…\\]``, a table as HTML or LaTeX).
        fine: the finer kind: ``text_block``, ``code``, ``equation_inline``, ``md2html_table`` or ``""``.
    """

    category: str
    position: int
    content: str
    fine: str = ""

    @property
    def kind(self) -> str:
        """The benchmark's ``pred_category_type``: the finer kind when there is one."""
        return self.fine or self.category


_IMAGE = re.compile(r"!\[.*?\]\(.*?\)")
_FENCE_OPENERS = tuple(re.compile(rf"^```{lang}\n?", re.MULTILINE) for lang in ("markdown", "html", "latex"))
_FENCE_CLOSER = re.compile(r"```\n?$", re.MULTILINE)
_DISPLAY = re.compile(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_DOLLARS = re.compile(r"\$\$(.*?)\$\$|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_PIPE_ROW = re.compile(r"\|\s*.*?\s*\|\n", re.DOTALL)
_HTML_TABLE_SPAN = re.compile(r"(<table.*?</table>)", re.DOTALL)
_CODE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
_LATEX_TABLE_ENV = re.compile(r"\\begin{table}(.*?)\\end{table}", re.DOTALL)
_LATEX_STYLE = (
    (re.compile(r"\\title\{(.*?)\}"), r"\1"),
    (re.compile(r"\\title\s*\{\s*(.*?)\s*\}", re.DOTALL), r"\1"),
    (re.compile(r"\\text\s*\{\s*(.*?)\s*\}", re.DOTALL), r"\1"),
    (re.compile(r"\\section\*?\{(.*?)\}"), r"\1"),
    (re.compile(r"\\section\*?\{\s*(.*?)\s*\}", re.DOTALL), r"\1"),
)


@dataclass(frozen=True)
class _Nesting:
    """A begin/end pair searched with a stack; the two lengths are the benchmark's step sizes (its pattern lengths)."""

    begin: re.Pattern[str]
    end: re.Pattern[str]
    step: int
    restart: int


_TABULAR = _Nesting(re.compile(r"\\begin{tabular}"), re.compile(r"\\end{tabular}"), 14, 16)
_HTML = _Nesting(re.compile(r"<table(?:[^>]*)>"), re.compile(r"</table>"), 8, 16)


def _outermost(text: str, nesting: _Nesting, offset: int = 0) -> list[tuple[int, int]]:
    """Spans of the outermost balanced begin/end pairs; an unclosed opener restarts the search just after it."""
    spans: list[tuple[int, int]] = []
    while True:
        stack: list[int] = []
        pos = 0
        while pos < len(text):
            begin = nesting.begin.search(text, pos)
            end = nesting.end.search(text, pos)
            if begin is None and end is None:
                break
            if begin is not None and (end is None or begin.start() < end.start()):
                stack.append(begin.start())
                pos = begin.start() + nesting.step
            else:
                assert end is not None
                if stack:
                    start = stack.pop()
                    if not stack:
                        spans.append((offset + start, offset + end.start() + nesting.step))
                pos = end.start() + nesting.step
        if not stack:
            return spans
        cut = stack[0] + nesting.restart
        text, offset = text[cut:], offset + cut


def _blank(content: str, start: int, end: int) -> str:
    return content[:start] + " " * (end - start) + content[end:]


def _latex_tables(content: str) -> list[tuple[int, str]]:
    found: list[tuple[int, int, str]] = []
    for match in _LATEX_TABLE_ENV.finditer(content):
        found.append((match.start(), match.end(), match.group(0)))
        content = _blank(content, match.start(), match.end())
    for start, end in _outermost(content, _TABULAR):
        found.append((start, end, content[start:end]))
    found.sort(key=lambda item: item[0])
    return [(start, table) for start, _, table in found]


def _pipe_rows_to_html(rows: str) -> str:
    """One ``|…|`` match as the benchmark's HTML: first line the header, lines from the third on the body."""
    lines = [line.strip() for line in rows.strip().split("\n")]
    out = "<table>\n  <thead>\n    <tr>\n"
    for cell in lines[0].split("|")[1:-1]:
        out += f"      <th>{cell.strip()}</th>\n"
    out += "    </tr>\n  </thead>\n  <tbody>\n"
    for line in lines[2:]:
        out += "    <tr>\n"
        for cell in line.split("|")[1:-1]:
            out += f"      <td>{cell.strip()}</td>\n"
        out += "    </tr>\n"
    return out + "  </tbody>\n</table>\n"


_TABLE_WRAPPER_LINE = re.compile(r"</?t(able|head|body)>")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_TABLE_BLOCK = re.compile(r"<table>[\s\S]*?</table>")
_ALIGNMENT_HINT = (re.compile(r"-*?:"), re.compile(r"---"), re.compile(r":-*?"))


def _join_tables(block: str) -> str:
    """Adjacent one-row tables become one table (the rows of each table with more than two lines kept)."""
    rows: list[str] = []
    for table in _TABLE_BLOCK.findall(_COMMENT.sub("", block)):
        lines = [line.replace("<th>", "<td>").replace("</th>", "</td>") if "<th>" in line else line
                 for line in table.split("\n")]
        kept = [line for line in lines if not _TABLE_WRAPPER_LINE.search(line)]
        if len(kept) > 2:
            rows.extend(kept)
    return "\n\n<table>\n" + "\n".join(rows) + "\n</table>\n\n"


def _merge_adjacent_tables(content: str) -> str:
    """The benchmark's line walk over converted pipe tables; the line just before a table is absorbed (and lost)."""
    out: list[str] = []
    in_table = False
    block = ""
    previous = ""
    for line in content.split("\n"):
        if "<table>" in line:
            in_table = True
            block += previous
        elif in_table:
            if not any(hint.search(previous) for hint in _ALIGNMENT_HINT) and "</thead>" not in previous:
                block += "\n" + previous
            if "</table>" in previous and "<table>" not in line:
                in_table = False
                out.append(_join_tables(block))
                block = ""
        else:
            out.append(previous)
        previous = line
    if previous:
        if in_table or "</table>" in previous:
            block += "\n" + previous
            out.append(_join_tables(block))
        else:
            out.append(previous)
    return "\n".join(out)


def pipe_tables_to_html(content: str) -> str:
    """Every ``|…|`` line run of the page rewritten as an HTML table, as the benchmark does before finding tables.

    Args:
        content: the page (HTML tables and formulas already blanked).

    Returns:
        The page with pipe tables replaced by ``<table border="1" >`` tables whose cells are ``<td colspan="1"
        rowspan="1">``.
    """
    content = content.replace("\r", "") + "\n"
    for rows in _PIPE_ROW.findall(content):
        content = content.replace(rows, _pipe_rows_to_html(rows), 1)
    content = _merge_adjacent_tables(content)
    return content.replace("<table>", '<table border="1" >').replace("<td>", '<td colspan="1" rowspan="1">')


def segment_markdown(content: str) -> list[PredictedBlock]:
    """Cut a page's Markdown into blocks, in the benchmark's order (by start offset).

    Args:
        content: the model's output for one page.

    Returns:
        The blocks sorted by position (stable): text paragraphs and code as ``text_all``, ``$$…$$``/``\\[…\\]`` (and
        inline ``$…$``, marked ``equation_inline``) as ``equation_isolated`` in ``\\[…\\]`` form, HTML and converted
        pipe tables as ``html_table``, LaTeX ``tabular``/``table`` as ``latex_table``.
    """
    content = _IMAGE.sub("", content)
    for opener in _FENCE_OPENERS:
        content = opener.sub("", content)
    content = _FENCE_CLOSER.sub("", content)
    content = re.sub(r"_{4,}", "____", content)
    content = re.sub(r" {4,}", "    ", content)
    for tag in ("<html>", "</html>", "<body>", "</body>"):
        content = content.replace(tag, "")

    blocks: list[PredictedBlock] = []
    for start, table in _latex_tables(content):
        blocks.append(PredictedBlock(LATEX_TABLE, start, table))
        content = _blank(content, start, start + len(table))
    for start, end in _outermost(content, _HTML):
        table = content[start:end]
        blocks.append(PredictedBlock(HTML_TABLE, start, table))
        content = _blank(content, start, start + len(table))

    for match in _DISPLAY.finditer(content):
        if not match.group(0):
            continue
        line = " ".join(match.group(0).strip().split("\n"))
        inner = _DOLLARS.search(line)
        if inner is None:
            content = _blank(content, match.start(), match.end())
            blocks.append(PredictedBlock(FORMULA, match.start(), line))
        elif inner.group(1):
            content = _blank(content, match.start(), match.end())
            blocks.append(PredictedBlock(FORMULA, match.start(), _DOLLARS.sub(r"\\[\1\\]", line)))
        else:  # an inline formula: recorded, but left in the text too
            blocks.append(PredictedBlock(FORMULA, match.start(), _DOLLARS.sub(r"\\[\2\3\\]", line), "equation_inline"))

    if len(_PIPE_ROW.findall(content + "\n")) >= 2:
        content = pipe_tables_to_html(content)
        for match in _HTML_TABLE_SPAN.finditer(content):
            content = _blank(content, match.start(), match.end())
            blocks.append(PredictedBlock(HTML_TABLE, match.start(), match.group(0).strip(), "md2html_table"))

    for match in _CODE.finditer(content):
        content = _blank(content, match.start(), match.end())
        blocks.append(PredictedBlock(TEXT, match.start(), match.group(2).strip(), "code"))

    for pattern, replacement in _LATEX_STYLE:
        content = pattern.sub(replacement, content)

    paragraphs = content.split("\n\n")
    if len(paragraphs) == 1:
        paragraphs = content.split("\n")
    offset = 0
    for paragraph in paragraphs:
        start = offset
        offset += len(paragraph)  # the benchmark does not count the separator: its offsets drift, kept as they are
        text = "\n".join(line.strip() for line in paragraph.strip().strip("\n").split("\n") if line.strip())
        if not text:
            continue
        if text.startswith("<table") and text.endswith("</table>"):
            blocks.append(PredictedBlock(HTML_TABLE, start, text))
        elif text.startswith("$") and text.endswith("$"):
            if text.replace("$", "").strip():
                blocks.append(PredictedBlock(FORMULA, start, text.strip()))
        else:
            blocks.append(PredictedBlock(TEXT, start, text, "text_block"))
    blocks.sort(key=lambda block: block.position)
    return blocks
