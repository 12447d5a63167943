"""``--ocr-engine=openai``: any vision-language model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

vLLM, SGLang, Ollama, LM Studio, llama.cpp's server and hosted APIs all speak this schema. Each document becomes one
request: a user message whose content is the page as a base64 ``data:`` URL followed by the prompt. Settings
(``--ocr-engine-option openai.KEY=VALUE`` or the ini key ``ocr_engine_options``):

=============== =====================================================================================
In ``markdown`` mode the default prompt is :data:`DEFAULT_MARKDOWN_PROMPT` and the answer's Markdown is kept as the
output's text; only a code fence wrapping the whole answer (```` ```markdown ... ``` ````, which chat models like to
add) is removed. The untouched answer stays in ``OcrOutput.raw``.

In ``fields`` mode the prompt lists the document's field names (from its ground-truth ``fields``, else the
``properties`` of its JSON schema) and the answer is parsed into ``OcrOutput.fields``, so ``assert_field_f1`` and
``assert_json_valid`` work on model output; the untouched answer stays in ``OcrOutput.raw``.

The API key is sent as ``Authorization: Bearer ...`` and nowhere else: not in ``identity()`` (so not in cache keys),
not in errors, not in reports. A redirect is never followed (it would carry the key to the address it names): a 3xx
answer errors the document with a sentence naming both addresses
(:func:`~pytest_ocrmetrics.engines.http.redirect_message`).

Example::

    pytest --ocr-engine=openai --ocr-engine-option openai.base_url=http://127.0.0.1:8000/v1 \\
           --ocr-engine-option openai.model=Qwen/Qwen2.5-VL-7B-Instruct --ocr-concurrency 16
"""

from __future__ import annotations

import base64
import io
import json
import re
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Mapping

from pytest_ocrmetrics.core.documents import Document, sniff_image_format
from pytest_ocrmetrics.engines.base import (
    EngineError,
    EngineOptionError,
    EngineSpec,
    EngineUnavailable,
    OcrOutput,
    image_decode_problem,
    read_image,
)
from pytest_ocrmetrics.engines.http import MAX_RESPONSE_BYTES, JsonHttpClient, RetryPolicy
from pytest_ocrmetrics.engines.settings import (
    api_key_from_env,
    float_setting,
    int_setting,
    json_object_setting,
    normalise_settings,
)

__all__ = [
    "OPENAI_SPEC",
    "DEFAULT_PROMPT",
    "DEFAULT_FIELDS_PROMPT",
    "DEFAULT_MARKDOWN_PROMPT",
    "MODES",
    "unwrap_markdown_fence",
    "OpenAIChatEngine",
    "ChatCompletionsEngine",
    "ChatCompletionsClient",
    "ChatAnswer",
    "chat_completions_url",
    "image_data_url",
    "parse_json_answer",
    "field_names",
]

ADAPTER_VERSION = 1
"""Part of the engine identity: bumped when the way requests are built or answers parsed changes."""

DEFAULT_PROMPT = (
    "Transcribe all text in this image exactly as it appears, in reading order, keeping line breaks. "
    "Output only the transcribed text, without any commentary or formatting."
)
DEFAULT_MARKDOWN_PROMPT = (
    "Convert this document page to Markdown. Recognise all text exactly as printed, without guessing, in reading "
    "order, keeping the structure (headings, paragraphs, lists). Write every table in HTML, wrapped in <table> and "
    "</table>. Write mathematical formulas in LaTeX: inline ones as \\( ... \\), display ones as \\[ ... \\]. "
    "Ignore figures: do not describe or convert images. Separate titles, paragraphs, lists and tables by blank lines. "
    "Output only the Markdown."
)
"""The ``markdown`` mode's prompt, after the instructions OmniDocBench gives general vision-language models (HTML
tables, LaTeX formulas, no figure descriptions, blocks separated by blank lines), so the output segments the way the
benchmark's matcher expects."""
DEFAULT_FIELDS_PROMPT = (
    "Extract these fields from the document image: {fields}. Answer with one JSON object whose keys are exactly "
    "these field names and whose values are the text as printed in the document (null when a field is absent). "
    "Output only the JSON object."
)

_WEB_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


# -- requests ---------------------------------------------------------------------------------------------------------


def chat_completions_url(base_url: str) -> str:
    """The chat-completions URL for a base URL, the way OpenAI clients build it.

    >>> chat_completions_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> chat_completions_url("http://127.0.0.1:8000")
    'http://127.0.0.1:8000/v1/chat/completions'
    >>> chat_completions_url("https://host/v1/chat/completions")
    'https://host/v1/chat/completions'
    """
    parsed = urllib.parse.urlsplit(base_url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise EngineOptionError(f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
    path = parsed.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = (path or "/v1") + "/chat/completions"
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path, parsed.query, ""))


#: Formats a chat-completions server takes as they are (others are converted to PNG first).
_MIME_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WebP": "image/webp"}


def _sniff_mime(data: bytes) -> str | None:
    """The MIME type of an image a server takes as it is, from its first bytes (:func:`sniff_image_format`)."""
    return _MIME_TYPES.get(sniff_image_format(data[:16]) or "")


def image_data_url(document: Document) -> str:
    """The document's image as a base64 ``data:`` URL.

    PNG, JPEG, GIF and WebP are sent as they are; anything else (TIFF, BMP, ...) is converted to PNG first (with
    Pillow), since hosted APIs accept only those four. A missing file, a file that is not an image or one Pillow
    cannot decode is an :class:`EngineError` naming the file, the document and the problem.
    """
    data = read_image(document)  # the checked bytes the output cache hashed
    mime = _sniff_mime(data)
    if mime not in _WEB_IMAGE_TYPES:
        try:
            from PIL import Image
        except ImportError:
            raise EngineUnavailable(
                f"image {document.image_path} of document {document.id!r} is not PNG/JPEG/GIF/WebP; converting it "
                "needs Pillow: pip install pillow"
            ) from None
        try:
            with Image.open(io.BytesIO(data)) as image:
                buffer = io.BytesIO()
                image.save(buffer, format="PNG")
        except Exception as exc:  # noqa: BLE001 - any decoder error means the same thing here
            problem = image_decode_problem(exc, data)
            raise EngineError(
                f"cannot convert image {str(document.image_path)!r} of document {document.id!r} to PNG for the server: "
                f"{problem}; check that the file is a complete, valid image"
            ) from None
        data, mime = buffer.getvalue(), "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@dataclass(frozen=True)
class ChatAnswer:
    """The parts of a chat-completions answer an engine needs."""

    content: str
    finish_reason: str | None
    model: str | None
    usage: Mapping[str, Any]
    attempts: int
    elapsed_s: float

    @property
    def truncated(self) -> bool:
        """Whether the answer stopped at the token limit (``finish_reason == "length"``)."""
        return self.finish_reason == "length"

    def metadata(self) -> dict[str, Any]:
        """What an engine keeps about the request in ``OcrOutput.metadata`` (never the API key)."""
        metadata: dict[str, Any] = {"finish_reason": self.finish_reason, "attempts": self.attempts}
        if self.model:
            metadata["served_model"] = self.model
        if self.usage:
            metadata["usage"] = dict(self.usage)
        return metadata


class ChatCompletionsClient:
    """Sends chat-completions requests to one server and pulls the answer out of the response.

    The API key lives only in the HTTP client's headers; every error message that quotes the server's answer passes
    through :meth:`JsonHttpClient.redact`, so a server echoing the key never puts it in a report.
    """

    def __init__(self, base_url: str, *, api_key: str | None, timeout_s: float, retries: int,
                 max_response_bytes: int = MAX_RESPONSE_BYTES, limit_setting: str = "max_response_mb") -> None:
        self.url = chat_completions_url(base_url)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = JsonHttpClient(timeout_s=timeout_s, retry=RetryPolicy(retries=retries), headers=headers,
                                   max_response_bytes=max_response_bytes, limit_setting=limit_setting)

    def __repr__(self) -> str:
        return f"ChatCompletionsClient({self.url!r})"

    def complete(self, payload: Mapping[str, Any]) -> ChatAnswer:
        """POST ``payload`` and return the first choice's text; EngineError when the answer has none."""
        response = self.http.post_json(self.url, payload)
        body = response.body
        try:
            choice = body["choices"][0]
            message = choice.get("message") or {}
            content = message.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            excerpt = self.http.redact(json.dumps(body))[:300]
            raise EngineError(f"answer from {self.url} has no choices[0].message: {excerpt}") from None
        if isinstance(content, list):  # some servers answer with content parts
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if content is None:
            refusal = message.get("refusal")
            if refusal:
                raise EngineError(self.http.redact(f"the model at {self.url} refused: {refusal}"))
            content = ""
        if not isinstance(content, str):
            raise EngineError(
                f"answer from {self.url} has a non-text message content: {self.http.redact(json.dumps(content))[:300]}"
            )
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        return ChatAnswer(
            content=content,
            finish_reason=choice.get("finish_reason"),
            model=body.get("model"),
            usage=usage,
            attempts=response.attempts,
            elapsed_s=response.elapsed_s,
        )

    def cancel(self) -> None:
        self.http.cancel()


def response_bytes(max_response_mb: float) -> int:
    """``max_response_mb`` MiB in bytes (at least 1): the ``max_response_bytes`` of the engine's HTTP client.

    >>> response_bytes(64) == MAX_RESPONSE_BYTES
    True
    """
    return max(1, int(max_response_mb * 2**20))


def max_response_mb_setting(engine: str, settings: Mapping[str, str]) -> float:
    """``ENGINE.max_response_mb``: the most of one answer read, a positive number of MiB (default 64); 0 or a
    negative number is refused (a server could then answer gigabytes)."""
    return float(float_setting(engine, settings, "max_response_mb", MAX_RESPONSE_BYTES / 2**20, positive=True,
                               unit="MiB"))


# -- field extraction -------------------------------------------------------------------------------------------------


def field_names(document: Document) -> list[str]:
    """The field names to ask for: the ground-truth fields' keys, else the JSON schema's ``properties``."""
    if document.fields:
        return list(document.fields)
    properties = (document.schema or {}).get("properties")
    if isinstance(properties, Mapping) and properties:
        return list(properties)
    raise EngineError(
        f"document {document.id!r} ({document.source or 'no source'}) has neither ground-truth fields nor a JSON "
        "schema with properties, so mode=fields has no field names to ask for"
    )


MODES = ("text", "fields", "markdown")
"""The ``openai.mode`` values."""

_DEFAULT_PROMPTS = {"text": DEFAULT_PROMPT, "fields": DEFAULT_FIELDS_PROMPT, "markdown": DEFAULT_MARKDOWN_PROMPT}

_MARKDOWN_FENCE = re.compile(r"^\s*```(?:markdown|md|Markdown|MD)?[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)


def unwrap_markdown_fence(content: str) -> str:
    r"""A Markdown answer without the code fence that wraps all of it, when one does (else the answer unchanged): a
    fence inside the answer (a code block of the page) stays.

    >>> unwrap_markdown_fence("```markdown\n# Title\n\nText\n```")
    '# Title\n\nText'
    >>> unwrap_markdown_fence("# Title\n\n```python\nx = 1\n```")
    '# Title\n\n```python\nx = 1\n```'
    """
    fenced = _MARKDOWN_FENCE.match(content)
    if fenced is None or "```" in fenced.group(1):
        return content
    return fenced.group(1)


_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


def parse_json_answer(content: str) -> tuple[Any, str | None]:
    """Parse a model's JSON answer, tolerating a Markdown code fence and text around one object.

    Returns ``(value, None)`` or ``(None, problem)``.

    >>> parse_json_answer('```json\\n{"total": "12.50"}\\n```')
    ({'total': '12.50'}, None)
    >>> parse_json_answer("no json here")[1]
    'no JSON object found in the answer'
    """
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        first_error = str(exc)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None, "no JSON object found in the answer"
    try:
        return json.loads(text[start : end + 1]), None
    except json.JSONDecodeError:
        return None, f"the answer is not valid JSON ({first_error})"


# -- the engines -----------------------------------------------------------------------------------------------------


class ChatCompletionsEngine:
    """The shared part of every engine behind a chat-completions server: the client, the request, cancellation.

    One request per page: a user message holding the page as a base64 ``data:`` URL, then :meth:`instruction` (after
    the ``system`` message when there is one); ``extra_body`` is merged last and may override any key. A subclass sets
    ``name``, ``identity()`` (starting from :meth:`_common_identity`, what this class puts in every request) and
    :meth:`output`. ``concurrent = True``: ``recognize`` is thread-safe, so the prefetcher sends several at once.
    """

    name: str
    concurrent = True
    system: str | None = None

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        prompt: str,
        max_tokens: int,
        temperature: float,
        api_key: str | None,
        extra_body: Mapping[str, Any] | None,
        timeout_s: float,
        retries: int,
        max_response_mb: float = MAX_RESPONSE_BYTES / 2**20,
    ) -> None:
        self.model = model
        self.prompt = prompt
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})
        self.client = ChatCompletionsClient(base_url, api_key=api_key, timeout_s=timeout_s, retries=retries,
                                            max_response_bytes=response_bytes(max_response_mb),
                                            limit_setting=f"{self.name}.max_response_mb")

    def _common_identity(self) -> dict[str, Any]:
        """What this class puts in every request; a subclass's ``identity()`` adds engine, adapter and its own."""
        return {
            "model": self.model,
            "prompt": self.prompt,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "extra_body": self.extra_body,
        }

    def instruction(self, document: Document) -> str:
        """The text part of the request for ``document`` (the prompt, unless a subclass says otherwise)."""
        return self.prompt

    def request_options(self) -> dict[str, Any]:
        """Request keys of the subclass, between ``temperature`` and ``extra_body``."""
        return {}

    def payload(self, document: Document) -> dict[str, Any]:
        """The request body for ``document`` (image part first, then the instruction)."""
        messages: list[dict[str, Any]] = []
        if self.system:
            messages.append({"role": "system", "content": self.system})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": image_data_url(document)}},
                    {"type": "text", "text": self.instruction(document)},
                ],
            }
        )
        return {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            **self.request_options(),
            **self.extra_body,
        }

    def recognize(self, document: Document) -> OcrOutput:
        started = time.perf_counter()
        answer = self.client.complete(self.payload(document))
        return self.output(answer, elapsed_s=time.perf_counter() - started)

    def output(self, answer: ChatAnswer, *, elapsed_s: float) -> OcrOutput:
        """The engine's output for one answer."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Stop retrying and refuse new requests (called by the prefetcher on Ctrl-C)."""
        self.client.cancel()

    def close(self) -> None:
        return None


class OpenAIChatEngine(ChatCompletionsEngine):
    """A vision-language model behind ``/v1/chat/completions``; see the module docstring for settings."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        prompt: str | None = None,
        system: str | None = None,
        max_tokens: int = 4096,
        temperature: float = 0.0,
        api_key: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        timeout_s: float = 120.0,
        retries: int = 3,
        mode: str = "text",
        max_response_mb: float = MAX_RESPONSE_BYTES / 2**20,
    ) -> None:
        if mode not in MODES:
            raise EngineOptionError(f"openai.mode must be 'text', 'fields' or 'markdown', got {mode!r}")
        super().__init__(
            base_url=base_url,
            model=model,
            prompt=prompt if prompt is not None else _DEFAULT_PROMPTS[mode],
            max_tokens=max_tokens,
            temperature=temperature,
            api_key=api_key,
            extra_body=extra_body,
            timeout_s=timeout_s,
            retries=retries,
            max_response_mb=max_response_mb,
        )
        self.mode = mode
        self.system = system

    def __repr__(self) -> str:
        return f"OpenAIChatEngine(model={self.model!r}, url={self.client.url!r}, mode={self.mode!r})"

    def identity(self) -> Mapping[str, Any]:
        return {
            "engine": "openai",
            "adapter": ADAPTER_VERSION,
            **self._common_identity(),
            "mode": self.mode,
            "system": self.system,
        }

    def request_identity(self, document: Document) -> Mapping[str, Any] | None:
        """What besides the image decides the request: in fields mode, the field names (and schema) asked for."""
        if self.mode != "fields":
            return None
        return {"fields": field_names(document), "schema": document.schema}

    def instruction(self, document: Document) -> str:
        """The text part of the request for ``document``."""
        if self.mode != "fields":
            return self.prompt
        names = field_names(document)
        text = self.prompt.replace("{fields}", ", ".join(json.dumps(name, ensure_ascii=False) for name in names))
        if document.schema:
            text += "\nThe JSON object must validate against this JSON schema:\n" + json.dumps(document.schema)
        return text

    def output(self, answer: ChatAnswer, *, elapsed_s: float) -> OcrOutput:
        metadata = answer.metadata()
        fields: Mapping[str, Any] | None = None
        text = answer.content
        if self.mode == "fields":
            value, problem = parse_json_answer(answer.content)
            fenced = _FENCE.match(answer.content.strip())
            text = fenced.group(1).strip() if fenced else answer.content.strip()
            if problem is None and isinstance(value, dict):
                fields = value
            else:
                metadata["fields_error"] = problem or f"the answer is JSON but not an object ({type(value).__name__})"
        elif self.mode == "markdown":
            text = unwrap_markdown_fence(answer.content)
        return OcrOutput(
            text=text,
            engine=self.name,
            fields=fields,
            raw=answer.content,
            elapsed_s=elapsed_s,
            truncated=answer.truncated,
            metadata=metadata,
        )


_OPENAI_OPTIONS: dict[str, str] = {
    "base_url": "server URL, e.g. http://127.0.0.1:8000/v1 (required)",
    "model": "model name the server serves (required; --ocr-engine=openai:MODEL also sets it)",
    "prompt": "instruction sent after the image ({fields} is replaced by the field names in fields mode)",
    "system": "optional system message",
    "max_tokens": "answer token limit (default 4096); reaching it marks the output truncated",
    "temperature": "sampling temperature (default 0)",
    "api_key_env": "name of the environment variable holding the API key (default: no key sent)",
    "extra_body": 'JSON object merged into the request body, e.g. {"top_k": 1}',
    "timeout": "seconds to wait for one answer (default 120)",
    "retries": "extra attempts on HTTP 429/5xx and connection errors (default 3)",
    "max_response_mb": "the most of one answer read, in MiB (default 64; a positive number, no 'off'); a larger "
                       "answer errors its document",
    "mode": "text (transcribe, default), fields (ask for the document's fields as JSON) or markdown (the page as "
            "Markdown with HTML tables and LaTeX formulas, for OmniDocBench datasets)",
}


def check_openai_settings(arg: str | None, options: Mapping[str, str]) -> dict[str, Any]:
    """The :class:`OpenAIChatEngine` arguments for ``openai[:MODEL]`` and its settings, every value checked.

    Cheap (no request sent), so it runs at startup: a missing ``openai.base_url`` or model, a URL that is not
    http(s), a bad number or an unset API key variable is one usage error instead of an error in every test.
    """
    settings = normalise_settings("openai", options, _OPENAI_OPTIONS)
    model = (settings.get("model") or "").strip() or arg
    base_url = (settings.get("base_url") or "").strip()
    if not base_url:
        raise EngineOptionError(
            "engine openai needs a server: pass --ocr-engine-option openai.base_url=http://HOST:PORT/v1"
        )
    try:
        chat_completions_url(base_url)
    except EngineOptionError as exc:
        raise EngineOptionError(f"openai.{exc}") from None
    if not model:
        raise EngineOptionError(
            "engine openai needs a model name: pass --ocr-engine=openai:MODEL or --ocr-engine-option openai.model=MODEL "
            "(the name the server lists at BASE_URL/models)"
        )
    mode = (settings.get("mode") or "").strip() or "text"
    if mode not in MODES:
        raise EngineOptionError(f"openai.mode must be 'text', 'fields' or 'markdown', got {settings['mode']!r}")
    return dict(
        base_url=base_url,
        model=model,
        prompt=settings.get("prompt"),
        system=settings.get("system") or None,
        max_tokens=int_setting("openai", settings, "max_tokens", 4096, minimum=1),
        temperature=float_setting("openai", settings, "temperature", 0.0, minimum=0),
        api_key=api_key_from_env("openai", settings.get("api_key_env")),
        extra_body=json_object_setting("openai", settings, "extra_body"),
        timeout_s=float_setting("openai", settings, "timeout", 120.0, positive=True, unit="seconds"),
        retries=int_setting("openai", settings, "retries", 3, minimum=0),
        max_response_mb=max_response_mb_setting("openai", settings),
        mode=mode,
    )


def create_openai_engine(arg: str | None, options: Mapping[str, str]) -> OpenAIChatEngine:
    """The factory behind ``--ocr-engine=openai[:MODEL]`` (see :func:`check_openai_settings`)."""
    return OpenAIChatEngine(**check_openai_settings(arg, options))


OPENAI_SPEC = EngineSpec(
    name="openai",
    factory=create_openai_engine,
    check=check_openai_settings,
    options=_OPENAI_OPTIONS,
    description="any vision-language model behind an OpenAI-compatible /v1/chat/completions endpoint",
    install_hint="no extra package needed; start a server, e.g. vllm serve MODEL, and set openai.base_url",
)
