"""Benchmarks write their own tables into the documentation: ``docs/performance.md``, between markers.

A benchmark run with ``--write-docs`` replaces its section of the page, the text between
``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``, with what it printed, the machine and the date. Nothing between
the markers is edited by hand, so the page shows the last measured numbers, not a history.

Use in a benchmark's ``main``::

    writing = docs_requested()          # first: takes --write-docs off sys.argv, records what is printed
    ...                                 # the benchmark prints its tables as before
    if writing:
        write_printed("plugin", markdown=True)
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import platform
import re
import sys
from pathlib import Path
from typing import TextIO

PERFORMANCE_PAGE = Path(__file__).resolve().parents[1] / "docs" / "performance.md"
FLAG = "--write-docs"

_recording: _Tee | None = None


class _Tee(io.TextIOBase):
    """Writes to the real stream and keeps a copy."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def machine() -> str:
    """The machine in a few words: system, architecture, CPU count and Python version."""
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}")


def replace_section(page: str, name: str, body: str) -> str:
    """Return ``page`` with the text between the ``bench:NAME`` markers replaced by ``body``.

    Args:
        page: the Markdown page.
        name: the section's name, as in ``<!-- bench:NAME -->``.
        body: the new text between the markers.

    Returns:
        The page with that one section replaced.

    Raises:
        ValueError: the page lacks the markers, or has them more than once.
    """
    pattern = re.compile(rf"(<!-- bench:{re.escape(name)} -->\n).*?(\n<!-- /bench:{re.escape(name)} -->)", re.S)
    found = len(pattern.findall(page))
    if found != 1:
        raise ValueError(f"the page needs exactly one '<!-- bench:{name} -->' ... '<!-- /bench:{name} -->' section, "
                         f"found {found}: add it where the table belongs")
    return pattern.sub(lambda m: m.group(1) + body.strip("\n") + m.group(2), page)


def section_body(printed: str, *, markdown: bool, when: _dt.date | None = None, where: str | None = None) -> str:
    """What goes between the markers: the printed output (as Markdown or in a text fence), the machine and the date.

    Args:
        printed: what the benchmark printed.
        markdown: True when the output is Markdown (tables) already; otherwise it is shown in a ``text`` block.
        when: the date (default: today, UTC).
        where: the machine (default: :func:`machine`).

    Returns:
        The section's Markdown.
    """
    when = when or _dt.datetime.now(_dt.timezone.utc).date()
    text = printed.strip("\n")
    shown = text if markdown else f"```text\n{text}\n```"
    return f"{shown}\n\n_Machine: {where or machine()} · Date: {when.isoformat()}_"


def write_section(name: str, printed: str, *, markdown: bool = False, path: Path = PERFORMANCE_PAGE) -> Path:
    """Replace section ``name`` of the performance page with ``printed``, the machine and today's date.

    Args:
        name: the section's name in the page.
        printed: the benchmark's output.
        markdown: True when ``printed`` is Markdown already.
        path: the page (default ``docs/performance.md``).

    Returns:
        The page's path.
    """
    page = path.read_text(encoding="utf-8")
    path.write_text(replace_section(page, name, section_body(printed, markdown=markdown)), encoding="utf-8")
    return path


def docs_requested(argv: list[str] | None = None) -> bool:
    """True when ``--write-docs`` was given; it is removed from the arguments and stdout is recorded from now on.

    Args:
        argv: the argument list to look in and edit (default ``sys.argv``).

    Returns:
        Whether the benchmark should write its section at the end.
    """
    global _recording
    words = sys.argv if argv is None else argv
    if FLAG not in words:
        return False
    while FLAG in words:
        words.remove(FLAG)
    _recording = _Tee(sys.stdout)
    sys.stdout = _recording  # type: ignore[assignment]
    return True


def write_printed(name: str, *, markdown: bool = False, path: Path = PERFORMANCE_PAGE) -> Path:
    """Write what was printed since :func:`docs_requested` into section ``name``, and stop recording.

    Args:
        name: the section's name in the page.
        markdown: True when the printed output is Markdown already.
        path: the page (default ``docs/performance.md``).

    Returns:
        The page's path.
    """
    global _recording
    if _recording is None:
        raise RuntimeError("write_printed() needs docs_requested() first")
    sys.stdout, printed, _recording = _recording.stream, _recording.copy.getvalue(), None
    written = write_section(name, printed, markdown=markdown, path=path)
    print(f"wrote section '{name}' of {path}")
    return written
