"""Synthetic OmniDocBench candidates: deterministic rewrites of the demo's Markdown that exercise the matcher's rules.

``make_expected.py`` scores them with the benchmark's own code and ``test_parity.py`` with the product, so each rule
(split and merged blocks, reading order, pipe tables, formula delimiters, text without blank lines, missing blocks,
character noise) is compared on 18 real pages, not only on the two shipped candidates. Pure standard library and a
seeded ``random.Random``, so both sides see the same bytes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

_HTML_TABLE = re.compile(r"<table.*?</table>", re.DOTALL)
_ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.DOTALL)
_CELL = re.compile(r"<t[dh]([^>]*)>(.*?)</t[dh]>", re.DOTALL)


def _paragraphs(markdown: str) -> list[str]:
    return [p for p in markdown.split("\n\n") if p.strip()]


def shuffled(markdown: str, rng: random.Random) -> str:
    """Paragraphs in a different order: every third one moved to the end, then two neighbours swapped."""
    paragraphs = _paragraphs(markdown)
    moved = [p for i, p in enumerate(paragraphs) if i % 3 != 1] + [p for i, p in enumerate(paragraphs) if i % 3 == 1]
    if len(moved) > 3:
        i = rng.randrange(len(moved) - 1)
        moved[i], moved[i + 1] = moved[i + 1], moved[i]
    return "\n\n".join(moved)


def split_and_merged(markdown: str, rng: random.Random) -> str:
    """Long paragraphs split in two at a space, and some neighbours joined into one paragraph."""
    out: list[str] = []
    for paragraph in _paragraphs(markdown):
        if len(paragraph) > 120 and "<table" not in paragraph and "$$" not in paragraph and rng.random() < 0.6:
            cut = paragraph.find(" ", len(paragraph) // 2)
            if cut > 0:
                out.extend([paragraph[:cut], paragraph[cut + 1:]])
                continue
        if out and rng.random() < 0.3 and "<table" not in paragraph and "<table" not in out[-1]:
            out[-1] = out[-1] + " " + paragraph
        else:
            out.append(paragraph)
    return "\n\n".join(out)


def _pipe(table: str) -> str:
    rows = []
    for row in _ROW.findall(table):
        cells = _CELL.findall(row)
        if any("span" in attributes for attributes, _ in cells):
            return table  # spans have no pipe form: keep the HTML
        rows.append("| " + " | ".join(re.sub(r"\s+", " ", text).strip() for _, text in cells) + " |")
    if len(rows) < 2:
        return table
    width = rows[0].count("|") - 1
    return "\n".join([rows[0], "|" + "---|" * width, *rows[1:]]) + "\n"


def pipe_tables(markdown: str, rng: random.Random) -> str:
    """HTML tables without spans rewritten as pipe tables; display formulas as ``\\[…\\]``."""
    del rng
    markdown = _HTML_TABLE.sub(lambda m: _pipe(m.group(0)), markdown)
    return re.sub(r"\$\$(.*?)\$\$", lambda m: "\\[" + m.group(1) + "\\]", markdown, flags=re.DOTALL)


def noisy(markdown: str, rng: random.Random) -> str:
    """One paragraph in five dropped, 4% of letters replaced, single newlines between paragraphs."""
    kept = [p for p in _paragraphs(markdown) if rng.random() >= 0.2]
    chars = []
    in_tag = False
    for char in "\n".join(kept):
        if char == "<":
            in_tag = True
        elif char == ">":
            in_tag = False
        if not in_tag and char.isalpha() and rng.random() < 0.04:
            char = rng.choice("abcdefghijklmnopqrstuvwxyz")
        chars.append(char)
    return "".join(chars)


def _mutate(latex: str, rng: random.Random) -> str:
    spots = [i for i, char in enumerate(latex) if char.isalnum()]
    if not spots:
        return latex
    at = rng.choice(spots)
    return latex[:at] + rng.choice("xyz123") + latex[at + 1:]


def formulas(markdown: str, rng: random.Random) -> str:
    """Display formulas kept, rewritten as ``\\[…\\]``, given a wrong character, or written as plain text (no
    delimiters); half the inline formulas given a wrong character."""

    def display(match: re.Match[str]) -> str:
        body, roll = match.group(1), rng.random()
        if roll < 0.3:
            return body.strip()
        if roll < 0.6:
            return "$$" + _mutate(body, rng) + "$$"
        return "\\[" + body + "\\]"

    markdown = re.sub(r"\$\$(.*?)\$\$", display, markdown, flags=re.DOTALL)
    return re.sub(r"(?<!\$)\$([^$\n]+)\$(?!\$)",
                  lambda m: "$" + (_mutate(m.group(1), rng) if rng.random() < 0.5 else m.group(1)) + "$", markdown)


TRANSFORMS: dict[str, tuple[str, Callable[[str, random.Random], str]]] = {
    # synthetic candidate -> (the shipped candidate it rewrites, the rewrite)
    "synthetic_shuffled": ("gt_md", shuffled),
    "synthetic_split_merged": ("gt_md", split_and_merged),
    "synthetic_pipe_tables": ("gt_md", pipe_tables),
    "synthetic_noisy": ("gt_md", noisy),
    "synthetic_demo_noisy": ("demo_pred", noisy),
    "synthetic_demo_split_merged": ("demo_pred", split_and_merged),
    "synthetic_formulas": ("gt_md", formulas),
}


def synthetic_prediction(candidates: Path, name: str, stem: str) -> str:
    """The synthetic candidate ``name``'s Markdown for the page ``stem`` (seeded by the two names).

    Args:
        candidates: the folder holding the shipped candidates (``gt_md``, ``demo_pred``).
        name: a key of :data:`TRANSFORMS`.
        stem: the page's image name without its extension.

    Returns:
        The rewritten Markdown.
    """
    source, transform = TRANSFORMS[name]
    markdown = (candidates / source / f"{stem}.md").read_text(encoding="utf-8")
    return transform(markdown, random.Random(f"{name}/{stem}"))


def write_synthetic(candidates: Path, out: Path, stems: list[str]) -> list[Path]:
    """Write every synthetic candidate as a folder of ``<stem>.md`` under ``out``.

    Args:
        candidates: the folder holding the shipped candidates.
        out: where to write the folders.
        stems: the pages' image names without extension.

    Returns:
        The folders written.
    """
    folders = []
    for name in TRANSFORMS:
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for stem in stems:
            (folder / f"{stem}.md").write_text(synthetic_prediction(candidates, name, stem), encoding="utf-8")
        folders.append(folder)
    return folders
