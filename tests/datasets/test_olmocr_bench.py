"""olmOCR-bench folders as datasets: PDF pages, their facts, added baselines, bad lines skipped; replay repeats;
``fact_pass_rate`` through the plugin's thresholds; facts in ground_truth.json; PDF pages rendered for live engines."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from pytest_ocrmetrics.datasets import DatasetError, load_dataset
from pytest_ocrmetrics.engines.base import EngineError
from pytest_ocrmetrics.engines.replay import ReplayEngine
from pytest_ocrmetrics.scoring.document import score_document
from tests.dataset_errors import entry_error

# a one-page PDF with no content (what the benchmark's blank-page PDFs look like to a parser)
MINIMAL_PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
               b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")


def bench(tmp_path: Path, lines: list[str], pdfs: tuple[str, ...] = ("a.pdf", "sub/b.pdf")) -> Path:
    root = tmp_path / "bench"
    for pdf in pdfs:
        (root / "pdfs" / pdf).parent.mkdir(parents=True, exist_ok=True)
        (root / "pdfs" / pdf).write_bytes(MINIMAL_PDF)
    (root / "tests.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def line(**fact: object) -> str:
    return json.dumps({"pdf": "a.pdf", "page": 1, **fact}, ensure_ascii=False)


def test_a_bench_folder_is_detected_and_a_document_is_a_page(tmp_path: Path) -> None:
    root = bench(tmp_path, [
        line(id="a1", type="present", text="Hello"),
        "",
        line(id="a2", type="absent", text="Footer", page=2),
        line(pdf="sub/b.pdf", id="b1", type="baseline", max_length=10),
    ])
    dataset = load_dataset(root)
    assert dataset.format == "olmocr_bench" and not dataset.skipped
    assert [(d.id, d.page, [f.id for f in d.facts]) for d in dataset] == [
        ("a_pg1", 1, ["a1", "a.pdf_baseline"]),  # a.pdf has no baseline fact: one is added, on page 1
        ("a_pg2", 2, ["a2"]),
        ("sub/b_pg1", 1, ["b1"]),  # sub/b.pdf has its own
    ]
    first = dataset.documents[0]
    assert first.image_path == root / "pdfs" / "a.pdf" and first.error is None
    assert first.facts[0].group == "tests.jsonl" and first.facts[1].group == "baseline"
    assert first.facts[0].source == f"{root / 'tests.jsonl'}:1"


def test_bad_lines_are_skipped_with_file_and_line_and_the_rest_runs(tmp_path: Path) -> None:
    root = bench(tmp_path, [
        line(id="ok", type="present", text="Hello"),
        "{not json",
        line(id="t", type="tabel", cell="x"),
        line(id="f", type="present", txt="x"),
        line(id="ok", type="absent", text="dup"),
        line(id="p", type="present", text="x", pdf="b.pdf"),
    ])
    dataset = load_dataset(root)
    jsonl = root / "tests.jsonl"
    reasons = {entry.source: entry.reason for entry in dataset.skipped}
    assert sorted(reasons) == [f"{jsonl}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "invalid JSON at line 2" in reasons[f"{jsonl}:2"]
    assert "unknown fact type 'tabel' (did you mean 'table'?)" in reasons[f"{jsonl}:3"]
    assert "unknown field 'txt' for a present fact; did you mean 'text'?" in reasons[f"{jsonl}:4"]
    assert "already used at" in reasons[f"{jsonl}:5"]
    assert "names PDF 'b.pdf', which is not under" in reasons[f"{jsonl}:6"] and "did you mean 'sub/b.pdf'?" in reasons[f"{jsonl}:6"]
    assert [f.id for d in dataset for f in d.facts] == ["ok", "a.pdf_baseline", "sub/b.pdf_baseline"]


def test_a_file_that_is_not_a_pdf_errors_only_its_pages(tmp_path: Path) -> None:
    root = bench(tmp_path, [line(id="a1", type="present", text="x")])
    (root / "pdfs" / "a.pdf").write_bytes(b"\x89PNG not a pdf")
    dataset = load_dataset(root)
    errors = {d.id: d.error for d in dataset}
    assert "is not a PDF" in errors["a_pg1"] and errors["sub/b_pg1"] is None


def test_no_pdfs_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    (root / "pdfs").mkdir(parents=True)
    (root / "x.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(DatasetError, match="no PDF files"):
        load_dataset(root)


def test_replay_reads_every_repeat_and_facts_take_the_majority(tmp_path: Path) -> None:
    root = bench(tmp_path, [line(id="a1", type="present", text="Hello"), line(id="a2", type="absent", text="Footer")])
    out = tmp_path / "candidate"
    (out / "sub").mkdir(parents=True)
    for r, text in {1: "Hello Footer", 2: "Hello", 3: "Hullo", 10: "Hello"}.items():
        (out / f"a_pg1_repeat{r}.md").write_text(text, encoding="utf-8")
    (out / "a_pg1_repeat2.md.bak").write_text("ignored", encoding="utf-8")
    dataset = load_dataset(root)
    engine = ReplayEngine(out)
    page = dataset.documents[0]
    output = engine.recognize(page)
    assert output.metadata["repeats"] == ["Hello Footer", "Hello", "Hullo", "Hello"]  # repeat 1, 2, 3, 10
    facts = {f["id"]: f for f in score_document(page, output, engine="replay").details["facts"]}
    assert [r["passed"] for r in facts["a1"]["repeats"]] == [True, True, False, True]
    assert facts["a1"]["passed"] is True and facts["a1"]["flaky"] is True
    assert [r["passed"] for r in facts["a2"]["repeats"]] == [False, True, True, True]
    with pytest.raises(EngineError, match=r"sub/b_pg1_repeat<r>\.md"):
        engine.recognize(dataset.documents[1])


def test_fact_pass_rate_counts_and_details(tmp_path: Path) -> None:
    root = bench(tmp_path, [line(id="a1", type="present", text="Hello"), line(id="a2", type="absent", text="Hello")])
    out = tmp_path / "candidate"
    out.mkdir()
    (out / "a_pg1_repeat1.md").write_text("Hello world", encoding="utf-8")
    page = load_dataset(root).documents[0]
    score = score_document(page, ReplayEngine(out).recognize(page), engine="replay")
    assert score.metrics == {"fact_pass_rate": pytest.approx(2 / 3)}
    assert score.counts["fact_pass_rate"] == {"passed": 2, "total": 3}
    failing = [f for f in score.details["facts"] if not f["passed"]]
    assert [(f["id"], f["type"]) for f in failing] == [("a2", "absent")]
    assert "Expected absence of 'Hello...'" in failing[0]["explanation"]


def test_facts_in_a_ground_truth_json(tmp_path: Path) -> None:
    root = tmp_path / "inv"
    (root / "images").mkdir(parents=True)
    (root / "images" / "x.png").write_bytes(bytes.fromhex("89504e470d0a1a0a"))
    (root / "ground_truth.json").write_text(json.dumps({"x.png": {"full_text": "Total 5", "facts": [
        {"id": "total", "type": "present", "text": "Total 5"},
        {"id": "no-header", "type": "absent", "text": "ACME"}]}}), encoding="utf-8")
    document = load_dataset(root).documents[0]
    assert [f.id for f in document.facts] == ["total", "no-header"]
    (root / "ground_truth.json").write_text(json.dumps({"x.png": {"facts": [{"id": "t", "type": "presnt"}]}}),
                                            encoding="utf-8")
    assert re.search(r"x\.png.*fact 1: fact 't': unknown fact type 'presnt' \(did you mean",
                     entry_error(load_dataset(root), "x.png"))


def test_a_pdf_page_is_rendered_as_the_documents_image(tmp_path: Path) -> None:
    pytest.importorskip("pypdfium2", reason="PDF rendering needs the pdf extra")
    from PIL import Image

    root = bench(tmp_path, [line(id="a1", type="present", text="x")])
    page = load_dataset(root).documents[0]
    png = page.image_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert Image.open(io.BytesIO(png)).size == (1288, 644)  # 200x100 pt, longest side at olmOCR's 1288 px
    from pytest_ocrmetrics.engines.cache import image_digest

    assert image_digest(page) == image_digest(page.with_image_bytes())  # the cache hashes the rendered page


@pytest.mark.xdist_transport
def test_plugin_thresholds_on_fact_pass_rate(pytester: pytest.Pytester, shared_data: Path,
                                              plugin_args: list[str]) -> None:
    sample = shared_data / "olmocr_bench_sample"
    if not sample.is_dir():
        pytest.skip(f"olmOCR-bench sample not found at {sample}")
    data = pytester.path / "bench"
    shutil.copytree(sample, data)  # the PDFs stay out of the repository: copied per test run only
    result = pytester.runpytest_subprocess(  # isolated: numpy, PIL and Playwright load once
        f"--ocr-dataset={data}", f"--ocr-engine=replay:{data / 'olmocr_pipeline'}",
        f"--ocr-json={pytester.path / 'run.json'}", "-p", "no:randomly", *plugin_args)
    # every fact must pass by default: earnings (5/6) and mathfuncs fail; the other four pages pass
    result.assert_outcomes(passed=4, failed=2)
    result.stdout.fnmatch_lines(["*fact 'earnings_table00' (table) failed: Found cells matching '1,136'*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    expected_file = Path(__file__).parents[1] / "facts" / "expected_verdicts.json"  # the benchmark's own verdicts
    expected = {f["id"]: f["passed"] for f in json.loads(expected_file.read_text(encoding="utf-8"))["sample"]}
    verdicts = {fact["id"]: fact["passed"] for fact in run["facts"]}
    assert len(verdicts) == len(run["facts"]) == 39
    if importlib.util.find_spec("playwright") is None or shutil.which("chromium") is None:
        verdicts.pop("mathfuncs_04", None)  # the math layout step needs a browser (see tests/facts)
    assert verdicts == {k: v for k, v in expected.items() if k in verdicts}
    # one item per fact: -k selects the benchmark's fact by its id
    result = pytester.runpytest_subprocess(
        f"--ocr-dataset={data}", f"--ocr-engine=replay:{data / 'olmocr_pipeline'}", "--ocr-fact-items",
        "-k", "earnings_table00", "-p", "no:randomly", *plugin_args)
    result.assert_outcomes(failed=1)
    records = {r["id"]: r for r in run["documents"]}
    assert records["earnings_pg1"]["counts"]["fact_pass_rate"] == {"passed": 5, "total": 6}
    assert {f["id"]: f["passed"] for f in records["earnings_pg1"]["details"]["facts"]}["earnings_table00"] is False


def test_a_live_engine_reads_the_rendered_pages_and_facts_are_scored(pytester: pytest.Pytester,
                                                                     shared_data: Path) -> None:
    # find_spec, not importorskip: pytester drops modules imported during the test, and numpy cannot load twice
    if importlib.util.find_spec("pytesseract") is None:
        pytest.skip('pytesseract is not installed: pip install "pytest-ocrmetrics[tesseract]"')
    if importlib.util.find_spec("pypdfium2") is None:
        pytest.skip('PDF pages need pypdfium2: pip install "pytest-ocrmetrics[pdf]"')
    if shutil.which("tesseract") is None:
        pytest.skip("the tesseract binary is not installed: apt-get install tesseract-ocr")
    sample = shared_data / "olmocr_bench_sample"
    if not sample.is_dir():
        pytest.skip(f"olmOCR-bench sample not found at {sample}")
    data = pytester.path / "bench"
    shutil.copytree(sample / "pdfs", data / "pdfs")
    for jsonl in sample.glob("*.jsonl"):
        shutil.copy(jsonl, data / jsonl.name)
    result = pytester.runpytest_subprocess(  # isolated: numpy, PIL and Playwright load once
        f"--ocr-dataset={data}", "--ocr-engine=tesseract", f"--ocr-json={pytester.path / 'run.json'}",
        "--ocr-min=fact_pass_rate:0", "-p", "no:randomly")  # scored, not judged: Tesseract reads no tables or math
    result.assert_outcomes(passed=6)
    records = {r["id"]: r for r in json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["documents"]}
    assert set(records) == {"blank_book_pg1_pg1", "earnings_pg1", "headers_footers/ff0f0b22c55d8b90dd77d153f48e144fc9db_pg2_pg1",
                            "mathfuncs_pg1", "multi_column_miss_pg1", "small_page_size_pg1"}
    assert all(r["counts"]["fact_pass_rate"]["total"] == len(r["details"]["facts"]) for r in records.values())
    # the pages were read: the tiny-text page's body is found, the blank page stays (nearly) blank
    small = {f["id"]: f["passed"] for f in records["small_page_size_pg1"]["details"]["facts"]}
    assert small["small_page_size.pdf_baseline"] is True
    assert {f["id"]: f["passed"] for f in records["blank_book_pg1_pg1"]["details"]["facts"]} == {"test1_blank": True}


def test_hostile_fact_texts_load_and_check(tmp_path: Path) -> None:
    facts = [dict(id="s", type="present", text="lone \ud800 surrogate"),  # a JSON escape: valid JSON, no UTF-8
             dict(id="c", type="absent", text="ctrl \x00\x1b[31m"),
             dict(id="big", type="present", text="x" * 100_000),
             dict(id="u", type="order", before="a\u2028b", after="\u202e\u200d")]
    root = bench(tmp_path, [json.dumps({"pdf": "a.pdf", "page": 1, **fact}) for fact in facts])
    dataset = load_dataset(root)
    assert not dataset.skipped
    out = tmp_path / "candidate"
    out.mkdir()
    output = "lone \ufffd surrogate ctrl \x00\x1b[31m " + "x" * 1000 + " end."
    (out / "a_pg1_repeat1.md").write_text(output, encoding="utf-8")
    page = dataset.documents[0]
    verdicts = {f["id"]: f["passed"] for f in score_document(page, ReplayEngine(out).recognize(page),
                                                             engine="replay").details["facts"]}
    assert verdicts == {"s": False, "c": False, "big": False, "u": False, "a.pdf_baseline": True}
