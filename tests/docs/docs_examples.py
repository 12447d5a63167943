"""Fenced code blocks of the documentation pages, read with the directives that say how to run them.

A page's ``python`` and ``bash``/``sh``/``shell`` blocks run in order, in one folder per page. An HTML comment right
before a block changes that:

- ``<!-- docs-test: skip REASON -->``: not run (a GPU, a network, an install step), with the reason;
- ``<!-- docs-test: file PATH -->``: the block is written to PATH (any language) instead of being run;
- ``<!-- docs-test: exit N -->``: a shell block is expected to exit with N (default 0).

Anywhere on a page, ``<!-- docs-test: requires NAME -->`` skips the page when the program NAME is not installed.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

RUN_LANGUAGES = {"python": "python", "py": "python", "bash": "shell", "sh": "shell", "shell": "shell"}
_DIRECTIVE = re.compile(r"<!--\s*docs-test:\s*([\w-]+)\s*(.*?)\s*-->")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")


@dataclass
class Block:
    """One fenced block: where it is, its language, its code and what the directives before it say."""

    line: int
    language: str
    code: str
    skip: str | None = None
    file: str | None = None
    exit: int = 0

    @property
    def kind(self) -> str | None:
        """``python``, ``shell``, or None for a block that is only shown."""
        return RUN_LANGUAGES.get(self.language)


@dataclass
class Page:
    path: Path
    blocks: list[Block] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)

    @property
    def runnable(self) -> list[Block]:
        return [b for b in self.blocks if b.file is not None or (b.kind and b.skip is None)]


def read_page(path: Path) -> Page:
    """Parse ``path`` into its blocks and directives."""
    page = Page(path)
    lines = path.read_text(encoding="utf-8").split("\n")
    pending: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        for name, value in _DIRECTIVE.findall(line):
            if name == "requires":
                page.requires.append(value)
            else:
                pending[name] = value
        fence = _FENCE.match(line)
        if fence is None:
            if line.strip() and not _DIRECTIVE.search(line):
                pending = {}
            i += 1
            continue
        indent, marker, language = fence.groups()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(marker):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        page.blocks.append(Block(start, language.lower(), textwrap.dedent("\n".join(body)) + "\n",
                                 skip=pending.get("skip"), file=pending.get("file"),
                                 exit=int(pending.get("exit", 0))))
        pending = {}
    return page
