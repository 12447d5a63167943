"""``--ocr-engine=deepseek``: the server backend against a real local server, and the settings of every backend."""

from __future__ import annotations

import base64
import importlib.util
import json

import pytest

from pytest_ocrmetrics.engines.base import EngineOptionError, EngineUnavailable, OcrEngine, Word
from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache
from pytest_ocrmetrics.engines.deepseek import (
    DEEPSEEK_SPEC,
    DEFAULT_VLLM_XARGS,
    RESOLUTION_MODES,
    DeepSeekRemoteCodeEngine,
    DeepSeekServerEngine,
    DeepSeekTransformersEngine,
)
from pytest_ocrmetrics.engines.prefetch import Prefetcher

EOS = "<｜end▁of▁sentence｜>"
HAVE_TORCH = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("transformers") is not None


def server_engine(server, **options: str) -> DeepSeekServerEngine:
    return DEEPSEEK_SPEC.factory(None, {"deepseek.base_url": server.base_url, **options})


def test_server_payload_follows_the_vllm_recipe(chat_server, make_document):
    document = make_document("page")
    server_engine(chat_server).recognize(document)
    (request,) = chat_server.chat_requests
    body = request.body
    assert body["model"] == "deepseek-ai/DeepSeek-OCR"
    (message,) = body["messages"]
    assert message["role"] == "user"
    image_part, text_part = message["content"]  # the image comes BEFORE the text
    assert image_part["type"] == "image_url"
    assert base64.b64decode(image_part["image_url"]["url"].split(",", 1)[1]) == document.image_bytes()
    assert text_part == {"type": "text", "text": "Free OCR."}  # the bare prompt, no <image> placeholder
    assert body["temperature"] == 0.0 and body["max_tokens"] == 4096
    assert body["skip_special_tokens"] is False
    assert body["vllm_xargs"] == {"ngram_size": 30, "window_size": 90, "whitelist_token_ids": [128821, 128822]}
    assert "Authorization" not in request.headers


def test_server_settings_reach_the_request(chat_server, make_document):
    engine = server_engine(
        chat_server,
        **{
            "deepseek.model": "deepseek-ai/DeepSeek-OCR-2",
            "deepseek.prompt": "<|grounding|>Convert the document to markdown.",
            "deepseek.max_tokens": "2048",
            "deepseek.vllm_xargs": '{"ngram_size": 20, "window_size": 50}',
            "deepseek.extra_body": '{"top_p": 1.0}',
        },
    )
    engine.recognize(make_document("p"))
    body = chat_server.chat_requests[0].body
    assert body["model"] == "deepseek-ai/DeepSeek-OCR-2" and body["max_tokens"] == 2048 and body["top_p"] == 1.0
    assert body["messages"][0]["content"][1]["text"] == "<|grounding|>Convert the document to markdown."
    assert body["vllm_xargs"] == {"ngram_size": 20, "window_size": 50}


def test_an_image_placeholder_copied_into_the_server_prompt_is_dropped(chat_server, make_document):
    server_engine(chat_server, **{"deepseek.prompt": "<image>\nFree OCR."}).recognize(make_document("p"))
    assert chat_server.chat_requests[0].body["messages"][0]["content"][1]["text"] == "Free OCR."


def test_grounded_markdown_becomes_text_plus_boxes_and_raw_is_kept(chat_server, make_document):
    document = make_document("grounded")
    raw = (
        "<|ref|>title<|/ref|><|det|>[[330, 198, 558, 230]]<|/det|>\n# Invoice\n\n"
        "<|ref|>text<|/ref|><|det|>[[100, 250, 900, 280]]<|/det|>\nTotal 12.50" + EOS
    )
    chat_server.answer(document.image_bytes(), raw)
    output = server_engine(chat_server).recognize(document)
    assert output.text == "# Invoice\n\nTotal 12.50"
    assert output.raw == raw
    assert output.words == (Word("# Invoice", (330.0, 198.0, 558.0, 230.0)), Word("Total 12.50", (100.0, 250.0, 900.0, 280.0)))
    assert output.metadata["box_grid"] == 999 and output.metadata["backend"] == "server"
    assert output.engine == "deepseek" and not output.truncated


def test_finish_reason_length_marks_truncation_and_drops_the_cut_tag(chat_server, make_document):
    document = make_document("loop")
    chat_server.answer(document.image_bytes(), "Row 1\nRow 2\n<|ref|>tab", finish_reason="length")
    output = server_engine(chat_server).recognize(document)
    assert output.truncated and output.text == "Row 1\nRow 2"
    assert output.metadata["truncated_tag"] is True and output.metadata["finish_reason"] == "length"


def test_the_api_key_is_sent_but_never_in_identity_cache_or_output(chat_server, make_document, monkeypatch, tmp_path):
    monkeypatch.setenv("DEEPSEEK_KEY", "ds-top-secret")
    engine = server_engine(chat_server, **{"deepseek.api_key_env": "DEEPSEEK_KEY"})
    document = make_document("k")
    cache = OutputCache(tmp_path / "c")
    output = CachingEngine(engine, cache).recognize(document)
    assert chat_server.chat_requests[0].headers["Authorization"] == "Bearer ds-top-secret"
    stored = "".join(p.read_text() for p in (tmp_path / "c").rglob("*.json"))
    for text in (json.dumps(engine.identity()), repr(engine), json.dumps(output.to_dict()), stored):
        assert "ds-top-secret" not in text


def test_server_identity_covers_model_prompt_and_decoding_but_not_the_url(chat_server):
    identity = server_engine(chat_server).identity()
    assert identity["backend"] == "server" and identity["model"] == "deepseek-ai/DeepSeek-OCR"
    assert identity["vllm_xargs"] == dict(DEFAULT_VLLM_XARGS) and identity["max_tokens"] == 4096
    assert str(chat_server.port) not in json.dumps(identity)
    assert server_engine(chat_server, **{"deepseek.prompt": "x"}).identity() != identity


def test_server_requests_run_concurrently(chat_server, make_document):
    documents = [make_document(f"d{i}") for i in range(12)]
    engine = server_engine(chat_server)
    assert engine.concurrent and isinstance(engine, OcrEngine)
    chat_server.hold_until_in_flight(6)
    with Prefetcher(engine, documents, concurrency=6) as prefetcher:
        outputs = [prefetcher.result(d) for d in documents]
    assert chat_server.max_in_flight == 6 and len(outputs) == 12


# -- factory: backends and settings -----------------------------------------------------------------------------------


def test_backend_defaults_to_server_when_a_url_is_set():
    assert isinstance(DEEPSEEK_SPEC.factory(None, {"base_url": "http://127.0.0.1:8000/v1"}), DeepSeekServerEngine)
    assert isinstance(DEEPSEEK_SPEC.factory("server", {"base_url": "http://127.0.0.1:8000/v1"}), DeepSeekServerEngine)


@pytest.mark.skipif(not HAVE_TORCH, reason="torch/transformers not installed: pip install torch==2.13.0 'transformers>=5'")
def test_backend_defaults_to_transformers_without_a_url():
    engine = DEEPSEEK_SPEC.factory(None, {"deepseek.device": "cpu", "deepseek.batch_size": "2"})
    assert isinstance(engine, DeepSeekTransformersEngine)
    assert engine.batch_size == 2 and engine.model_id == "deepseek-community/DeepSeek-OCR-2"
    assert callable(engine.recognize_batch) and not engine.concurrent


def test_local_backends_without_torch_are_unavailable_with_the_install_command(monkeypatch):
    import pytest_ocrmetrics.engines.deepseek as deepseek

    # transformers "installed" whatever this machine has, torch not: the sentence names torch alone
    real = deepseek.importlib.util.find_spec
    fake = {"torch": None, "transformers": object()}
    monkeypatch.setattr(deepseek.importlib.util, "find_spec", lambda name: fake[name] if name in fake else real(name))
    with pytest.raises(EngineUnavailable, match=r"needs torch: pip install torch 'transformers>=5'"):
        DEEPSEEK_SPEC.factory("transformers", {})
    fake["transformers"] = None  # neither: both named
    with pytest.raises(EngineUnavailable, match=r"needs torch and transformers: pip install torch 'transformers>=5'"):
        DEEPSEEK_SPEC.factory("transformers", {})


def test_remote_code_needs_an_explicit_opt_in():
    with pytest.raises(EngineOptionError, match="deepseek.trust_remote_code=true"):
        DEEPSEEK_SPEC.factory(None, {"deepseek.backend": "remote-code"})


@pytest.mark.skipif(not HAVE_TORCH, reason="torch/transformers not installed: pip install torch==2.13.0 'transformers>=5'")
def test_remote_code_modes_are_chosen_by_name():
    engine = DEEPSEEK_SPEC.factory("remote-code", {"trust_remote_code": "true", "mode": "Tiny", "device": "cpu"})
    assert isinstance(engine, DeepSeekRemoteCodeEngine)
    assert engine.resolution == RESOLUTION_MODES["tiny"]
    assert (engine.resolution.base_size, engine.resolution.image_size, engine.resolution.crop_mode) == (512, 512, False)
    gundam = DEEPSEEK_SPEC.factory("remote-code", {"trust_remote_code": "true", "device": "cpu"})
    assert (gundam.resolution.base_size, gundam.resolution.image_size, gundam.resolution.crop_mode) == (1024, 640, True)
    with pytest.raises(EngineOptionError, match="Tiny, Small, Base, Large, Gundam"):
        DEEPSEEK_SPEC.factory("remote-code", {"trust_remote_code": "true", "mode": "huge"})


@pytest.mark.parametrize(
    ("arg", "options", "message"),
    [
        (None, {"backend": "cloud"}, "must be one of server, transformers, remote-code"),
        ("server", {}, "needs deepseek.base_url"),
        (None, {"base_url": "http://h/v1", "batch_size": "4"}, "deepseek.batch_size do not apply to deepseek.backend=server"),
        ("transformers", {"base_url": "http://h/v1"}, "deepseek.base_url do not apply"),
        ("server", {"backend": "transformers"}, "disagree"),
        (None, {"base_url": "http://h/v1", "max_tokens": "0"}, "deepseek.max_tokens must be a whole number >= 1"),
        ("transformers", {"device": "tpu"}, "auto, cpu, cuda or cuda:N"),
        (None, {"unknown": "1"}, "unknown setting deepseek.unknown"),
    ],
)
def test_bad_settings_are_clear_usage_errors(arg, options, message):
    with pytest.raises(EngineOptionError, match=message):
        DEEPSEEK_SPEC.factory(arg, options)


def test_every_documented_setting_is_accepted_somewhere():
    assert {"backend", "base_url", "model", "prompt", "max_tokens", "api_key_env", "mode", "device"} <= set(
        DEEPSEEK_SPEC.options
    )


def test_the_server_backend_takes_max_response_mb(chat_server):
    """``deepseek.max_response_mb`` reaches the server backend's HTTP client and is named in its limit error; the
    local backends refuse it (they read no answer)."""
    engine = server_engine(chat_server, **{"deepseek.max_response_mb": "2"})
    assert engine.client.http.max_response_bytes == 2 * 2**20
    assert engine.client.http.limit_setting == "deepseek.max_response_mb"
    assert server_engine(chat_server).client.http.max_response_bytes == 64 * 2**20
    with pytest.raises(EngineOptionError, match="deepseek.max_response_mb must be a positive number of MiB"):
        server_engine(chat_server, **{"deepseek.max_response_mb": "0"})
    with pytest.raises(EngineOptionError, match=r"deepseek\.max_response_mb do not apply to deepseek\.backend=transformers"):
        DEEPSEEK_SPEC.check("transformers", {"deepseek.max_response_mb": "2"})
