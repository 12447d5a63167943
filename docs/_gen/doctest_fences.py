"""A griffe extension: doctest examples in docstrings become ``pycon`` code blocks on the site.

The package's docstrings carry runnable ``>>>`` examples (``tests/test_doctests.py`` runs them) outside an
``Examples:`` section; Markdown would read ``>>>`` as nested quotes and ``x[0][1]`` as a link. Each run of
``>>>`` / ``...`` lines and the output lines after it, up to a blank line, is fenced before the docstring is parsed.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_PROMPT = re.compile(r"^(\s*)>>> ")


def fence_doctests(text: str) -> str:
    """Wrap every doctest block of ``text`` in a ```` ```pycon ```` fence, keeping its indentation."""
    lines, out, i = text.split("\n"), [], 0
    inside_fence = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            inside_fence = not inside_fence
        match = None if inside_fence else _PROMPT.match(line)
        if match is None:
            out.append(line)
            i += 1
            continue
        indent = match.group(1)
        out += ["", f"{indent}```pycon"]
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out += [f"{indent}```", ""]
    return "\n".join(out)


class DoctestFences(Extension):
    """Fence the doctest blocks of every docstring griffe loads."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:  # griffe >= 1.x
        if obj.docstring is not None and ">>> " in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
