"""``--ocr-repeats=N`` (each document recognised N times by a live engine, facts decided by strict majority, every
repeat cached under its own key) and ``--ocr-pdf-longest-side`` (the resolution PDF pages are rendered at)."""

from __future__ import annotations

import importlib.util
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.core.pdf import DEFAULT_LONGEST_SIDE
from pytest_ocrmetrics.engines.base import EngineError, OcrOutput
from pytest_ocrmetrics.engines.cache import OutputCache
from pytest_ocrmetrics.engines.prefetch import Prefetcher
from pytest_ocrmetrics.engines.registry import default_registry
from pytest_ocrmetrics.engines.repeats import RepeatingEngine, combine_repeats
from pytest_ocrmetrics.scoring.runner import OcrRunner, RunnerSettings
from tests.helpers.plugin import PNG_1X1, make_dataset

VARYING_ENGINE = """
import os, threading
from pathlib import Path
from pytest_ocrmetrics.engines.base import EngineError, EngineSpec, OcrOutput

TEXTS = ["Hello world", "Hello there", "Hullo world"]

class Varying:
    name = "varying"
    concurrent = True  # thread-safe: with --ocr-concurrency the prefetch pool runs it
    def __init__(self):
        self.calls = {}
        self.lock = threading.Lock()
    def identity(self):
        return {"engine": "varying", "temperature": 0.7}
    def recognize(self, document):
        with self.lock:
            n = self.calls[document.id] = self.calls.get(document.id, -1) + 1
            with open(Path(__file__).parent / "calls.txt", "a") as log:
                log.write(document.id + "\\n")
        if n == 1 and document.id == os.environ.get("FAIL_ON"):
            raise EngineError("server answered 500 on the second repeat")
        return OcrOutput(text=TEXTS[n % 3], engine="varying", elapsed_s=0.5)
    def close(self):
        pass

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("varying", lambda arg, options: Varying()))
"""

# a.png: every fact passes by majority (two of them flaky); b.png: "Hello world" passes only in repeat 1
FACT_DOCS: dict[str, dict[str, Any]] = {
    "a.png": {"full_text": "Hello world", "facts": [
        {"id": "hello", "type": "present", "text": "Hello"},          # pass, pass, fail
        {"id": "no-there", "type": "absent", "text": "there"},        # pass, fail, pass
        {"id": "llo", "type": "present", "text": "llo"},              # pass, pass, pass
    ]},
    "b.png": {"full_text": "Hello world", "facts": [
        {"id": "whole", "type": "present", "text": "Hello world"},    # pass, fail, fail
    ]},
}


def _calls(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def _facts(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {fact["id"]: fact for record in run["documents"] for fact in record["details"]["facts"]}


def _fact_run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=varying", "--ocr-json=run.json",
                              "--ocr-min=fact_pass_rate:1", "-p", "no:randomly", *args)


@pytest.mark.xdist_transport
def test_repeats_give_n_texts_facts_take_the_majority_and_the_cache_replays_them(
        pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path, FACT_DOCS, {})
    pytester.makeconftest(VARYING_ENGINE)
    result = _fact_run(pytester, "--ocr-repeats=3", "--ocr-concurrency=2", *plugin_args)
    result.assert_outcomes(passed=1, failed=1)  # b.png: its one fact fails in 2 of 3 repeats
    result.stdout.fnmatch_lines(["*fact 'whole' (present) failed*"])
    assert sorted(_calls(pytester)) == ["a.png"] * 3 + ["b.png"] * 3
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    facts = _facts(run)
    assert {name: [r["passed"] for r in fact["repeats"]] for name, fact in facts.items()} == {
        "hello": [True, True, False], "no-there": [True, False, True], "llo": [True, True, True],
        "whole": [True, False, False]}
    assert {name: (fact["passed"], fact["flaky"]) for name, fact in facts.items()} == {
        "hello": (True, True), "no-there": (True, True), "llo": (True, False), "whole": (False, True)}
    records = {record["id"]: record for record in run["documents"]}
    assert records["a.png"]["metrics"]["cer"] == 0.0  # text metrics read the first repeat ("Hello world")
    assert run["environment"]["engines"]["varying"]["repeats"] == 3
    assert run["environment"]["engines"]["varying"]["temperature"] == 0.7

    # a second run: the same three texts per page from the cache, the engine never called
    again = _fact_run(pytester, "--ocr-repeats=3", "--junitxml=out.xml", *plugin_args)
    again.assert_outcomes(passed=1, failed=1)
    assert len(_calls(pytester)) == 6
    rerun = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert _facts(rerun) == facts
    assert (pytester.path / "out.xml").read_text().count('name="ocr.cached" value="true"') == 2


def test_repeat_one_reuses_a_cache_filled_without_repeats(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, FACT_DOCS, {})
    pytester.makeconftest(VARYING_ENGINE)
    _fact_run(pytester).assert_outcomes(passed=2)  # one output per page: "Hello world" passes every fact
    assert len(_calls(pytester)) == 2
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert "repeats" not in run["environment"]["engines"]["varying"]
    result = _fact_run(pytester, "--ocr-repeats=2")
    assert sorted(_calls(pytester)[2:]) == ["a.png", "b.png"]  # only repeat 2 of each page ran
    result.assert_outcomes(passed=2)
    facts = _facts(json.loads((pytester.path / "run.json").read_text(encoding="utf-8")))
    # this process's engine starts counting again: its first call (repeat 2) answers "Hello world" as well
    assert [r["passed"] for r in facts["whole"]["repeats"]] == [True, True]


def test_an_error_in_any_repeat_errors_that_document_only(pytester: pytest.Pytester, plugin_args: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    make_dataset(pytester.path, FACT_DOCS, {})
    pytester.makeconftest(VARYING_ENGINE)
    monkeypatch.setenv("FAIL_ON", "b.png")
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=varying", "--ocr-repeats=3",
                                "--ocr-concurrency=2", "-p", "no:randomly", *plugin_args)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*server answered 500 on the second repeat*b.png*"])
    result.stdout.no_fnmatch_line("*Traceback*")


@pytest.mark.parametrize("value", ["0", "x", "101"])
def test_bad_repeats_are_one_usage_error(pytester: pytest.Pytester, value: str) -> None:
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", f"--ocr-engine=replay:{pytester.path / 'preds'}",
                                f"--ocr-repeats={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR")]
    assert len(errors) == 1 and "--ocr-repeats" in errors[0], result.stderr.str()


def test_replay_is_not_repeated_and_says_so_once(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", f"--ocr-engine=replay:{pytester.path / 'preds'}",
                                "--ocr-repeats=3", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=3)
    text = result.stdout.str()
    note = "--ocr-repeats=3 does not apply to engine 'replay'"
    assert note in text
    assert text.count(note) == 1, text  # the warnings summary shows one message, however many workers said it
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert "repeats" not in run["environment"]["engines"]["replay"]


# -- the wrapper without pytest -----------------------------------------------------------------------------------

class _Sequence:
    """Answers the next text of ``texts`` per document on each call (an error for the calls in ``fail``); counts
    calls and batches."""

    name = "sequence"
    concurrent = True
    batch_size = 2

    def __init__(self, texts: list[str], fail: frozenset[tuple[str, int]] = frozenset()) -> None:
        self.texts = texts
        self.fail = fail  # (document id, call number from 1)
        self.calls: dict[str, int] = {}
        self.batches = 0
        self.lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {"engine": "sequence"}

    def recognize(self, document: Document) -> OcrOutput:
        with self.lock:
            n = self.calls[document.id] = self.calls.get(document.id, 0) + 1
        if (document.id, n) in self.fail:
            raise EngineError(f"call {n} of {document.id} failed")
        return OcrOutput(text=self.texts[(n - 1) % len(self.texts)], engine="sequence", elapsed_s=1.0)

    def recognize_batch(self, documents: list[Document]) -> list[OcrOutput | BaseException]:
        self.batches += 1
        results: list[OcrOutput | BaseException] = []
        for document in documents:
            try:
                results.append(self.recognize(document))
            except EngineError as exc:
                results.append(exc)
        return results

    def close(self) -> None:
        pass


def _documents(tmp_path: Path, count: int) -> list[Document]:
    documents = []
    for i in range(count):
        image = tmp_path / f"d{i}.png"
        image.write_bytes(PNG_1X1 + bytes([i]))
        documents.append(Document(id=f"d{i}.png", dataset="t", image_path=image))
    return documents


# hostile texts survive the cache exactly: a lone surrogate, an escape sequence, a bidi override, a long page
HOSTILE = ["lone \ud800 surrogate", "\x1b[31mred\x1b[0m \u202eevil", "x" * 200_000]


def test_each_repeat_is_cached_under_its_own_key_and_comes_back_the_same(tmp_path: Path) -> None:
    document = _documents(tmp_path, 1)[0]
    cache = OutputCache(tmp_path / "cache")
    engine = _Sequence(HOSTILE)
    output = RepeatingEngine(engine, 3, cache=cache).recognize(document)
    assert output.metadata["repeats"] == HOSTILE and output.text == HOSTILE[0]
    assert output.elapsed_s == 3.0 and not output.cached
    assert cache.writes == 3 and len(list((tmp_path / "cache").rglob("*.json"))) == 3
    fresh = _Sequence(["never"])
    again = RepeatingEngine(fresh, 3, cache=OutputCache(tmp_path / "cache")).recognize(document)
    assert again.metadata["repeats"] == HOSTILE and again.cached and fresh.calls == {}
    assert again.elapsed_s == 3.0  # the stored timings, summed
    # repeat 1's key is the key a run without repeats uses
    single = OutputCache(tmp_path / "cache")
    first, second = (single.get(single.key(document, fresh, identity=identity)) for identity in (
        None, {"engine": "sequence", "repeat": 2}))
    assert first is not None and first.text == HOSTILE[0]
    assert second is not None and second.text == HOSTILE[1]


def test_identity_names_the_repeats_and_attributes_pass_through(tmp_path: Path) -> None:
    engine = _Sequence(["a"])
    assert RepeatingEngine(engine, 3).identity() == {"engine": "sequence", "repeats": 3}
    assert RepeatingEngine(engine, 1).identity() == {"engine": "sequence"}
    wrapped = RepeatingEngine(engine, 2, cache=OutputCache(tmp_path))
    assert wrapped.concurrent is True and wrapped.batch_size == 2 and wrapped.name == "sequence"
    assert callable(wrapped.recognize_batch)

    class Plain:
        name = "plain"

        def identity(self) -> dict[str, Any]:
            return {}

        def recognize(self, document: Document) -> OcrOutput:
            return OcrOutput("p")

        def close(self) -> None:
            pass

    assert not hasattr(RepeatingEngine(Plain(), 2), "recognize_batch")
    with pytest.raises(ValueError, match="at least 1"):
        RepeatingEngine(engine, 0)


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_the_prefetch_pool_runs_the_wrapper_in_batches(tmp_path: Path, cached: bool) -> None:
    documents = _documents(tmp_path, 5)
    engine = _Sequence(["one", "two", "three"])
    cache = OutputCache(tmp_path / "cache") if cached else None
    with Prefetcher(RepeatingEngine(engine, 3, cache=cache), documents, concurrency=2) as prefetcher:
        outputs = [prefetcher.result(document) for document in documents]
    assert prefetcher.batch_size == 2 and engine.batches == 3 * 3  # 3 batches of at most 2 pages, once per repeat
    assert [output.metadata["repeats"] for output in outputs] == [["one", "two", "three"]] * 5
    assert engine.calls == {document.id: 3 for document in documents}


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_a_failing_repeat_fails_its_document_and_the_others_go_on(tmp_path: Path, cached: bool) -> None:
    documents = _documents(tmp_path, 2)
    engine = _Sequence(["one", "two", "three"], fail=frozenset({("d1.png", 2)}))
    cache = OutputCache(tmp_path / "cache") if cached else None
    results = RepeatingEngine(engine, 3, cache=cache).recognize_batch(documents)  # type: ignore[attr-defined]
    assert isinstance(results[0], OcrOutput) and results[0].metadata["repeats"] == ["one", "two", "three"]
    assert isinstance(results[1], EngineError) and "call 2 of d1.png failed" in str(results[1])
    assert engine.calls == {"d0.png": 3, "d1.png": 2}  # no third repeat after the failure
    with pytest.raises(EngineError, match="call 2 of d0.png failed"):
        RepeatingEngine(_Sequence(["a"], fail=frozenset({("d0.png", 2)})), 3).recognize(documents[0])
    missing = Document(id="gone.png", dataset="t", image_path=tmp_path / "gone.png")
    wrapped = RepeatingEngine(_Sequence(["a"]), 2, cache=cache)
    results = wrapped.recognize_batch([missing, documents[0]])  # type: ignore[attr-defined]
    assert isinstance(results[0], EngineError) and "does not exist" in str(results[0])
    assert isinstance(results[1], OcrOutput) and len(results[1].metadata["repeats"]) == 2


def test_combine_repeats_keeps_the_first_outputs_metadata() -> None:
    first = OcrOutput("a", metadata={"model": "m"}, cached=True, elapsed_s=0.25)
    combined = combine_repeats([first, OcrOutput("b", cached=True, elapsed_s=0.5)])
    assert combined.metadata == {"model": "m", "repeats": ["a", "b"]}
    assert combined.cached and combined.elapsed_s == 0.75 and combined.text == "a"


# -- PDF page resolution ------------------------------------------------------------------------------------------

def _pdf(width: float, height: float) -> bytes:
    return (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
            + f"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 {width} {height}]>>endobj\n".encode()
            + b"trailer<</Root 1 0 R>>\n%%EOF\n")


def _bench(root: Path, pages: dict[str, tuple[float, float]], fact_text: str = "x") -> Path:
    (root / "pdfs").mkdir(parents=True)
    lines = []
    for name, (width, height) in pages.items():
        (root / "pdfs" / name).write_bytes(_pdf(width, height))
        lines.append(json.dumps({"pdf": name, "page": 1, "id": "size", "type": "present", "text": fact_text}))
    (root / "tests.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _size(png: bytes) -> tuple[int, int]:
    from PIL import Image

    return Image.open(io.BytesIO(png)).size


def test_pdf_pages_are_rendered_at_the_configured_longest_side_and_keyed_by_it(tmp_path: Path) -> None:
    pytest.importorskip("pypdfium2", reason="PDF rendering needs the pdf extra")
    root = _bench(tmp_path / "bench", {"wide.pdf": (200, 100), "odd.pdf": (300, 700.3)})
    cache = OutputCache(tmp_path / "cache")
    engine = _Sequence(["a"])
    keys = {}
    for side in (DEFAULT_LONGEST_SIDE, 500, 3333):
        runner = OcrRunner(RunnerSettings(pdf_longest_side=side), default_registry())
        pages = {document.id: document for document in runner.dataset(root)}
        assert {page.render_longest_side for page in pages.values()} == {side}
        assert max(_size(pages["wide_pg1"].image_bytes())) == side
        assert max(_size(pages["odd_pg1"].image_bytes())) == side  # exact, though pdfium rounds sizes up
        keys[side] = cache.key(pages["wide_pg1"], engine)
    assert _size(Document(id="w", dataset="d", image_path=root / "pdfs" / "wide.pdf", page=1).image_bytes()) \
        == (DEFAULT_LONGEST_SIDE, DEFAULT_LONGEST_SIDE // 2)  # a document made elsewhere keeps the default
    assert len(set(keys.values())) == 3  # another resolution is another image, so another cache entry


RESOLUTION_ENGINE = """
import io
from PIL import Image
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput, read_image

class Size:
    name = "size"
    def identity(self): return {"engine": "size"}
    def recognize(self, document):
        width, height = Image.open(io.BytesIO(read_image(document))).size
        return OcrOutput(text=f"{width}x{height}", engine="size")
    def close(self): pass

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("size", lambda arg, options: Size()))
"""


def test_the_longest_side_option_reaches_the_engine(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    # find_spec, not importorskip: pytester drops modules imported during the test, and numpy cannot load twice
    if importlib.util.find_spec("pypdfium2") is None:
        pytest.skip('PDF pages need pypdfium2: pip install "pytest-ocrmetrics[pdf]"')
    _bench(pytester.path / "bench", {"wide.pdf": (200, 100)}, fact_text="600x300")
    pytester.makeconftest(RESOLUTION_ENGINE)
    for option, passed in (([], False), (["--ocr-pdf-longest-side=600"], True)):
        result = pytester.runpytest("--ocr-dataset=bench", "--ocr-engine=size", "--ocr-min=fact_pass_rate:0",
                                    "--ocr-json=run.json", *option, *plugin_args)
        result.assert_outcomes(passed=1)
        run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
        facts = {fact["id"]: fact for fact in run["documents"][0]["details"]["facts"]}
        assert facts["size"]["passed"] is passed, facts["size"]  # the engine read "1288x644", then "600x300"
