"""The evaluator page's JSON API as plain functions: options, one comparison, a batch of uploaded files.

No HTTP here (see :mod:`pytest_ocrmetrics.evaluator.serve.server`): each function takes decoded request data and returns the
JSON-ready answer, or raises :class:`ApiError` with the HTTP status and one sentence for the person who sent it.
The matching is :func:`~pytest_ocrmetrics.metrics.word_match.word_match`, the library's own word metric.

>>> result = analyze({"ground_truth": "The quick brown fox", "ocr_output": "The quik brown"})
>>> result["precision"], result["recall"], result["exact_matches"], result["fuzzy_matches"]
(0.6666666666666666, 0.5, 2, 1)
>>> [(t["text"], t["class"]) for t in result["tokens"]["ocr_output"]]
[('The', 'exact'), ('quik', 'fuzzy'), ('brown', 'exact')]
"""

from __future__ import annotations

import difflib
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from pytest_ocrmetrics.core.safe_text import clean_text
from pytest_ocrmetrics.metrics.word_match import FUZZY_COMPARISONS, WordMatch, word_match

__all__ = ["ApiError", "MatchOptions", "FilePart", "parse_options", "analyze", "analyze_texts", "batch",
           "parse_multipart", "MAX_BODY_BYTES", "MAX_TOKENS", "MAX_THRESHOLD", "REFERENCE_FILE", "OUTPUT_SUFFIX"]

#: Request bodies above this many bytes are refused with 413 before they are read.
MAX_BODY_BYTES = 10 * 1024 * 1024
MAX_THRESHOLD = 5
REFERENCE_FILE = "gt.txt"
OUTPUT_SUFFIX = "_out.txt"
_MAX_PARTS = 1000
#: At most this many words of each text come back as tokens (the metrics always count every word).
MAX_TOKENS = 50_000

_OPTION_KEYS = ("threshold", "case_sensitive", "ignore_punctuation")
_ANALYZE_KEYS = ("ground_truth", "ocr_output") + _OPTION_KEYS


class ApiError(Exception):
    """A request the server cannot answer: ``status`` (400, 411, 413, 415, ...) and one sentence saying why, with
    any headers the answer needs (``Retry-After`` on a 503)."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


@dataclass(frozen=True)
class MatchOptions:
    """The page's three settings; the defaults are the specification's (threshold 1, ignore case and punctuation)."""

    threshold: int = 1
    case_sensitive: bool = False
    ignore_punctuation: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "case_sensitive": self.case_sensitive,
                "ignore_punctuation": self.ignore_punctuation}


@dataclass(frozen=True)
class FilePart:
    """One part of a ``multipart/form-data`` body: its field name, file name (``None`` for a plain field), bytes."""

    name: str
    filename: str | None
    data: bytes


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_keys(given: Iterable[str], valid: tuple[str, ...], what: str) -> None:
    for key in given:
        if key not in valid:
            raise ApiError(400, f"unknown {what} {key!r}{_did_you_mean(key, valid)}; valid: {', '.join(valid)}")


_TRUE = {"true", "1", "on", "yes"}
_FALSE = {"false", "0", "off", "no", ""}


def _flag(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ApiError(400, f"{key} must be true or false, got {value!r}")


def _threshold(value: Any) -> int:
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,3}\s*", value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_THRESHOLD:
        raise ApiError(400, f"threshold must be a whole number from 0 to {MAX_THRESHOLD} (the largest edit distance "
                            f"of a fuzzy match), got {value!r}")
    return value


def parse_options(data: Mapping[str, Any]) -> MatchOptions:
    """The options in a request (JSON values, or form-field strings such as ``"true"`` and ``"2"``); absent ones take
    the defaults. Keys other than the options are the caller's business.

    >>> parse_options({"threshold": "0", "case_sensitive": "on"})
    MatchOptions(threshold=0, case_sensitive=True, ignore_punctuation=True)
    """
    defaults = MatchOptions()
    return MatchOptions(
        threshold=_threshold(data["threshold"]) if "threshold" in data else defaults.threshold,
        case_sensitive=_flag(data["case_sensitive"], "case_sensitive") if "case_sensitive" in data
        else defaults.case_sensitive,
        ignore_punctuation=_flag(data["ignore_punctuation"], "ignore_punctuation") if "ignore_punctuation" in data
        else defaults.ignore_punctuation,
    )


def _tokens(text: str, match: WordMatch, side: str) -> list[dict[str, Any]]:
    """Every word of ``text.split()`` in order: its text, class, line, and for a fuzzy match its partner and distance.

    Words that ``ignore_punctuation`` dropped (a lone ``-``) are class ``ignored``: shown, never counted. Only the
    first :data:`MAX_TOKENS` words are listed (a browser cannot colour millions of words).
    """
    classes: dict[int, dict[str, Any]] = {}
    own, other = ("reference", "hypothesis") if side == "ground_truth" else ("hypothesis", "reference")
    for pair in match.exact:
        classes[getattr(pair, f"{own}_index")] = {"class": "exact"}
    for pair in match.fuzzy:
        classes[getattr(pair, f"{own}_index")] = {"class": "fuzzy", "partner": getattr(pair, other),
                                                   "partner_index": getattr(pair, f"{other}_index"),
                                                   "distance": pair.distance, "crr": pair.similarity}
    unmatched = match.unmatched_reference_indices if side == "ground_truth" else match.unmatched_hypothesis_indices
    for index in unmatched:
        classes[index] = {"class": "unmatched"}
    tokens = []
    line, previous_end = 0, 0
    for index, found in enumerate(re.finditer(r"\S+", text)):  # the words of text.split(), with their offsets
        if index == MAX_TOKENS:
            break
        line += text.count("\n", previous_end, found.start())
        previous_end = found.end()
        token = {"text": found.group(), "index": index, "line": line}
        token.update(classes.get(index, {"class": "ignored"}))
        tokens.append(token)
    return tokens


def analyze_texts(ground_truth: str, ocr_output: str, options: MatchOptions = MatchOptions()) -> dict[str, Any]:
    """The answer of ``POST /api/analyze`` for two texts: precision, recall, F1 and average CRR as fractions, the
    counts, and both texts as classified tokens. Lone surrogates and non-characters are replaced with U+FFFD first
    (they could not be sent back as UTF-8); ``replaced_characters`` counts them when there are any.

    ``message`` is a sentence for the page when a text is empty (the numbers are still given), else ``None``.
    """
    ground_truth, replaced_gt = clean_text(ground_truth)
    ocr_output, replaced_ocr = clean_text(ocr_output)
    # bounded, so that one request cannot tie the server up; the answer says when the bound was reached
    match = word_match(ground_truth, ocr_output, max_distance=options.threshold,
                       case_sensitive=options.case_sensitive, ignore_punctuation=options.ignore_punctuation,
                       max_comparisons=FUZZY_COMPARISONS)
    gt_empty, ocr_empty = match.reference_words == 0, match.hypothesis_words == 0
    message = None
    if gt_empty and ocr_empty:
        message = "Both texts are empty: enter a ground truth and an OCR output to compare."
    elif gt_empty:
        message = "The ground truth is empty: every OCR word is unmatched."
    elif ocr_empty:
        message = "The OCR output is empty: every ground-truth word is unmatched."
    result: dict[str, Any] = {
        "precision": match.precision,
        "recall": match.recall,
        "f1": match.f1,
        "crr": match.crr,
        "exact_matches": match.exact_count,
        "fuzzy_matches": match.fuzzy_count,
        "ground_truth_words": match.reference_words,
        "ocr_words": match.hypothesis_words,
        "unmatched_ground_truth": len(match.unmatched_reference),
        "unmatched_ocr": len(match.unmatched_hypothesis),
        "options": options.to_dict(),
        "message": message,
        "tokens": {"ground_truth": _tokens(ground_truth, match, "ground_truth"),
                   "ocr_output": _tokens(ocr_output, match, "ocr_output")},
    }
    result["tokens_truncated"] = any(len(t) == MAX_TOKENS and len(s.split()) > MAX_TOKENS
                                     for t, s in ((result["tokens"]["ground_truth"], ground_truth),
                                                  (result["tokens"]["ocr_output"], ocr_output)))
    if replaced_gt or replaced_ocr:
        result["replaced_characters"] = replaced_gt + replaced_ocr
    if match.bounded:
        result["bounded"] = True
        bound = (f"The texts were too large to compare every pair of similar words ({FUZZY_COMPARISONS:,} edit "
                 f"distances): each word was compared with the words near it in the other text, so fuzzy pairs "
                 f"may differ from the exact matching of the plugin and of ocrmetrics score.")
        result["message"] = bound if message is None else f"{message} {bound}"
    return result


def analyze(data: Any) -> dict[str, Any]:
    """``POST /api/analyze``: ``data`` is the decoded JSON body (see :func:`analyze_texts` for the answer)."""
    if not isinstance(data, dict):
        raise ApiError(400, f"the body must be a JSON object with ground_truth and ocr_output, got "
                            f"{type(data).__name__}")
    _unknown_keys(data, _ANALYZE_KEYS, "field")
    texts = []
    for key in ("ground_truth", "ocr_output"):
        if key not in data:
            raise ApiError(400, f"missing field {key!r}: send both ground_truth and ocr_output (\"\" for an empty text)")
        if not isinstance(data[key], str):
            raise ApiError(400, f"{key} must be a string, got {type(data[key]).__name__}")
        texts.append(data[key])
    return analyze_texts(texts[0], texts[1], parse_options(data))


# ------------------------------------------------------------------------------------------------------- batch


def _decode(part: FilePart) -> str:
    """The file's text (UTF-8, a byte-order mark dropped); :class:`UnicodeDecodeError` when it is not UTF-8."""
    return part.data.decode("utf-8-sig")


def _not_utf8(filename: str, exc: UnicodeDecodeError) -> str:
    return f"{filename} is not UTF-8 text (byte {exc.start} is 0x{exc.object[exc.start]:02x}); save it as UTF-8 and upload it again"


def _misnamed(filename: str) -> str:
    """The sentence for an uploaded file named neither ``gt.txt`` nor ``<model>_out.txt``, with a suggestion."""
    lower = filename.lower()
    if lower == REFERENCE_FILE or difflib.get_close_matches(lower, [REFERENCE_FILE], n=1, cutoff=0.75):
        suggestion = REFERENCE_FILE
    else:
        stem = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", filename)
        stem = re.sub(r"[_\-. ]?(out|output|ocr|result)$", "", stem, flags=re.IGNORECASE) or "model"
        suggestion = f"{stem}{OUTPUT_SUFFIX}"
    return (f"{filename} is not named {REFERENCE_FILE} or <model>{OUTPUT_SUFFIX}, so it was not scored; rename it, "
            f"e.g. {suggestion}")


def batch(parts: list[FilePart]) -> dict[str, Any]:
    """``POST /api/batch``: one ``gt.txt`` and any number of ``<model>_out.txt`` files, plus the options as fields.

    Answers ``{"models": [...], "errors": [...], "options": ..., "ground_truth_words": n}``: one entry per model in
    upload order (its name and every field of :func:`analyze_texts`), and one ``{"file", "error"}`` per uploaded file
    that was not scored (named otherwise, not UTF-8, a model uploaded twice). No ``gt.txt``, two of them, or one that
    is not UTF-8 is a 400 error: nothing can be scored.
    """
    fields: dict[str, str] = {}
    files: list[FilePart] = []
    for part in parts:
        if part.filename is None:
            try:
                fields[part.name] = part.data.decode("utf-8")
            except UnicodeDecodeError:
                raise ApiError(400, f"form field {part.name!r} is not UTF-8 text") from None
        else:
            files.append(part)
    for key in fields:
        if key not in _OPTION_KEYS:
            raise ApiError(400, f"form field {key!r} is neither a file (a file part has a file name; with curl: "
                                f"-F {key}=@FILE) nor an option{_did_you_mean(key, _OPTION_KEYS)}; the options are "
                                f"{', '.join(_OPTION_KEYS)}")
    options = parse_options(fields)
    references = [f for f in files if f.filename == REFERENCE_FILE]
    if not references:
        names = ", ".join(str(f.filename) for f in files) or "none"
        raise ApiError(400, f"no {REFERENCE_FILE} among the uploaded files ({names}); upload the ground truth as "
                            f"{REFERENCE_FILE}")
    if len(references) > 1:
        raise ApiError(400, f"{len(references)} files named {REFERENCE_FILE} were uploaded; upload exactly one ground truth")
    try:
        ground_truth = _decode(references[0])
    except UnicodeDecodeError as exc:
        raise ApiError(400, _not_utf8(REFERENCE_FILE, exc)) from None
    models: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    seen: set[str] = set()
    for part in files:
        filename = str(part.filename)
        if filename == REFERENCE_FILE:
            continue
        model = filename[: -len(OUTPUT_SUFFIX)] if filename.endswith(OUTPUT_SUFFIX) else ""
        if not model:
            errors.append({"file": filename, "error": _misnamed(filename)})
            continue
        if model in seen:
            errors.append({"file": filename, "error": f"{filename} was uploaded twice; only the first one was scored"})
            continue
        try:
            text = _decode(part)
        except UnicodeDecodeError as exc:
            errors.append({"file": filename, "error": _not_utf8(filename, exc)})
            continue
        seen.add(model)
        models.append({"model": model, "file": filename, **analyze_texts(ground_truth, text, options)})
    if not models and not errors:
        errors.append({"file": REFERENCE_FILE, "error": f"only {REFERENCE_FILE} was uploaded; add at least one "
                                                        f"<model>{OUTPUT_SUFFIX} file to compare with it"})
    return {"models": models, "errors": errors, "options": options.to_dict()}


# ---------------------------------------------------------------------------------------------------- multipart

_PARAM = re.compile(r';\s*([A-Za-z0-9_.*-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def _params(value: str) -> tuple[str, dict[str, str]]:
    """A header value's main part and its ``; key=value`` parameters (quoted strings unquoted, ``key*`` decoded)."""
    main, _, rest = value.partition(";")
    params: dict[str, str] = {}
    for key, raw in _PARAM.findall(";" + rest):
        raw = raw.strip()
        if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        key = key.lower()
        if key.endswith("*"):  # RFC 5987: charset'language'percent-encoded
            charset, _, encoded = raw.partition("'")
            _, _, encoded = encoded.partition("'")
            try:
                raw = urllib.parse.unquote(encoded, encoding=charset or "utf-8", errors="replace")
            except LookupError:
                raw = urllib.parse.unquote(encoded, errors="replace")
            key = key[:-1]
            params[key] = raw  # the extended form wins over the plain one
        else:
            params.setdefault(key, raw)
    return main.strip().lower(), params


def parse_multipart(body: bytes, content_type: str) -> list[FilePart]:
    """The parts of a ``multipart/form-data`` body (RFC 7578), in order.

    Header bytes are read as UTF-8 (what browsers send for non-ASCII file names); the content of each part is kept as
    bytes. A body without the boundary of ``content_type``, or cut off before the closing boundary, is a 400 error.

    >>> body = b'--XX\\r\\nContent-Disposition: form-data; name="threshold"\\r\\n\\r\\n2\\r\\n--XX--\\r\\n'
    >>> parse_multipart(body, "multipart/form-data; boundary=XX")
    [FilePart(name='threshold', filename=None, data=b'2')]
    """
    kind, params = _params(content_type)
    if kind != "multipart/form-data":
        raise ApiError(415, f"send the files as multipart/form-data, not {kind or 'no content type'}")
    boundary = params.get("boundary", "")
    if not boundary or len(boundary) > 200:
        raise ApiError(400, "the multipart/form-data content type has no boundary parameter")
    delimiter = b"--" + boundary.encode("latin-1", "replace")
    start = body.find(delimiter)
    if start < 0 or (start > 0 and body[start - 2:start] != b"\r\n"):
        raise ApiError(400, "the multipart body does not contain its boundary; send it as a browser form would")
    pos = start + len(delimiter)
    parts: list[FilePart] = []
    while True:
        if body[pos:pos + 2] == b"--":
            return parts
        line_end = body.find(b"\r\n", pos)
        if line_end < 0 or body[pos:line_end].strip(b" \t"):
            raise ApiError(400, "the multipart body is malformed after a boundary line")
        pos = line_end + 2
        end = body.find(b"\r\n" + delimiter, pos)
        if end < 0:
            raise ApiError(400, "the multipart body is cut off: its closing boundary is missing")
        chunk = body[pos:end]
        if chunk.startswith(b"\r\n"):
            head, content = b"", chunk[2:]
        else:
            head, sep, content = chunk.partition(b"\r\n\r\n")
            if not sep:
                raise ApiError(400, "a part of the multipart body has no blank line after its headers")
        name, filename = None, None
        for line in head.decode("utf-8", "replace").split("\r\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() == "content-disposition":
                disposition, values = _params(value)
                if disposition != "form-data":
                    raise ApiError(400, f"a part's Content-Disposition is {disposition!r}, not form-data")
                name, filename = values.get("name"), values.get("filename")
        if name is None:
            raise ApiError(400, "a part of the multipart body has no Content-Disposition name")
        if filename is not None:
            filename = filename.replace("\\", "/").rsplit("/", 1)[-1]  # a browser may send a path; keep the name
        parts.append(FilePart(name, filename, content))
        if len(parts) > _MAX_PARTS:
            raise ApiError(400, f"more than {_MAX_PARTS} parts in one upload; send fewer files at a time")
        pos = end + 2 + len(delimiter)
