"""The local DeepSeek backends on tiny checkpoints built by the tests (CPU, offline, a few MB).

* ``transformers``: a randomly initialised DeepSeek-OCR-2 (transformers >= 5's native ``DeepseekOcr2*`` classes)
  with a character-level tokenizer and a processor shrunk to 24-pixel tiles, saved to a temporary folder and loaded
  back through ``AutoProcessor`` / ``AutoModelForImageTextToText`` like a real checkpoint.
* ``remote-code``: a model folder whose ``config.json`` has an ``auto_map`` pointing at a small modeling file with
  DeepSeek-OCR's ``infer()`` signature, loaded with ``trust_remote_code=True, local_files_only=True``.
"""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineError, EngineUnavailable, Word
from pytest_ocrmetrics.engines.deepseek import DEEPSEEK_SPEC, DeepSeekRemoteCodeEngine, DeepSeekTransformersEngine
from pytest_ocrmetrics.engines.prefetch import Prefetcher


def _transformers_major() -> int:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        return 0
    import transformers

    return int(transformers.__version__.split(".")[0])


pytestmark = pytest.mark.skipif(
    _transformers_major() < 5,
    reason="needs torch and transformers>=5 (CI installs them: pip install torch==2.13.0 'transformers>=5')",
)

SPECIAL = ["<pad>", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<image>", "<|ref|>", "<|/ref|>", "<|det|>",
           "<|/det|>", "<|grounding|>"]
EOS = "<｜end▁of▁sentence｜>"


def char_tokenizer():
    """A character-level fast tokenizer with DeepSeek's special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: index for index, token in enumerate(SPECIAL + [chr(c) for c in range(32, 127)] + ["\n"])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    backend.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token=SPECIAL[1], eos_token=EOS, pad_token="<pad>", unk_token="<pad>",
        additional_special_tokens=SPECIAL[3:],
    )


@pytest.fixture(scope="module")
def tiny_ocr2(tmp_path_factory) -> Path:
    """A tiny random DeepSeek-OCR-2 checkpoint folder (config, safetensors, processor, tokenizer)."""
    import torch
    from transformers import DeepseekOcr2Config, DeepseekOcr2ForConditionalGeneration, DeepseekOcr2Processor
    from transformers.models.deepseek_ocr2.image_processing_pil_deepseek_ocr2 import DeepseekOcr2ImageProcessorPil

    folder = tmp_path_factory.mktemp("deepseek-ocr2-tiny")
    tokenizer = char_tokenizer()
    # 24-pixel tiles, 2-pixel SAM patches and no extra downsampling in the token count: 12 x 12 = 144 image tokens
    # per view, which is what the vision tower's 768-resolution queries produce
    image_processor = DeepseekOcr2ImageProcessorPil(size={"height": 24, "width": 24}, tile_size=24, min_patches=2,
                                                    max_patches=4)
    processor = DeepseekOcr2Processor(image_processor=image_processor, tokenizer=tokenizer, patch_size=2,
                                      downsample_ratio=1)
    config = DeepseekOcr2Config(
        vision_config={
            "sam_config": {"hidden_size": 32, "output_channels": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
                           "image_size": 24, "patch_size": 2, "window_size": 4, "global_attn_indexes": [1],
                           "downsample_channels": [32, 64]},
            "encoder_config": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                               "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 512},
        },
        text_config={"vocab_size": len(tokenizer), "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 2048,
                     "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "n_routed_experts": 4,
                     "n_shared_experts": 1, "mlp_layer_types": ["dense", "sparse"], "moe_intermediate_size": 32,
                     "num_experts_per_tok": 2},
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
    )
    torch.manual_seed(0)
    model = DeepseekOcr2ForConditionalGeneration(config)
    model.generation_config.eos_token_id = 2
    model.generation_config.pad_token_id = 0
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def page(tmp_path: Path, name: str, size: tuple[int, int], colour: tuple[int, int, int]) -> Document:
    from PIL import Image

    path = tmp_path / name
    Image.new("RGB", size, colour).save(path)
    return Document(id=name, dataset="tiny", image_path=path, source=f"test: {name}")


@pytest.fixture(scope="module")
def native_engine(tiny_ocr2) -> DeepSeekTransformersEngine:
    engine = DEEPSEEK_SPEC.factory(
        "transformers", {"model": str(tiny_ocr2), "device": "cpu", "max_tokens": "10", "batch_size": "3"}
    )
    yield engine
    engine.close()


def test_native_checkpoint_loads_offline_and_generates_on_cpu(native_engine, tmp_path):
    document = page(tmp_path, "wide.png", (64, 32), (200, 30, 30))  # wider than a tile: cropped into local views
    output = native_engine.recognize(document)
    assert output.engine == "deepseek" and isinstance(output.text, str) and output.raw is not None
    assert output.metadata["backend"] == "transformers" and output.metadata["device"] == "cpu"
    assert output.metadata["new_tokens"] <= 10
    assert output.truncated == (output.metadata["new_tokens"] == 10 and EOS not in output.raw)
    assert native_engine.local_files_only  # a local folder never touches the Hub


def test_a_batch_gives_the_same_outputs_as_one_by_one(native_engine, tmp_path):
    documents = [page(tmp_path, f"p{i}.png", size, colour) for i, (size, colour) in enumerate(
        [((64, 32), (10, 20, 30)), ((20, 20), (250, 250, 250)), ((40, 90), (0, 128, 0))])]
    batched = native_engine.recognize_batch(documents)
    assert all(o.metadata["batch"] == 3 for o in batched)
    singles = [native_engine.recognize(d) for d in documents]
    assert [o.raw for o in batched] == [o.raw for o in singles]


def test_an_unreadable_image_fails_alone_in_its_batch(native_engine, tmp_path):
    good = page(tmp_path, "good.png", (24, 24), (1, 2, 3))
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    results = native_engine.recognize_batch([good, Document(id="broken.png", dataset="tiny", image_path=broken)])
    assert not isinstance(results[0], BaseException)
    assert isinstance(results[1], EngineError) and "broken.png" in str(results[1])


def test_the_prefetcher_batches_a_local_engine(native_engine, tmp_path):
    documents = [page(tmp_path, f"b{i}.png", (30, 30), (i * 30, 0, 0)) for i in range(5)]
    with Prefetcher(native_engine, documents, concurrency=1) as prefetcher:
        assert prefetcher.batch_size == 3
        outputs = [prefetcher.result(d) for d in documents]
    assert [o.metadata["batch"] for o in outputs] == [3, 3, 3, 2, 2]


def test_identity_names_model_dtype_and_library_versions(native_engine, tiny_ocr2):
    identity = native_engine.identity()
    assert identity["backend"] == "transformers" and identity["model"] == str(tiny_ocr2)
    assert identity["dtype"] == "float32" and identity["torch"] and identity["transformers"].startswith("5")
    assert identity["max_tokens"] == 10 and identity["local_fingerprint"]


def test_generated_tokens_are_cut_at_the_end_token_and_post_processed(tiny_ocr2, tmp_path, monkeypatch):
    """Replace generate() by a script to check what happens to the tokens after it (prompt slicing, end token,
    grounding tags, truncation)."""
    import torch

    engine = DEEPSEEK_SPEC.factory("transformers", {"model": str(tiny_ocr2), "device": "cpu", "max_tokens": "64"})
    processor, model, _, _ = engine._ensure_loaded()
    seen: dict[str, object] = {}
    script = {
        "a.png": "<|ref|>title<|/ref|><|det|>[[1, 2, 3, 4]]<|/det|>\n# Hi" + EOS + "<pad><pad>",
        "b.png": "x" * 64,
    }

    def fake_generate(**inputs):
        seen["prompt"] = processor.decode(inputs["input_ids"][0]).replace("<image>", "")
        seen["image_tokens"] = int((inputs["input_ids"][0] == model.config.image_token_id).sum())
        rows = [processor.tokenizer(text, add_special_tokens=False)["input_ids"] for text in seen["texts"]]
        width = max(len(row) for row in rows)
        new = torch.tensor([row + [0] * (width - len(row)) for row in rows])
        return torch.cat([inputs["input_ids"], new], dim=1)

    monkeypatch.setattr(model, "generate", fake_generate)
    documents = [page(tmp_path, name, (24, 24), (9, 9, 9)) for name in script]
    seen["texts"] = list(script.values())
    first, second = engine.recognize_batch(documents)
    assert seen["prompt"].endswith("\nFree OCR.")  # "<image>\n" + the bare prompt
    assert seen["image_tokens"] == 145  # one 24-px global view: 144 queries + the view separator
    assert first.text == "# Hi" and first.words == (Word("# Hi", (1.0, 2.0, 3.0, 4.0)),) and not first.truncated
    assert first.raw == script["a.png"][: script["a.png"].index(EOS)]
    assert second.truncated and second.text == "x" * 64


def test_a_missing_model_is_unavailable_with_a_download_hint(tmp_path, make_document):
    engine = DEEPSEEK_SPEC.factory("transformers", {"model": str(tmp_path / "no-such-model"), "device": "cpu",
                                                    "local_files_only": "true"})
    with pytest.raises(EngineUnavailable, match="huggingface-cli download"):
        engine.recognize(make_document("x"))
    with pytest.raises(EngineUnavailable):  # remembered: not retried for every document
        engine.recognize(make_document("y"))


def test_a_fully_cached_run_never_loads_the_model(tiny_ocr2, tmp_path):
    from pytest_ocrmetrics.engines.cache import CachingEngine, OutputCache

    document = page(tmp_path, "c.png", (24, 24), (5, 5, 5))
    cache = OutputCache(tmp_path / "cache")
    options = {"model": str(tiny_ocr2), "device": "cpu", "max_tokens": "4"}
    CachingEngine(DEEPSEEK_SPEC.factory("transformers", options), cache).recognize(document)
    fresh = DEEPSEEK_SPEC.factory("transformers", options)
    assert CachingEngine(fresh, cache).recognize(document).cached
    assert fresh._loaded is None


# -- remote code ------------------------------------------------------------------------------------------------------

MODELING = '''
import os

import torch
from PIL import Image
from transformers import PretrainedConfig, PreTrainedModel


class TinyDeepseekOCRConfig(PretrainedConfig):
    model_type = "tiny_deepseek_ocr"


class TinyDeepseekOCR(PreTrainedModel):
    config_class = TinyDeepseekOCRConfig

    def __init__(self, config):
        super().__init__(config)
        self.proj = torch.nn.Linear(2, 2, bias=False)
        self.post_init()

    def infer(self, tokenizer, prompt='', image_file='', output_path = '', base_size=1024, image_size=640,
              crop_mode=True, test_compress=False, save_results=False, eval_mode=False):
        os.makedirs(output_path, exist_ok=True)
        assert os.path.isdir(output_path)
        with Image.open(image_file) as image:
            width, height = image.size
        echoed = tokenizer.decode(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        text = ("<|ref|>text<|/ref|><|det|>[[0, 0, 999, 999]]<|/det|>\\n"
                f"page {width}x{height} base={base_size} size={image_size} crop={crop_mode} "
                f"weights={float(self.proj.weight.sum()):.1f} prompt={echoed!r}")
        if not eval_mode:
            print(text)
            return None
        return text
'''


@pytest.fixture(scope="module")
def tiny_remote_code(tmp_path_factory) -> Path:
    import torch
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("tiny-deepseek-ocr-remote")
    (folder / "modeling_tinydeepseekocr.py").write_text(textwrap.dedent(MODELING))
    (folder / "config.json").write_text(json.dumps({
        "model_type": "tiny_deepseek_ocr",
        "architectures": ["TinyDeepseekOCR"],
        "auto_map": {"AutoConfig": "modeling_tinydeepseekocr.TinyDeepseekOCRConfig",
                     "AutoModel": "modeling_tinydeepseekocr.TinyDeepseekOCR"},
    }))
    save_file({"proj.weight": torch.full((2, 2), 1.5)}, str(folder / "model.safetensors"), metadata={"format": "pt"})
    char_tokenizer().save_pretrained(folder)
    return folder


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("Gundam", "base=1024 size=640 crop=True"), ("tiny", "base=512 size=512 crop=False"),
     ("Large", "base=1280 size=1280 crop=False")],
)
def test_remote_code_infer_gets_the_mode_and_returns_post_processed_text(tiny_remote_code, tmp_path, mode, expected):
    engine = DEEPSEEK_SPEC.factory(
        "remote-code", {"model": str(tiny_remote_code), "trust_remote_code": "true", "mode": mode, "device": "cpu"}
    )
    assert isinstance(engine, DeepSeekRemoteCodeEngine) and engine.local_files_only
    output = engine.recognize(page(tmp_path, "r.png", (40, 30), (0, 0, 0)))
    assert output.text == f"page 40x30 {expected} weights=6.0 prompt='<image>\\nFree OCR.'"
    assert output.words == (Word(output.text, (0.0, 0.0, 999.0, 999.0)),)
    assert output.raw.startswith("<|ref|>text<|/ref|>") and output.metadata["mode"] == mode.lower()
    assert engine.identity()["mode"] == mode.lower()


def test_remote_code_without_opt_in_is_refused(tiny_remote_code):
    from pytest_ocrmetrics.engines.base import EngineOptionError

    with pytest.raises(EngineOptionError, match="trust_remote_code=true"):
        DEEPSEEK_SPEC.factory("remote-code", {"model": str(tiny_remote_code), "trust_remote_code": "false"})


def test_remote_code_that_returns_no_text_is_a_clear_error(tiny_remote_code, tmp_path, monkeypatch):
    engine = DEEPSEEK_SPEC.factory("remote-code", {"model": str(tiny_remote_code), "trust_remote_code": "true",
                                                   "device": "cpu"})
    _, model = engine._ensure_loaded()
    monkeypatch.setattr(model, "infer", lambda tokenizer, **kwargs: None)
    with pytest.raises(EngineError, match="must support eval_mode=True"):
        engine.recognize(page(tmp_path, "n.png", (10, 10), (0, 0, 0)))


def test_remote_code_that_does_not_import_names_the_transformers_version_it_needs(tiny_remote_code, tmp_path_factory,
                                                                                   make_document):
    import shutil

    folder = tmp_path_factory.mktemp("tiny-deepseek-ocr-old")
    for path in tiny_remote_code.iterdir():
        shutil.copy(path, folder / path.name)
    modeling = folder / "modeling_tinydeepseekocr.py"
    modeling.write_text("from transformers.models.llama.modeling_llama import LlamaFlashAttention2\n" + modeling.read_text())
    engine = DEEPSEEK_SPEC.factory("remote-code", {"model": str(folder), "trust_remote_code": "true", "device": "cpu"})
    with pytest.raises(EngineUnavailable, match=r"needs transformers<=4\.47"):
        engine.recognize(make_document("old"))


def test_a_broken_checkpoint_is_one_clear_error_per_document(tiny_ocr2, tmp_path_factory, make_document):
    import shutil

    folder = tmp_path_factory.mktemp("broken-ocr2")
    for path in tiny_ocr2.iterdir():
        shutil.copy(path, folder / path.name)
    (folder / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{broken}")
    engine = DEEPSEEK_SPEC.factory("transformers", {"model": str(folder), "device": "cpu"})
    for name in ("a", "b"):
        with pytest.raises((EngineError, EngineUnavailable), match=r"cannot load DeepSeek model .*broken-ocr2"):
            engine.recognize(make_document(name))


# -- out of memory (issue 20 B2) ---------------------------------------------------------------------------------------


def _generate_failing_above(model, monkeypatch, limit: int, *, message: str | None = None) -> list[int]:
    """Make ``model.generate`` run out of memory for batches larger than ``limit``; returns the sizes it was given."""
    import torch

    real = model.generate
    sizes: list[int] = []

    def generate(**inputs):
        sizes.append(int(inputs["input_ids"].shape[0]))
        if sizes[-1] > limit:
            if message is not None:
                raise RuntimeError(message)
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(**inputs)

    monkeypatch.setattr(model, "generate", generate)
    return sizes


def test_a_batch_that_runs_out_of_memory_is_retried_at_half_the_size(tiny_ocr2, tmp_path, monkeypatch):
    from pytest_ocrmetrics.engines.deepseek import DeepSeekMemoryWarning

    engine = DEEPSEEK_SPEC.factory("transformers", {"model": str(tiny_ocr2), "device": "cpu", "max_tokens": "5",
                                                    "batch_size": "5"})
    _, model, _, _ = engine._ensure_loaded()
    documents = [page(tmp_path, f"m{i}.png", (30, 30), (i * 40, 9, 9)) for i in range(5)]
    expected = [engine.recognize(d).raw for d in documents]  # one by one: fits
    sizes = _generate_failing_above(model, monkeypatch, 2)
    with pytest.warns(DeepSeekMemoryWarning, match=r"batch of 5 pages ran out of memory.*halved to 2 pages.*"
                                                   r"deepseek.batch_size=5"):
        outputs = engine.recognize_batch(documents)
    assert not any(isinstance(o, BaseException) for o in outputs)
    assert [o.raw for o in outputs] == expected  # every page got its own output
    assert sizes == [5, 3, 2, 1, 2]  # 5 -> 3 + 2 -> (2 + 1) + 2
    assert all(o.metadata["batch_halved_from"] == 5 for o in outputs)
    assert [o.metadata["batch"] for o in outputs] == [2, 2, 1, 2, 2]
    sizes.clear()
    later = engine.recognize_batch(documents)  # later batches start at the size that fitted, without a new warning
    assert sizes == [2, 2, 1] and not any(isinstance(o, BaseException) for o in later)
    engine.close()


def test_a_page_that_runs_out_of_memory_alone_errors_with_a_sentence(tiny_ocr2, tmp_path, monkeypatch):
    engine = DEEPSEEK_SPEC.factory("transformers", {"model": str(tiny_ocr2), "device": "cpu", "max_tokens": "5",
                                                    "batch_size": "4"})
    _, model, _, _ = engine._ensure_loaded()
    documents = [page(tmp_path, f"n{i}.png", (30, 30), (9, i * 40, 9)) for i in range(4)]
    sizes = _generate_failing_above(model, monkeypatch, 0, message="HIP out of memory (ROCm)")  # the message form
    with pytest.warns(RuntimeWarning):
        results = engine.recognize_batch(documents)
    assert sizes == [4, 2, 1, 1, 2, 1, 1]
    assert all(isinstance(r, EngineError) for r in results)
    message = str(results[0])
    assert "'n0.png'" in message and "ran out of memory" in message
    assert "batch size tried: 4 halved down to 1" in message and "deepseek.batch_size=4" in message
    with pytest.raises(EngineError, match=r"batch size tried: 1;"):  # one page alone from the start
        engine.recognize(documents[0])
    engine.close()


def test_a_single_page_that_runs_out_of_memory_errors_without_a_halving_warning(tiny_ocr2, tmp_path, monkeypatch):
    import warnings

    engine = DEEPSEEK_SPEC.factory("transformers", {"model": str(tiny_ocr2), "device": "cpu", "max_tokens": "5"})
    _, model, _, _ = engine._ensure_loaded()
    _generate_failing_above(model, monkeypatch, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(EngineError, match=r"'s.png' alone \(batch size tried: 1; deepseek.batch_size=4\)"):
            engine.recognize(page(tmp_path, "s.png", (30, 30), (3, 3, 3)))
    engine.close()


def test_an_error_that_is_not_out_of_memory_is_not_retried(tiny_ocr2, tmp_path, monkeypatch):
    engine = DEEPSEEK_SPEC.factory("transformers", {"model": str(tiny_ocr2), "device": "cpu", "max_tokens": "5"})
    _, model, _, _ = engine._ensure_loaded()
    sizes = _generate_failing_above(model, monkeypatch, 0, message="shape mismatch")
    with pytest.raises(RuntimeError, match="shape mismatch"):
        engine.recognize_batch([page(tmp_path, "q.png", (30, 30), (1, 1, 1)), page(tmp_path, "r.png", (30, 30), (2, 2, 2))])
    assert sizes == [2]
    engine.close()


@pytest.mark.parametrize("fails", [False, True])
def test_remote_code_temporary_files_are_one_registered_folder_removed_after_the_page(
        tiny_remote_code, tmp_path, monkeypatch, fails):
    """The image copy lives in infer()'s output folder, which is registered for removal at exit and on SIGTERM while
    the page runs (issue 20 A16) and removed after it, also when infer() fails."""
    from pytest_ocrmetrics.core import cleanup
    engine = DEEPSEEK_SPEC.factory(
        "remote-code", {"model": str(tiny_remote_code), "trust_remote_code": "true", "device": "cpu"}
    )
    _, model = engine._ensure_loaded()
    seen: dict[str, str] = {}

    def infer(tokenizer, *, image_file, output_path, **kwargs):
        seen.update(image=image_file, folder=output_path)
        assert Path(image_file).parent == Path(output_path) and output_path in cleanup._PATHS
        if fails:
            raise RuntimeError("boom")
        return "text"

    monkeypatch.setattr(model, "infer", infer)
    document = page(tmp_path, "t.png", (30, 30), (5, 5, 5))
    if fails:
        with pytest.raises(EngineError, match="boom"):
            engine.recognize(document)
    else:
        assert engine.recognize(document).text == "text"
    assert Path(seen["folder"]).name.startswith("ocrmetrics-deepseek-")
    assert not Path(seen["folder"]).exists() and seen["folder"] not in cleanup._PATHS
