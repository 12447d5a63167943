"""Text that every report can hold: encodable, without raw control characters, and written without loss.

Three separate guarantees, each in one place:

- **encodable** (:func:`clean_text`, :func:`clean_run`): a lone surrogate (``"\\ud800"`` in a JSON ground-truth file
  or in a server's JSON answer) cannot be written as UTF-8, and a non-character (U+FFFE, U+FFFF, U+nFFFE/U+nFFFF,
  U+FDD0..U+FDEF) is not allowed in XML. Both are replaced with U+FFFD (``�``) and counted; the run file records the
  count as ``replaced_characters`` and the terminal summary says so.
- **visible** (:func:`show_controls`): control characters (NUL, ESC, ...) and the bidirectional embedding, override
  and isolate controls never reach the HTML, Markdown, CSV or terminal raw. They are shown as marks:

  ===========================================  =========================================================
  characters                                   shown as
  ===========================================  =========================================================
  C0 controls U+0000..U+001F                   their Unicode control picture, U+2400 + code (``␀ ␛ ␍``);
                                               line feed ``↵`` and tab ``→``
  DEL U+007F                                   ``␡`` (U+2421)
  C1 controls U+0080..U+009F (no picture)      their code point in angle brackets: ``⟨U+0085⟩``
  LRE RLE PDF LRO RLO LRI RLI FSI PDI          their abbreviation in angle brackets: ``⟨RLO⟩``
  ===========================================  =========================================================

  These are the marks of the terminal's failure excerpts (:mod:`pytest_ocrmetrics.scoring.diff`), whose fuller set the
  terminal tables use. Line breaks and tabs are kept where a report shows text as lines (HTML, CSV cells; Markdown
  folds them into spaces).
- **no truncated file** (:func:`write_text_atomic`): a report is written to a temporary file in the same folder and
  renamed over the old one, so a failure leaves the previous report as it was. A report path that is a symbolic
  link is written through (the link's target replaced, the link kept); a FIFO, a folder or a device is refused
  before anything is written (:func:`report_target`).

>>> clean_text("A\\ud800B\\ufffe")
('A�B�', 2)
>>> show_controls("id\\x1b[31m\\x00 \\u202egnp.exe")
'id␛[31m␀ ⟨RLO⟩gnp.exe'
>>> show_controls("two\\nlines", keep="\\n")
'two\\nlines'
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterable

from pytest_ocrmetrics.core import cleanup

__all__ = ["REPLACEMENT", "clean_text", "clean_utf8", "clean_run", "sanitize_run", "show_controls", "write_text_atomic",
           "write_lines_atomic", "xml_safe", "ReportPathError", "report_target"]

REPLACEMENT = "\ufffd"

# lone surrogates and the 66 non-characters
_UNENCODABLE = re.compile(
    "[\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
    + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(1, 17))
    + "]"
)
_BIDI_NAMES = {"\u202a": "LRE", "\u202b": "RLE", "\u202c": "PDF", "\u202d": "LRO", "\u202e": "RLO",
               "\u2066": "LRI", "\u2067": "RLI", "\u2068": "FSI", "\u2069": "PDI"}
_MARKS: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)}
_MARKS.update({0x0A: "\u21b5", 0x09: "\u2192", 0x7F: "\u2421"})
_MARKS.update({code: f"\u27e8U+{code:04X}\u27e9" for code in range(0x80, 0xA0)})
_MARKS.update({ord(ch): f"\u27e8{name}\u27e9" for ch, name in _BIDI_NAMES.items()})
_NEEDS_MARK = re.compile("[\x00-\x1f\x7f-\x9f" + "".join(_BIDI_NAMES) + "]")


def clean_utf8(text: str) -> bytes | None:
    """``text`` in UTF-8 when it holds nothing :func:`clean_text` would replace, else None (then clean it).

    The test costs one encoding in C (a lone surrogate cannot be encoded; each non-character's bytes hold one of
    three byte pairs), several times cheaper than the character-class search on long non-ASCII text, and a writer
    keeps the bytes it made.

    >>> clean_utf8("é"), clean_utf8("a\\ud800"), clean_utf8("\\ufffe")
    (b'\\xc3\\xa9', None, None)
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    # U+FDD0..U+FDEF: EF B7 xx; U+FFFE, U+FFFF and U+nFFFE, U+nFFFF: ... BF BE / BF BF
    if data.isascii() or (b"\xef\xb7" not in data and b"\xbf\xbe" not in data and b"\xbf\xbf" not in data):
        return data
    return None


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates and non-characters replaced by U+FFFD, and how many were replaced."""
    if text.isascii() or clean_utf8(text) is not None:  # ASCII: a hundred times cheaper to tell than to search
        return text, 0
    cleaned, count = _UNENCODABLE.subn(REPLACEMENT, text)
    return cleaned, count


def clean_run(value: Any) -> tuple[Any, int]:
    """A copy of a run (or any JSON-like value) with every string, keys included, passed through :func:`clean_text`,
    and the total count of replaced characters. Values without anything to replace are returned as they are.

    >>> clean_run({"documents": [{"id": "a\\udcff", "metrics": {"cer": 0.5}}]})
    ({'documents': [{'id': 'a�', 'metrics': {'cer': 0.5}}]}, 1)

    A container with nothing to replace (the usual case) is recognised by one scan of its JSON text (``json``'s C
    encoder writes surrogates and non-characters raw with ``ensure_ascii=False``), not walked string by string.
    """
    if isinstance(value, (dict, list, tuple)) and not _may_need_cleaning(value):
        return value, 0
    return _clean_run(value)


def _may_need_cleaning(value: Any) -> bool:
    """False when ``value`` certainly holds no string that :func:`clean_text` would change.

    One pass of ``json``'s C encoder with ``ensure_ascii``: every character outside ASCII becomes a ``\\uXXXX`` escape,
    so a search for the escapes of surrogates and non-characters, which starts only at a literal ``\\u``, replaces a
    character-class scan of all the text (several times faster on a big run). A surrogate escape may be half of a
    character beyond the BMP (an emoji) or a lone surrogate: the escapes cannot tell, so any is "may need cleaning"
    (the exact walk then decides).
    """
    try:
        text = _ASCII_ENCODER.encode(value)
    except (TypeError, ValueError):  # keys json cannot write (tuples): walk it
        return True
    return _UNENCODABLE_ESCAPE.search(text) is not None


# one encoder for every call (``json.dumps`` with options builds a new one each time: a cost per xdist report)
_ASCII_ENCODER = json.JSONEncoder(ensure_ascii=True, check_circular=False, default=repr)


# the ensure_ascii escapes of what clean_text may replace: surrogates, U+FDD0..U+FDEF, U+FFFE, U+FFFF
_UNENCODABLE_ESCAPE = re.compile(r"\\u(?:d[89a-f][0-9a-f]{2}|fd[de][0-9a-f]|fff[ef])")


def _clean_run(value: Any) -> tuple[Any, int]:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        total = 0
        items = []
        for key, item in value.items():
            new_key, n_key = clean_text(key) if isinstance(key, str) else (key, 0)
            new_item, n_item = _clean_run(item)
            total += n_key + n_item
            items.append((new_key, new_item))
        return (dict(items) if total else value), total
    if isinstance(value, (list, tuple)):
        cleaned = [_clean_run(item) for item in value]
        total = sum(n for _, n in cleaned)
        if not total:
            return value, 0
        return type(value)(item for item, _ in cleaned), total
    return value, 0


def sanitize_run(run: Any) -> Any:
    """:func:`clean_run` for a whole run dict, with the count as the run's ``replaced_characters`` when not zero.

    The count adds to the one the run already holds; a run without one (fresh from the results) also counts what its
    documents' records hold (``replaced_characters`` of a document: replaced on an xdist worker, before the record
    could be sent). So sanitising twice counts nothing twice, and a clean run comes back unchanged.

    >>> run = sanitize_run({"documents": [{"id": "\\ud800", "replaced_characters": 2}]})
    >>> run["replaced_characters"], run["documents"][0]["id"]
    (3, '�')
    >>> sanitize_run(run)["replaced_characters"]
    3
    """
    cleaned, count = clean_run(run)
    if "replaced_characters" in cleaned:
        count += int(cleaned.get("replaced_characters") or 0)
    elif getattr(cleaned.get("documents"), "replacements_counted", False):
        pass  # spooled documents: cleaned when added, their replacements are in the run's count already
    else:
        count += sum(int(doc.get("replaced_characters") or 0) for doc in cleaned.get("documents") or ()
                     if isinstance(doc, dict))
    if count:
        cleaned = dict(cleaned)
        cleaned["replaced_characters"] = count
    return cleaned


def show_controls(text: str, *, keep: str = "") -> str:
    """``text`` with control characters and bidi embedding/override/isolate controls shown as visible marks (see
    the module docstring); the characters in ``keep`` (e.g. ``"\\n\\t"``) stay as they are."""
    if not _NEEDS_MARK.search(text):
        return text
    return _NEEDS_MARK.sub(lambda m: m.group() if m.group() in keep else _MARKS[ord(m.group())], text)


def printable(text: str) -> str:
    """``text`` with every character that does not print written as its Python escape (``\\x1b``, ``\\u202e``,
    ``\\udcff`` for a file name byte that is not UTF-8): what a test id or a file path shown in a terminal must be,
    so that it cannot drive the terminal and a reader can still tell, and type, what it is.

    >>> printable("out/r" + chr(0x1B) + "un.json"), printable("façade 京.png")
    ('out/r\\\\x1bun.json', 'façade 京.png')
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def xml_safe(text: str) -> str:
    """Text for an XML attribute that no writer escapes (pytest's JUnit property names): characters XML 1.0 does
    not allow become ``#xNN`` as pytest's ``bin_xml_escape`` writes them, non-characters U+FFFD."""
    text = clean_text(text)[0]
    return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", lambda m: f"#x{ord(m.group()):02X}", text)


def write_lines_atomic(path: str | Path, lines: Iterable[str | bytes]) -> Path:
    """:func:`write_text_atomic` for text produced piece by piece (a run file with many documents): each piece is
    cleaned and written as it comes, so the whole text is never held in memory. Same guarantees. A piece given as
    bytes is UTF-8 text known to be clean (a run file's line copied by ``ocrmetrics merge``): written as it is."""
    return _write_atomic(path, lines)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` through a temporary file in the same folder, then rename it over ``path``.

    A failure (full disk, a renderer bug, an unencodable character) leaves an existing file at ``path`` as it was
    and no temporary file behind. Lone surrogates left in ``text`` are written as U+FFFD. Parent folders are
    created; the new file gets the old file's permissions, or the usual ones (``0o666`` less the umask).
    """
    return _write_atomic(path, (text,))


class ReportPathError(OSError):
    """A report path that names something a report must not replace (a FIFO, a folder, a device): refused before
    anything is written. Its message is one sentence naming the path and what it is; ``reason`` is that sentence
    without the path (for a line that names the path already)."""

    def __init__(self, shown: str, reason: str) -> None:
        super().__init__(f"{shown}: {reason}")
        self.reason = reason


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def report_target(path: str | Path) -> Path:
    """The file a report written to ``path`` replaces: ``path`` itself, or the file its symbolic link (chain) names,
    so that a link kept in a project (``latest.html`` -> ``runs/today.html``) stays a link and its target gets the
    report. Raises :class:`ReportPathError` when that is not a regular file (nor a new path): a FIFO would be
    replaced by a file (or, opened, hang the run), a device or a folder is never a report."""
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode = os.stat(target).st_mode
    except OSError:  # a new file (or a dangling link: its target is created)
        return target
    if not stat.S_ISREG(mode):
        what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        what = what if target == path else f"a link to {printable(str(target))}, {what}"
        raise ReportPathError(printable(str(path)), f"{what}; a report is written only to a regular file or a new "
                                                    f"path, give another path")
    return target


def _write_atomic(path: str | Path, pieces: Iterable[str | bytes]) -> Path:
    """Write ``pieces`` to a temporary file next to the file ``path`` names (through a symbolic link: the link is
    kept, its target replaced) and rename it over that file; ``path`` is returned as given."""
    given = Path(path)
    path = report_target(given)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    # any exception, KeyboardInterrupt included, removes the hidden temporary file below; SIGTERM and interpreter
    # exit (a writer thread cut off) through the cleanup registry; only SIGKILL can leave it behind
    cleanup.register(temporary)
    try:
        with os.fdopen(handle, "wb") as stream:
            for piece in pieces:
                if isinstance(piece, bytes):
                    stream.write(piece)
                    continue
                data = clean_utf8(piece)  # the bytes of the usual piece, encoded once
                stream.write(data if data is not None else clean_text(piece)[0].encode("utf-8"))
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    finally:
        cleanup.unregister(temporary)
    return given
