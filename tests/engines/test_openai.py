"""The generic ``openai`` vision-language engine against a real local chat-completions server."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import pytest

from pytest_ocrmetrics.engines.base import EngineError, EngineOptionError, OcrEngine
from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache
from pytest_ocrmetrics.engines.openai_compat import (
    DEFAULT_MARKDOWN_PROMPT,
    DEFAULT_PROMPT,
    OPENAI_SPEC,
    OpenAIChatEngine,
    chat_completions_url,
    parse_json_answer,
)
from pytest_ocrmetrics.engines.prefetch import Prefetcher


def engine_for(server, **options: str) -> OpenAIChatEngine:
    settings = {"openai.base_url": server.base_url, "openai.model": "fake-vlm", "openai.retries": "2", **options}
    return OPENAI_SPEC.factory(None, settings)


def sha(document) -> str:
    return hashlib.sha256(document.image_bytes()).hexdigest()


def test_request_payload_has_the_image_as_data_url_before_the_prompt(chat_server, make_document):
    document = make_document("page")
    output = engine_for(chat_server, **{"openai.system": "You are an OCR engine."}).recognize(document)
    (request,) = chat_server.chat_requests
    body = request.body
    assert request.path == "/v1/chat/completions"
    assert body["model"] == "fake-vlm" and body["max_tokens"] == 4096 and body["temperature"] == 0.0
    assert body["messages"][0] == {"role": "system", "content": "You are an OCR engine."}
    image_part, text_part = body["messages"][1]["content"]
    assert image_part["type"] == "image_url" and text_part == {"type": "text", "text": DEFAULT_PROMPT}
    prefix, _, data = image_part["image_url"]["url"].partition(",")
    assert prefix == "data:image/png;base64"
    assert base64.b64decode(data) == document.image_bytes()
    assert "Authorization" not in request.headers
    assert output.text == f"text of {sha(document)[:12]}" and output.raw == output.text
    assert output.engine == "openai" and not output.truncated and output.metadata["finish_reason"] == "stop"


def test_answers_are_matched_to_their_images(chat_server, make_document):
    first, second = make_document("a"), make_document("b")
    chat_server.answer(first.image_bytes(), "Invoice 001")
    chat_server.answer(second.image_bytes(), "Receipt 002")
    engine = engine_for(chat_server)
    assert [engine.recognize(d).text for d in (second, first)] == ["Receipt 002", "Invoice 001"]


def test_settings_reach_the_request(chat_server, make_document):
    engine = engine_for(
        chat_server,
        **{"openai.prompt": "Read it.", "openai.max_tokens": "77", "openai.temperature": "0.2",
           "openai.extra_body": '{"top_k": 1, "seed": 3}'},
    )
    engine.recognize(make_document("x"))
    body = chat_server.chat_requests[0].body
    assert (body["max_tokens"], body["temperature"], body["top_k"], body["seed"]) == (77, 0.2, 1, 3)
    assert body["messages"][0]["content"][1]["text"] == "Read it."


def test_finish_reason_length_marks_the_output_truncated(chat_server, make_document):
    document = make_document("long")
    chat_server.answer(document.image_bytes(), "Lorem ipsum lorem ipsum", finish_reason="length")
    output = engine_for(chat_server).recognize(document)
    assert output.truncated and output.metadata["finish_reason"] == "length"


def test_the_api_key_is_sent_but_never_kept(chat_server, make_document, monkeypatch, tmp_path):
    monkeypatch.setenv("MY_VLM_KEY", "sk-very-secret")
    engine = engine_for(chat_server, **{"openai.api_key_env": "MY_VLM_KEY"})
    document = make_document("k")
    output = engine.recognize(document)
    assert chat_server.chat_requests[0].headers["Authorization"] == "Bearer sk-very-secret"
    cache = OutputCache(tmp_path / "cache")
    CachingEngine(engine, cache).recognize(document)
    stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    for text in (json.dumps(engine.identity()), repr(engine), json.dumps(output.to_dict()), stored):
        assert "sk-very-secret" not in text


def test_a_named_but_missing_api_key_variable_is_a_usage_error(chat_server, monkeypatch):
    monkeypatch.delenv("NOT_SET_KEY", raising=False)
    with pytest.raises(EngineOptionError, match="NOT_SET_KEY, but it is not set"):
        engine_for(chat_server, **{"openai.api_key_env": "NOT_SET_KEY"})
    with pytest.raises(EngineOptionError, match="NAME of an environment variable"):
        engine_for(chat_server, **{"openai.api_key_env": "sk-abc-123"})


@pytest.mark.parametrize(
    ("options", "arg", "message"),
    [
        ({"openai.model": "m"}, None, "openai.base_url"),
        ({"openai.base_url": "http://127.0.0.1:1/v1"}, None, "needs a model name"),
        ({"openai.base_url": "ftp://x", "openai.model": "m"}, None, "http"),
        ({"openai.base_url": "http://h/v1", "openai.model": "m", "openai.colour": "red"}, None, "unknown setting openai.colour"),
        ({"openai.base_url": "http://h/v1", "openai.model": "m", "openai.max_tokens": "many"}, None, "openai.max_tokens must be a whole number >= 1"),
        ({"openai.base_url": "http://h/v1", "openai.model": "m", "openai.extra_body": "[1]"}, None, "JSON object"),
        ({"openai.base_url": "http://h/v1", "openai.model": "m", "openai.mode": "poetry"}, None, "'text', 'fields' or 'markdown'"),
        ({"openai.base_url": "http://h/v1", "openai.model": "m", "openai.timeout": "0"}, None, "positive"),
        ({"openai.base_url": "http://h/v1", "openai.model": "m", "openai.timeout": "nan"}, None, "positive number of seconds"),
    ],
)
def test_bad_settings_are_clear_usage_errors(options, arg, message):
    with pytest.raises(EngineOptionError, match=message):
        OPENAI_SPEC.factory(arg, options)


def test_model_may_come_from_the_engine_argument():
    engine = OPENAI_SPEC.factory("qwen2.5-vl", {"base_url": "http://127.0.0.1:8000"})
    assert engine.model == "qwen2.5-vl"
    assert engine.client.url == "http://127.0.0.1:8000/v1/chat/completions"
    assert isinstance(engine, OcrEngine) and engine.concurrent


def test_chat_completions_url_forms():
    assert chat_completions_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert chat_completions_url("https://api.example.com/openai/v1") == "https://api.example.com/openai/v1/chat/completions"


def test_identity_holds_what_decides_the_output_and_not_the_server_address(chat_server):
    engine = engine_for(chat_server)
    identity = engine.identity()
    assert identity["model"] == "fake-vlm" and identity["prompt"] == DEFAULT_PROMPT
    assert str(chat_server.port) not in json.dumps(identity)
    other = engine_for(chat_server, **{"openai.prompt": "Other."})
    assert other.identity() != identity


def test_images_that_are_not_web_formats_are_sent_as_png(chat_server, tmp_path, make_document):
    Image = pytest.importorskip("PIL.Image")
    document = make_document("tiff")
    Image.new("RGB", (20, 10), "white").save(document.image_path, format="TIFF")
    engine_for(chat_server).recognize(document)
    url = chat_server.chat_requests[0].body["messages"][0]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as sent:
        assert sent.format == "PNG" and sent.size == (20, 10)


def test_an_answer_without_choices_is_a_document_error(chat_server, make_document):
    chat_server.fail_next("empty-choices")
    with pytest.raises(EngineError, match=r"no choices\[0\]\.message"):
        engine_for(chat_server).recognize(make_document("e"))


def test_transient_server_errors_are_retried_by_the_engine(chat_server, make_document):
    chat_server.fail_next("503")
    chat_server.retry_after = "0"
    output = engine_for(chat_server).recognize(make_document("r"))
    assert output.metadata["attempts"] == 2


def test_a_missing_image_is_a_document_error(chat_server, make_document):
    document = make_document("gone")
    document.image_path.unlink()
    with pytest.raises(EngineError, match="does not exist"):
        engine_for(chat_server).recognize(document)


def test_a_file_that_is_not_an_image_is_named_with_the_problem_and_never_sent(chat_server, make_document):
    document = make_document("notes")
    document.image_path.write_text("meeting notes, not a scan\n", encoding="utf-8")
    with pytest.raises(EngineError) as excinfo:
        engine_for(chat_server).recognize(document)
    message = str(excinfo.value)
    assert f"image {str(document.image_path)!r} of document 'notes.png'" in message
    assert "is not an image: it starts with b'meeting notes, n'" in message and "BytesIO" not in message
    assert chat_server.chat_requests == []


@pytest.mark.parametrize("content", [b"II*\x00" + b"\x00" * 40, b"BM" + b"\xff" * 10])
def test_an_image_that_cannot_be_converted_is_named_with_the_problem(chat_server, make_document, content):
    pytest.importorskip("PIL.Image")
    document = make_document("broken")
    document.image_path.write_bytes(content)  # the signature of TIFF/BMP, then garbage: converted to PNG first
    with pytest.raises(EngineError) as excinfo:
        engine_for(chat_server).recognize(document)
    message = str(excinfo.value)
    assert message.startswith(f"cannot convert image {str(document.image_path)!r} of document 'broken.png' to PNG")
    assert "BytesIO" not in message and "0x" not in message and "check that the file is a complete, valid image" in message
    assert chat_server.chat_requests == []


# -- fields mode ------------------------------------------------------------------------------------------------------


def test_fields_mode_asks_for_the_ground_truth_keys_and_parses_json(chat_server, make_document):
    document = make_document("receipt", fields={"company": "ACME", "total": "9.90"})
    answer = '```json\n{"company": "ACME SDN BHD", "total": "9.90"}\n```'
    chat_server.answer(document.image_bytes(), answer)
    engine = engine_for(chat_server, **{"openai.mode": "fields"})
    output = engine.recognize(document)
    prompt = chat_server.chat_requests[0].body["messages"][0]["content"][1]["text"]
    assert '"company", "total"' in prompt and "JSON" in prompt
    assert output.fields == {"company": "ACME SDN BHD", "total": "9.90"}
    assert output.raw == answer and output.text == '{"company": "ACME SDN BHD", "total": "9.90"}'


def test_fields_mode_uses_the_schema_when_there_are_no_fields(chat_server, make_document):
    schema = {"type": "object", "properties": {"date": {"type": "string"}, "total": {"type": "number"}}}
    document = make_document("schema-only", schema=schema)
    chat_server.answer(document.image_bytes(), 'Here you go: {"date": "2024-01-02", "total": 3.5} Hope it helps.')
    output = engine_for(chat_server, **{"openai.mode": "fields"}).recognize(document)
    prompt = chat_server.chat_requests[0].body["messages"][0]["content"][1]["text"]
    assert '"date", "total"' in prompt and json.dumps(schema) in prompt
    assert output.fields == {"date": "2024-01-02", "total": 3.5}


def test_fields_mode_keeps_invalid_json_as_raw_with_the_problem(chat_server, make_document):
    document = make_document("bad", fields={"total": "1"})
    chat_server.answer(document.image_bytes(), "I cannot read this receipt.")
    output = engine_for(chat_server, **{"openai.mode": "fields"}).recognize(document)
    assert output.fields is None and output.raw == "I cannot read this receipt."
    assert output.metadata["fields_error"] == "no JSON object found in the answer"


def test_fields_mode_without_field_names_fails_that_document(chat_server, make_document):
    with pytest.raises(EngineError, match="neither ground-truth fields nor a JSON schema"):
        engine_for(chat_server, **{"openai.mode": "fields"}).recognize(make_document("plain"))


def test_fields_mode_cache_key_changes_with_the_field_names(chat_server, make_document, tmp_path):
    engine = engine_for(chat_server, **{"openai.mode": "fields"})
    cache = OutputCache(tmp_path)
    a = make_document("same", fields={"total": "1"})
    b = make_document("same", fields={"total": "1", "date": "x"})
    assert cache.key(a, engine) != cache.key(b, engine)
    text_engine = engine_for(chat_server)
    assert cache.key(a, text_engine) == cache.key(b, text_engine)


@pytest.mark.parametrize(("answer", "text"), [
    ("```markdown\n# Title\n\n<table><tr><td>1</td></tr></table>\n```", "# Title\n\n<table><tr><td>1</td></tr></table>"),
    ("# Title\n\n$$\nE = mc^2\n$$", "# Title\n\n$$\nE = mc^2\n$$"),  # no fence: kept as it is
    ("Intro\n\n```python\nx = 1\n```", "Intro\n\n```python\nx = 1\n```"),  # a code block of the page stays
])
def test_markdown_mode_asks_for_markdown_and_keeps_it(chat_server, make_document, answer, text):
    document = make_document("page")
    chat_server.answer(document.image_bytes(), answer)
    engine = engine_for(chat_server, **{"openai.mode": "markdown"})
    output = engine.recognize(document)
    prompt = chat_server.chat_requests[0].body["messages"][0]["content"][1]["text"]
    assert prompt == DEFAULT_MARKDOWN_PROMPT and "HTML" in prompt and "LaTeX" in prompt
    assert output.text == text and output.raw == answer
    assert engine.identity()["mode"] == "markdown"  # a cached text-mode output is never served for it


def test_parse_json_answer_reports_what_went_wrong():
    assert parse_json_answer('{"a": 1}') == ({"a": 1}, None)
    value, problem = parse_json_answer('{"a": 1,}')
    assert value is None and problem.startswith("the answer is not valid JSON (")
    assert parse_json_answer("[1, 2]") == ([1, 2], None)  # valid JSON; the engine reports that it is no object


# -- with the prefetcher and the cache --------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 8])
def test_the_server_sees_exactly_the_configured_number_of_requests_in_flight(chat_server, make_document, concurrency):
    documents = [make_document(f"doc{i:02d}") for i in range(16)]
    chat_server.hold_until_in_flight(concurrency)
    prefetcher = Prefetcher(engine_for(chat_server), documents, concurrency=concurrency)
    prefetcher.start()
    try:
        texts = [prefetcher.result(d).text for d in documents]
    finally:
        prefetcher.close()
    assert texts == [f"text of {sha(d)[:12]}" for d in documents]
    assert chat_server.max_in_flight == concurrency


def test_prefetch_starts_in_collection_order(chat_server, make_document):
    documents = [make_document(f"o{i}") for i in range(6)]
    prefetcher = Prefetcher(engine_for(chat_server), documents, concurrency=1)
    prefetcher.start()
    for document in documents:
        prefetcher.result(document)
    prefetcher.close()
    assert [r.image_sha256 for r in chat_server.chat_requests] == [sha(d) for d in documents]


def test_a_dead_server_ends_in_errors_not_a_stall(chat_server, make_document):
    documents = [make_document(f"dead{i}") for i in range(12)]
    engine = engine_for(chat_server, **{"openai.retries": "1"})
    chat_server.stop()
    prefetcher = Prefetcher(engine, documents, concurrency=4)
    prefetcher.start()
    errors = []
    for document in documents:
        with pytest.raises(EngineError) as excinfo:
            prefetcher.result(document)
        errors.append(str(excinfo.value))
    prefetcher.close()
    assert all("connection error" in error for error in errors)
    assert sum("already unreachable" in error for error in errors) >= 12 - 4  # later ones were not retried


def test_a_cached_suite_sends_no_request(chat_server, make_document, tmp_path):
    documents = [make_document(f"c{i}") for i in range(5)]
    cache = OutputCache(tmp_path / "cache")
    for _ in range(2):
        engine = CachingEngine(engine_for(chat_server), cache)
        with Prefetcher(engine, documents, concurrency=4) as prefetcher:
            outputs = [prefetcher.result(d) for d in documents]
    assert len(chat_server.chat_requests) == 5
    assert all(o.cached for o in outputs) and (cache.hits, cache.misses) == (5, 5)


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_server_redirecting_elsewhere_errors_the_document_and_never_sends_the_key(
        chat_server, make_document, monkeypatch, status):
    from tests.helpers.servers import load_fake_server

    monkeypatch.setenv("MY_VLM_KEY", "sk-very-secret")
    with load_fake_server().FakeChatServer() as elsewhere:
        target = elsewhere.base_url + "/chat/completions"
        chat_server.redirect(status, target)
        engine = engine_for(chat_server, **{"openai.api_key_env": "MY_VLM_KEY"})
        with pytest.raises(EngineError) as excinfo:
            engine.recognize(make_document("r"))
        assert elsewhere.requests == []  # the other host never saw the request, the page or the key
    message = str(excinfo.value)
    assert f"{chat_server.base_url}/chat/completions answered HTTP {status}, a redirect to {target};" in message
    assert "does not follow redirects" in message and "sk-very-secret" not in message
    assert len(chat_server.chat_requests) == 1  # a redirect is not retried


# -- the answer-size limit is a setting (issue 20 A12) ------------------------------------------------------------


def test_max_response_mb_limits_the_answer_read_and_names_itself(chat_server, make_document):
    """``openai.max_response_mb`` is the most of one answer read: an answer of 1.5 MiB errors its own document under
    a 1 MiB limit (naming the setting) and is read whole under the default 64 MiB; other documents are unaffected."""
    big, small = make_document("big"), make_document("small")
    chat_server.answer(big.image_bytes(), "x" * (3 * 2**19))  # 1.5 MiB of text
    chat_server.answer(small.image_bytes(), "Receipt 002")
    limited = engine_for(chat_server, **{"openai.max_response_mb": "1"})
    with pytest.raises(EngineError, match=r"with more than 1,048,576 bytes \(1 MiB, openai\.max_response_mb, the most"):
        limited.recognize(big)
    assert limited.recognize(small).text == "Receipt 002"
    assert len(engine_for(chat_server).recognize(big).text) == 3 * 2**19
    assert engine_for(chat_server, **{"openai.max_response_mb": "0.5"}).client.http.max_response_bytes == 2**19


@pytest.mark.parametrize("value", ["0", "-1", "none", "inf", "nan"])
def test_max_response_mb_must_be_a_positive_number(chat_server, value):
    with pytest.raises(EngineOptionError) as raised:
        engine_for(chat_server, **{"openai.max_response_mb": value})
    assert str(raised.value) == f"openai.max_response_mb must be a positive number of MiB, got {value!r}"
