"""``--ocr-engine=deepseek``: DeepSeek-OCR and DeepSeek-OCR-2, served or local.

Three backends, chosen by ``deepseek.backend`` (or ``--ocr-engine=deepseek:BACKEND``):

``server`` (recommended; the default when ``deepseek.base_url`` is set)
    Any OpenAI-compatible ``/v1/chat/completions`` endpoint serving the model, e.g.
    ``vllm serve deepseek-ai/DeepSeek-OCR --logits_processors
    vllm.model_executor.models.deepseek_ocr:NGramPerReqLogitsProcessor --no-enable-prefix-caching
    --mm-processor-cache-gb 0``. The image goes as a base64 ``data:`` URL *before* the bare prompt; the request
    carries ``temperature: 0``, ``max_tokens``, ``skip_special_tokens: false`` and vLLM's ``vllm_xargs``
    (``ngram_size: 30, window_size: 90, whitelist_token_ids: [128821, 128822]``: without ``ngram_size`` vLLM's
    repetition guard is off and some pages loop until ``max_tokens``). ``finish_reason == "length"`` marks the output
    ``truncated``. Requests run concurrently (``--ocr-concurrency``).
``transformers`` (the default without ``base_url``)
    DeepSeek-OCR-2 through transformers >= 5's own classes (``AutoProcessor``, ``AutoModelForImageTextToText``,
    ``generate``); model id or local folder; device ``auto`` (CUDA when available, else CPU with a warning), bf16 on
    GPU; documents go through the model in batches of ``deepseek.batch_size``.
``remote-code``
    The original DeepSeek-OCR's own ``model.infer(tokenizer, prompt=..., image_file=..., output_path=<temp dir>,
    base_size, image_size, crop_mode, eval_mode=True)``; resolution ``deepseek.mode`` Tiny / Small / Base / Large /
    Gundam. This runs Python code downloaded with the model, so it needs ``deepseek.trust_remote_code=true``; the real
    model's code needs CUDA and transformers <= 4.47.

All backends share :mod:`~pytest_ocrmetrics.engines.deepseek_postprocess`: the end-of-sentence token and grounding
tags are removed from ``text``, boxes (0–999 grid) become ``words``, and the untouched answer stays in ``raw``.
Prompts: ``Free OCR.`` (the default, plain text for CER/WER) or ``<|grounding|>Convert the document to markdown.``
(Markdown with layout boxes; pair it with the ``model-output`` normalization profile).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core import cleanup
from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import (
    EngineError,
    EngineOptionError,
    EngineSpec,
    EngineUnavailable,
    OcrOutput,
    image_decode_problem,
    read_image,
)
from pytest_ocrmetrics.engines.deepseek_postprocess import BOX_GRID, parse_deepseek_output
from pytest_ocrmetrics.engines.openai_compat import (
    ChatAnswer,
    ChatCompletionsEngine,
    chat_completions_url,
    max_response_mb_setting,
)
from pytest_ocrmetrics.engines.settings import (
    api_key_from_env,
    bool_setting,
    float_setting,
    int_setting,
    json_object_setting,
    normalise_settings,
)

__all__ = [
    "DEEPSEEK_SPEC",
    "BACKENDS",
    "RESOLUTION_MODES",
    "DEFAULT_VLLM_XARGS",
    "DeepSeekServerEngine",
    "DeepSeekTransformersEngine",
    "DeepSeekRemoteCodeEngine",
    "DeepSeekMemoryWarning",
    "create_deepseek_engine",
]

ADAPTER_VERSION = 1
"""Part of the engine identity: bumped when request building or post-processing changes the output."""

BACKENDS = ("server", "transformers", "remote-code")
DEFAULT_PROMPT = "Free OCR."
DEFAULT_SERVER_MODEL = "deepseek-ai/DeepSeek-OCR"
DEFAULT_NATIVE_MODEL = "deepseek-community/DeepSeek-OCR-2"
DEFAULT_REMOTE_CODE_MODEL = "deepseek-ai/DeepSeek-OCR"
DEFAULT_MAX_TOKENS = 4096

DEFAULT_VLLM_XARGS: Mapping[str, Any] = {"ngram_size": 30, "window_size": 90, "whitelist_token_ids": [128821, 128822]}
"""vLLM's n-gram repetition guard for DeepSeek-OCR (128821/128822 are ``<td>``/``</td>``, which legitimately repeat)."""


@dataclass(frozen=True)
class ResolutionMode:
    """DeepSeek-OCR's named input resolutions: global view size, tile size, and whether large pages are tiled."""

    base_size: int
    image_size: int
    crop_mode: bool


RESOLUTION_MODES: Mapping[str, ResolutionMode] = {
    "tiny": ResolutionMode(512, 512, False),
    "small": ResolutionMode(640, 640, False),
    "base": ResolutionMode(1024, 1024, False),
    "large": ResolutionMode(1280, 1280, False),
    "gundam": ResolutionMode(1024, 640, True),
}
"""DeepSeek-OCR's modes, from its README: Tiny 64, Small 100, Base 256, Large 400 vision tokens; Gundam tiles."""


def _output(
    raw: str, *, backend: str, elapsed_s: float, truncated: bool, metadata: Mapping[str, Any] | None = None
) -> OcrOutput:
    parsed = parse_deepseek_output(raw)
    meta: dict[str, Any] = {"backend": backend, **(metadata or {})}
    if parsed.words:
        meta["box_grid"] = BOX_GRID
    if parsed.truncated_tag:
        meta["truncated_tag"] = True
    return OcrOutput(
        text=parsed.text,
        engine="deepseek",
        words=parsed.words,
        raw=raw,
        elapsed_s=elapsed_s,
        truncated=truncated,
        metadata=meta,
    )


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _local_fingerprint(model: str) -> str | None:
    """For a local model folder: a hash of its config and of its weight files' names and sizes (cheap, not the
    weights themselves), so replacing the checkpoint in place invalidates cached outputs."""
    folder = Path(model)
    if not folder.is_dir():
        return None
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.suffix in (".json", ".py", ".txt", ".model"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        elif path.suffix in (".safetensors", ".bin", ".pt", ".gguf"):
            digest.update(f"{path.name}\0{path.stat().st_size}".encode())
    return digest.hexdigest()[:16]


# -- server ---------------------------------------------------------------------------------------------------------


class DeepSeekServerEngine(ChatCompletionsEngine):
    """DeepSeek-OCR behind an OpenAI-compatible chat-completions server (vLLM)."""

    name = "deepseek"
    backend = "server"

    def __init__(
        self,
        *,
        base_url: str,
        model: str = DEFAULT_SERVER_MODEL,
        prompt: str = DEFAULT_PROMPT,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        api_key: str | None = None,
        vllm_xargs: Mapping[str, Any] = DEFAULT_VLLM_XARGS,
        extra_body: Mapping[str, Any] | None = None,
        timeout_s: float = 300.0,
        retries: int = 3,
        max_response_mb: float = 64.0,
    ) -> None:
        super().__init__(
            base_url=base_url,
            model=model,
            # the image travels as its own message part; a copied "<image>\n" placeholder would add a second one
            prompt=prompt.replace("<image>", "").strip() or DEFAULT_PROMPT,
            max_tokens=max_tokens,
            temperature=0.0,
            api_key=api_key,
            extra_body=extra_body,
            timeout_s=timeout_s,
            retries=retries,
            max_response_mb=max_response_mb,
        )
        self.vllm_xargs = dict(vllm_xargs)

    def __repr__(self) -> str:
        return f"DeepSeekServerEngine(model={self.model!r}, url={self.client.url!r})"

    def identity(self) -> Mapping[str, Any]:
        return {
            "engine": "deepseek",
            "adapter": ADAPTER_VERSION,
            "backend": "server",
            **self._common_identity(),
            "vllm_xargs": self.vllm_xargs,
        }

    def request_options(self) -> dict[str, Any]:
        """Greedy decoding keeps the special tokens (grounding tags) and runs vLLM's n-gram guard."""
        options: dict[str, Any] = {"skip_special_tokens": False}
        if self.vllm_xargs:
            options["vllm_xargs"] = dict(self.vllm_xargs)
        return options

    def output(self, answer: ChatAnswer, *, elapsed_s: float) -> OcrOutput:
        return _output(
            answer.content, backend="server", elapsed_s=elapsed_s, truncated=answer.truncated, metadata=answer.metadata()
        )


# -- local backends: shared loading -----------------------------------------------------------------------------------


def _require_torch_transformers(backend: str) -> None:
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        raise EngineUnavailable(
            f"deepseek.backend={backend} needs {' and '.join(missing)}: pip install torch 'transformers>=5' "
            "(or serve the model with vLLM and set deepseek.base_url to use the server backend)"
        )


def _resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise EngineUnavailable(f"deepseek.device={device} but torch sees no CUDA device here")
    return device


class _LocalModelEngine:
    """Shared by the two local backends: lazy, thread-safe loading (a fully cached run never loads the model)."""

    name = "deepseek"
    concurrent = False
    backend = "local"

    def __init__(
        self,
        *,
        model: str,
        prompt: str,
        device: str,
        revision: str | None,
        local_files_only: bool,
    ) -> None:
        self.model_id = model
        self.prompt = prompt
        self.device_setting = device
        self.revision = revision
        self.local_files_only = local_files_only or Path(model).is_dir()
        self._lock = threading.RLock()
        self._loaded: tuple[Any, ...] | None = None
        self._load_error: BaseException | None = None
        self._device: str | None = None

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = _resolve_device(self.device_setting)
        return self._device

    @property
    def dtype_name(self) -> str:
        return "bfloat16" if self.device.startswith("cuda") else "float32"

    @property
    def model_prompt(self) -> str:
        """The model's text: the image placeholder, then the prompt."""
        return self.prompt if "<image>" in self.prompt else f"<image>\n{self.prompt}"

    def _common_identity(self) -> dict[str, Any]:
        return {
            "engine": "deepseek",
            "adapter": ADAPTER_VERSION,
            "backend": self.backend,
            "model": self.model_id,
            "revision": self.revision,
            "local_fingerprint": _local_fingerprint(self.model_id),
            "prompt": self.prompt,
            "dtype": self.dtype_name,
            "torch": _version("torch"),
            "transformers": _version("transformers"),
        }

    def _warn_cpu(self) -> None:
        if self.device == "cpu" and self.device_setting == "auto":
            warnings.warn(
                f"deepseek.backend={self.backend} is running {self.model_id} on the CPU (no CUDA device found); "
                "expect minutes per page. Serve the model on a GPU and use deepseek.base_url for real suites.",
                RuntimeWarning,
                stacklevel=4,
            )

    def _ensure_loaded(self) -> tuple[Any, ...]:
        with self._lock:
            if self._loaded is not None:
                return self._loaded
            if self._load_error is not None:
                raise self._load_error
            try:
                self._loaded = self._load()
            except EngineUnavailable as exc:
                self._load_error = exc
                raise
            except (OSError, ValueError, ImportError, KeyError) as exc:
                self._load_error = EngineUnavailable(
                    f"cannot load DeepSeek model {self.model_id!r} for deepseek.backend={self.backend}: "
                    f"{type(exc).__name__}: {exc}. Download it first (huggingface-cli download {self.model_id}) or "
                    "set deepseek.model to a local folder"
                )
                raise self._load_error from exc
            except Exception as exc:  # noqa: BLE001 - a broken checkpoint: every document errors with this sentence
                self._load_error = EngineError(
                    f"cannot load DeepSeek model {self.model_id!r} for deepseek.backend={self.backend}: "
                    f"{type(exc).__name__}: {exc}"
                )
                raise self._load_error from exc
            return self._loaded

    def _load(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def close(self) -> None:
        with self._lock:
            self._loaded = None


# -- transformers, native ---------------------------------------------------------------------------------------------


class DeepSeekTransformersEngine(_LocalModelEngine):
    """DeepSeek-OCR-2 through transformers >= 5's native classes, batched."""

    backend = "transformers"

    def __init__(
        self,
        *,
        model: str = DEFAULT_NATIVE_MODEL,
        prompt: str = DEFAULT_PROMPT,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        device: str = "auto",
        batch_size: int = 4,
        revision: str | None = None,
        local_files_only: bool = False,
    ) -> None:
        super().__init__(model=model, prompt=prompt, device=device, revision=revision, local_files_only=local_files_only)
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self._fitting_batch: int | None = None  # set when a batch ran out of memory: the size that then fitted

    def __repr__(self) -> str:
        return f"DeepSeekTransformersEngine(model={self.model_id!r}, device={self.device_setting!r})"

    def identity(self) -> Mapping[str, Any]:
        return {**self._common_identity(), "max_tokens": self.max_tokens}

    def _load(self) -> tuple[Any, ...]:
        import torch
        import transformers

        major = int(transformers.__version__.split(".")[0])
        if major < 5:
            raise EngineUnavailable(
                f"deepseek.backend=transformers needs transformers>=5 for DeepSeek-OCR-2's native classes "
                f"(found {transformers.__version__}): pip install 'transformers>=5'"
            )
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self._warn_cpu()
        dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        kwargs: dict[str, Any] = {"local_files_only": self.local_files_only}
        if self.revision:
            kwargs["revision"] = self.revision
        processor = AutoProcessor.from_pretrained(self.model_id, **kwargs)
        processor.tokenizer.padding_side = "left"  # decoder-only generation pads on the left
        model = AutoModelForImageTextToText.from_pretrained(self.model_id, dtype=dtype, **kwargs)
        model.to(self.device).eval()  # type: ignore[arg-type]  # transformers types .to() for its own wrapper
        eos = model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        return processor, model, dtype, eos_ids

    def recognize(self, document: Document) -> OcrOutput:
        result = self.recognize_batch([document])[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def recognize_batch(self, documents: Sequence[Document]) -> list[OcrOutput | BaseException]:
        """Run ``documents`` through the model in one ``generate`` call; unreadable images fail alone.

        A batch that runs out of (GPU) memory is retried in halves, down to one page, with the cache freed between
        tries; only a page that runs out of memory alone errors. Once a batch had to be halved, later batches start
        at the size that fitted (memory another process holds rarely comes back mid-run), and a
        :class:`DeepSeekMemoryWarning` says so; the outputs carry ``batch`` (the size that ran) and
        ``batch_halved_from`` (the size that did not).
        """
        processor, model, dtype, eos_ids = self._ensure_loaded()

        results: list[OcrOutput | BaseException | None] = [None] * len(documents)
        images: list[Any] = []
        indices: list[int] = []
        for index, document in enumerate(documents):
            try:
                images.append(_load_rgb(document))
                indices.append(index)
            except EngineError as exc:
                results[index] = exc
        size = max(1, min(len(images), self._fitting_batch or len(images)))
        pending = [(images[start:start + size], indices[start:start + size]) for start in range(0, len(images), size)]
        halved_from: int | None = None  # the largest size that ran out of memory in this call
        fitted: list[int] = []  # the sizes that ran
        while pending:
            chunk, chunk_indices = pending.pop(0)
            try:
                ran = self._generate(processor, model, dtype, chunk)
            except Exception as exc:
                if not _is_out_of_memory(exc):
                    raise
                ran = None  # handled below, outside the except: its traceback holds the failed try's tensors
            if ran is None:
                _free_cuda_cache()
                halved_from = max(halved_from or 0, len(chunk))
                if len(chunk) == 1:
                    document = documents[chunk_indices[0]]
                    results[chunk_indices[0]] = EngineError(
                        f"deepseek.backend=transformers ran out of memory on {self.device} for document "
                        f"{document.id!r} alone (batch size tried: "
                        f"{'1' if halved_from == 1 else f'{halved_from} halved down to 1'}; "
                        f"deepseek.batch_size={self.batch_size}): free memory on the device or lower "
                        "deepseek.max_tokens"
                    )
                    continue
                half = (len(chunk) + 1) // 2
                pending[:0] = [(chunk[:half], chunk_indices[:half]), (chunk[half:], chunk_indices[half:])]
                continue
            generated, prompt_length, elapsed = ran
            fitted.append(len(chunk))
            for row, index in enumerate(chunk_indices):
                tokens = generated[row, prompt_length:].tolist()
                stop = next((i for i, token in enumerate(tokens) if token in eos_ids), None)
                truncated = stop is None and len(tokens) >= self.max_tokens
                raw = processor.decode(tokens if stop is None else tokens[:stop], skip_special_tokens=False)
                metadata: dict[str, Any] = {"device": self.device, "batch": len(chunk), "new_tokens": len(tokens)}
                if halved_from is not None:
                    metadata["batch_halved_from"] = halved_from
                results[index] = _output(
                    raw, backend="transformers", elapsed_s=elapsed, truncated=truncated, metadata=metadata
                )
        if halved_from is not None and halved_from > 1:  # a lone page that ran out of memory halved nothing
            fits = max(fitted, default=1)
            if fits < (self._fitting_batch or self.batch_size):
                self._fitting_batch = fits
                warnings.warn(DeepSeekMemoryWarning(
                    f"deepseek.backend=transformers: a batch of {halved_from} pages ran out of memory on "
                    f"{self.device}; batches were halved to {fits} page{'s' if fits > 1 else ''} per generate() "
                    f"for the rest of the run (deepseek.batch_size={self.batch_size}; set it to {fits} to skip "
                    "the retries)"
                ), stacklevel=2)
        return [r if r is not None else EngineError("no result") for r in results]

    def _generate(self, processor: Any, model: Any, dtype: Any, images: list[Any]) -> tuple[Any, int, float]:
        """One ``generate`` call over ``images``: the token rows, the (padded) prompt length, seconds per page."""
        import torch

        started = time.perf_counter()
        with self._lock:
            inputs = processor(
                images=images, text=[self.model_prompt] * len(images), return_tensors="pt", padding=True
            ).to(model.device, dtype=dtype)
            prompt_length = inputs["input_ids"].shape[1]
            with torch.inference_mode():
                generated = model.generate(**inputs, do_sample=False, max_new_tokens=self.max_tokens)
        return generated, prompt_length, (time.perf_counter() - started) / len(images)


class DeepSeekMemoryWarning(RuntimeWarning):
    """A local backend ran out of (GPU) memory and retried its batches at half the size."""


def _is_out_of_memory(exc: BaseException) -> bool:
    """CUDA's ``OutOfMemoryError`` (a RuntimeError, present in CPU builds of torch too) or any RuntimeError saying
    "out of memory" (older torch, other devices)."""
    import torch

    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom is not None and isinstance(exc, oom):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def _free_cuda_cache() -> None:
    """Give the cached blocks of a failed try back before the next one (a no-op without CUDA)."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _load_rgb(document: Document) -> Any:
    import io

    from PIL import Image

    data = read_image(document)  # the checked bytes the output cache hashed
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.convert("RGB")
    except (OSError, ValueError) as exc:
        raise EngineError(
            f"cannot read image {str(document.image_path)!r} of document {document.id!r}: {image_decode_problem(exc, data)}"
        ) from None


# -- transformers, remote code ----------------------------------------------------------------------------------------


class DeepSeekRemoteCodeEngine(_LocalModelEngine):
    """The original DeepSeek-OCR through its own ``model.infer`` (code shipped with the model; explicit opt-in)."""

    backend = "remote-code"

    def __init__(
        self,
        *,
        model: str = DEFAULT_REMOTE_CODE_MODEL,
        prompt: str = DEFAULT_PROMPT,
        mode: str = "gundam",
        device: str = "auto",
        revision: str | None = None,
        local_files_only: bool = False,
    ) -> None:
        super().__init__(model=model, prompt=prompt, device=device, revision=revision, local_files_only=local_files_only)
        key = mode.strip().lower()
        if key not in RESOLUTION_MODES:
            names = ", ".join(name.capitalize() for name in RESOLUTION_MODES)
            raise EngineOptionError(f"deepseek.mode must be one of {names}, got {mode!r}")
        self.mode = key
        self.resolution = RESOLUTION_MODES[key]
        cleanup.install_sigterm_handler()  # pages may run in the prefetch thread, where no handler can be set

    def __repr__(self) -> str:
        return f"DeepSeekRemoteCodeEngine(model={self.model_id!r}, mode={self.mode!r})"

    def identity(self) -> Mapping[str, Any]:
        return {**self._common_identity(), "mode": self.mode}

    def _load(self) -> tuple[Any, ...]:
        import torch
        import transformers
        from transformers import AutoModel, AutoTokenizer

        self._warn_cpu()
        kwargs: dict[str, Any] = {"trust_remote_code": True, "local_files_only": self.local_files_only}
        if self.revision:
            kwargs["revision"] = self.revision
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model_id, **kwargs)
            model = AutoModel.from_pretrained(self.model_id, use_safetensors=True, **kwargs)
        except OSError:
            raise  # missing files: reported with the download hint by _ensure_loaded
        except Exception as exc:  # noqa: BLE001 - remote code breaks in many ways on a newer transformers
            raise EngineUnavailable(
                f"the remote code of {self.model_id!r} does not load with transformers {transformers.__version__} "
                f"({type(exc).__name__}: {exc}); DeepSeek-OCR's own code needs transformers<=4.47 "
                "(pip install 'transformers==4.46.3'), or use deepseek.backend=transformers with DeepSeek-OCR-2, "
                "or the server backend"
            ) from exc
        model = model.eval()
        if self.device.startswith("cuda"):
            model = model.to(self.device).to(torch.bfloat16)
        return tokenizer, model

    def recognize(self, document: Document) -> OcrOutput:
        tokenizer, model = self._ensure_loaded()
        image_bytes = read_image(document)  # infer() reads a path: give it a private copy of the checked bytes
        suffix = (document.image_path or Path(document.id)).suffix
        import torch

        started = time.perf_counter()
        # one private folder per page for infer()'s output and the image copy, removed afterwards, at interpreter exit
        # and on SIGTERM (a run stopped with Ctrl-C under xdist leaves nothing in $TMPDIR)
        with self._lock, torch.no_grad(), tempfile.TemporaryDirectory(prefix="ocrmetrics-deepseek-") as output_path:
            cleanup.register(output_path)
            image_path = Path(output_path) / f"image{suffix}"
            image_path.write_bytes(image_bytes)
            try:
                raw = model.infer(
                    tokenizer,
                    prompt=self.model_prompt,
                    image_file=str(image_path),
                    output_path=output_path,
                    base_size=self.resolution.base_size,
                    image_size=self.resolution.image_size,
                    crop_mode=self.resolution.crop_mode,
                    save_results=False,
                    eval_mode=True,
                )
            except (RuntimeError, AssertionError, ValueError, OSError) as exc:
                hint = " (DeepSeek-OCR's own code calls .cuda(): it needs a CUDA GPU)" if "CUDA" in str(exc) else ""
                raise EngineError(f"DeepSeek-OCR infer() failed on document {document.id!r}: {exc}{hint}") from exc
            finally:
                cleanup.unregister(output_path)
        if not isinstance(raw, str):
            raise EngineError(
                f"DeepSeek-OCR infer() returned {type(raw).__name__}, not text, for document {document.id!r}; "
                "the model's code must support eval_mode=True"
            )
        return _output(
            raw,
            backend="remote-code",
            elapsed_s=time.perf_counter() - started,
            truncated=False,  # infer() strips the end token itself, so a cut-off answer cannot be told apart
            metadata={"device": self.device, "mode": self.mode},
        )


# -- factory ----------------------------------------------------------------------------------------------------------

_DEEPSEEK_OPTIONS: dict[str, str] = {
    "backend": "server, transformers or remote-code (default: server when base_url is set, else transformers)",
    "base_url": "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (server backend)",
    "model": f"model name or local folder (defaults: server {DEFAULT_SERVER_MODEL}, transformers {DEFAULT_NATIVE_MODEL}, "
    f"remote-code {DEFAULT_REMOTE_CODE_MODEL})",
    "prompt": f'task prompt (default "{DEFAULT_PROMPT}"; "<|grounding|>Convert the document to markdown." for Markdown)',
    "max_tokens": f"answer token limit (default {DEFAULT_MAX_TOKENS}); reaching it marks the output truncated",
    "api_key_env": "name of the environment variable holding the server's API key (default: no key sent)",
    "mode": "remote-code resolution: Tiny, Small, Base, Large or Gundam (default Gundam)",
    "device": "auto (CUDA if available, else CPU), cpu, cuda or cuda:N (local backends)",
    "batch_size": "documents per generate() call (transformers backend, default 4)",
    "revision": "model revision on the Hugging Face Hub (local backends)",
    "local_files_only": "true: never contact the Hub (automatic for a local folder)",
    "trust_remote_code": "true: allow the remote-code backend to run the model's own Python code",
    "vllm_xargs": "JSON object for vLLM's per-request logits processor (default the n-gram guard)",
    "extra_body": "JSON object merged into the request body (server backend)",
    "timeout": "seconds to wait for one answer (server backend, default 300)",
    "retries": "extra attempts on HTTP 429/5xx and connection errors (server backend, default 3)",
    "max_response_mb": "the most of one answer read, in MiB (server backend, default 64; a positive number, no "
                       "'off'); a larger answer errors its document",
}

_BACKEND_ONLY = {
    "server": {"base_url", "api_key_env", "vllm_xargs", "extra_body", "timeout", "retries", "max_response_mb"},
    "transformers": {"device", "batch_size", "revision", "local_files_only"},
    "remote-code": {"mode", "device", "revision", "local_files_only", "trust_remote_code"},
}


def check_deepseek_settings(arg: str | None, options: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The backend and the engine's arguments for ``deepseek[:BACKEND]`` and its settings, every value checked.

    Cheap (torch and transformers are not imported, no request sent), so it runs at startup: a bad backend, a
    setting of another backend or a bad value is one usage error. Missing packages are found when the engine is
    created (its tests are skipped).
    """
    settings = normalise_settings("deepseek", options, _DEEPSEEK_OPTIONS)
    backend = _backend(arg, settings)
    prompt = settings.get("prompt") or DEFAULT_PROMPT
    max_tokens = int_setting("deepseek", settings, "max_tokens", DEFAULT_MAX_TOKENS, minimum=1)
    if backend == "server":
        return backend, _server_arguments(settings, prompt, max_tokens)
    device = settings.get("device", "auto").strip() or "auto"
    if device != "auto" and device != "cpu" and not device.startswith("cuda"):
        raise EngineOptionError(f"deepseek.device must be auto, cpu, cuda or cuda:N, got {device!r}")
    local_files_only = bool_setting("deepseek", settings, "local_files_only", False)
    if backend == "remote-code":
        return backend, _remote_code_arguments(settings, prompt, device, local_files_only)
    return backend, dict(
        model=settings.get("model") or DEFAULT_NATIVE_MODEL,
        prompt=prompt,
        max_tokens=max_tokens,
        device=device,
        batch_size=int_setting("deepseek", settings, "batch_size", 4, minimum=1),
        revision=settings.get("revision") or None,
        local_files_only=local_files_only,
    )


def _backend(arg: str | None, settings: Mapping[str, str]) -> str:
    """The backend ``--ocr-engine=deepseek[:BACKEND]`` and ``deepseek.backend`` name (the server when only a base
    URL is given, else transformers); a backend unknown, named twice differently, or given another backend's
    settings is an :class:`EngineOptionError`."""
    backend = (settings.get("backend") or arg or ("server" if settings.get("base_url") else "transformers")).strip()
    if backend not in BACKENDS:
        raise EngineOptionError(f"deepseek.backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if arg and settings.get("backend") and arg != settings["backend"]:
        raise EngineOptionError(f"--ocr-engine=deepseek:{arg} and deepseek.backend={settings['backend']} disagree")
    foreign = sorted(
        key for key in settings if any(key in keys for keys in _BACKEND_ONLY.values()) and key not in _BACKEND_ONLY[backend]
    )
    if foreign:
        raise EngineOptionError(
            f"setting(s) {', '.join('deepseek.' + key for key in foreign)} do not apply to deepseek.backend={backend}"
        )
    return backend


def _server_arguments(settings: Mapping[str, str], prompt: str, max_tokens: int) -> dict[str, Any]:
    """The server backend's engine arguments: its base URL (required) and request settings, each checked."""
    if not settings.get("base_url"):
        raise EngineOptionError(
            "deepseek.backend=server needs deepseek.base_url, e.g. --ocr-engine-option "
            "deepseek.base_url=http://127.0.0.1:8000/v1"
        )
    try:
        chat_completions_url(settings["base_url"])
    except EngineOptionError as exc:
        raise EngineOptionError(f"deepseek.{exc}") from None
    vllm_xargs = (
        json_object_setting("deepseek", settings, "vllm_xargs") if "vllm_xargs" in settings else DEFAULT_VLLM_XARGS
    )
    return dict(
        base_url=settings["base_url"],
        model=settings.get("model") or DEFAULT_SERVER_MODEL,
        prompt=prompt,
        max_tokens=max_tokens,
        api_key=api_key_from_env("deepseek", settings.get("api_key_env")),
        vllm_xargs=vllm_xargs,
        extra_body=json_object_setting("deepseek", settings, "extra_body"),
        timeout_s=float_setting("deepseek", settings, "timeout", 300.0, positive=True, unit="seconds"),
        retries=int_setting("deepseek", settings, "retries", 3, minimum=0),
        max_response_mb=max_response_mb_setting("deepseek", settings),
    )


def _remote_code_arguments(settings: Mapping[str, str], prompt: str, device: str,
                           local_files_only: bool) -> dict[str, Any]:
    """The remote-code backend's engine arguments: it needs ``trust_remote_code=true`` and a known resolution mode."""
    if not bool_setting("deepseek", settings, "trust_remote_code", False):
        raise EngineOptionError(
            "deepseek.backend=remote-code runs Python code that ships with the model; opt in with "
            "--ocr-engine-option deepseek.trust_remote_code=true (only for a model source you trust)"
        )
    mode = settings.get("mode", "gundam")
    if mode.strip().lower() not in RESOLUTION_MODES:
        names = ", ".join(name.capitalize() for name in RESOLUTION_MODES)
        raise EngineOptionError(f"deepseek.mode must be one of {names}, got {mode!r}")
    return dict(
        model=settings.get("model") or DEFAULT_REMOTE_CODE_MODEL,
        prompt=prompt,
        mode=mode,
        device=device,
        revision=settings.get("revision") or None,
        local_files_only=local_files_only,
    )


def create_deepseek_engine(arg: str | None, options: Mapping[str, str]) -> Any:
    """The factory behind ``--ocr-engine=deepseek[:BACKEND]`` (see :func:`check_deepseek_settings`)."""
    backend, arguments = check_deepseek_settings(arg, options)
    if backend == "server":
        return DeepSeekServerEngine(**arguments)
    _require_torch_transformers(backend)
    if backend == "remote-code":
        return DeepSeekRemoteCodeEngine(**arguments)
    return DeepSeekTransformersEngine(**arguments)


DEEPSEEK_SPEC = EngineSpec(
    name="deepseek",
    factory=create_deepseek_engine,
    check=check_deepseek_settings,
    options=_DEEPSEEK_OPTIONS,
    description="DeepSeek-OCR / DeepSeek-OCR-2: vLLM-compatible server, transformers (native) or the model's own code",
    install_hint="server backend: no extra package (set deepseek.base_url); local backends: pip install torch 'transformers>=5'",
)

