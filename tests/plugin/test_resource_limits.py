"""The resource limits are settings (issue 20 A12, A14): ``--ocr-max-image-pixels`` and ``--ocr-max-output-chars``
(with their ini twins) change which documents error, each such document errors alone with a sentence naming the
setting, and a value that is not a limit is one usage error."""

from __future__ import annotations

import json

import pytest

from tests.helpers.plugin import make_dataset, usage_error_line
from tests.plugin.test_input_boundaries import COUNTING_ENGINE
from tests.test_memory_bounds import png_header

pytest_plugins = ["pytester"]

# the counting engine, but doc_002 ("Hello world", 11 characters) gets a 100-character output
LONG_OUTPUT_ENGINE = COUNTING_ENGINE.replace(
    'return OcrOutput(text=document.reference_text or ""',
    'return OcrOutput(text="y" * 100 if document.id == "doc_002.png" else document.reference_text or ""',
)


def _outcomes(pytester: pytest.Pytester) -> dict[str, str]:
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    return {d["id"]: d["outcome"] for d in run["documents"]}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
@pytest.mark.parametrize("where", ["option", "ini"])
def test_the_pixel_limit_is_a_setting(pytester: pytest.Pytester, xdist: list[str], where: str) -> None:
    if xdist:
        pytest.importorskip("xdist")
    dataset = make_dataset(pytester.path)
    (dataset / "images" / "doc_001.png").write_bytes(png_header(30, 20))  # 600 pixels; the others have 1
    pytester.makeconftest(COUNTING_ENGINE)
    common = ["--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-no-cache", "--ocr-json=run.json", *xdist]
    pytester.runpytest(*common).assert_outcomes(passed=3)  # the default limit: 600 pixels are fine

    if where == "ini":
        pytester.makeini("[pytest]\nocr_max_image_pixels = 599\n")
        result = pytester.runpytest(*common)
    else:
        result = pytester.runpytest(*common, "--ocr-max-image-pixels=599")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([
        "*doc_001.png' of document 'doc_001.png' * is 30 × 20 pixels (600), more than the 599 allowed (set by "
        "--ocr-max-image-pixels, or --max-image-pixels of ocrmetrics evaluate): decoding it would take about "
        "2.4 kB of memory; scale the image down or raise the limit"])
    assert _outcomes(pytester) == {"doc_001.png": "error", "doc_002.png": "passed", "doc_003.png": "passed"}


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
@pytest.mark.parametrize("where", ["option", "ini"])
def test_the_output_length_bound_is_a_setting(pytester: pytest.Pytester, xdist: list[str], where: str) -> None:
    if xdist:
        pytest.importorskip("xdist")
    make_dataset(pytester.path)
    pytester.makeconftest(LONG_OUTPUT_ENGINE)
    common = ["--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-no-cache", "--ocr-json=run.json", *xdist]
    default = pytester.runpytest(*common)  # 100 characters are scored under the default bound
    default.assert_outcomes(passed=3)  # no threshold given: every scored document passes

    if where == "ini":
        pytester.makeini("[pytest]\nocr_max_output_chars = 50\n")
        result = pytester.runpytest(*common)
    else:
        result = pytester.runpytest(*common, "--ocr-max-output-chars=50")
    # doc_001's reference is 28 characters, so its 28-character output is within max(50, 2 × 28); doc_002's is not
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([
        "*the output is 100 characters, more than the 50 scored (set by --ocr-max-output-chars, or "
        "--max-output-chars of ocrmetrics; twice the reference when that is longer)*(document 'doc_002.png')*"])
    assert "Traceback" not in result.stdout.str()
    assert _outcomes(pytester) == {"doc_001.png": "passed", "doc_002.png": "error", "doc_003.png": "passed"}


@pytest.mark.parametrize(("args", "ini", "message"), [
    (["--ocr-max-image-pixels=0"], "", "--ocr-max-image-pixels=0 would turn the limit off, which is not possible: "
                                       "one input could exhaust memory; give a (large) whole number of pixels instead"),
    (["--ocr-max-output-chars=lots"], "", "--ocr-max-output-chars=lots is not a limit; give a whole number of "
                                          "characters from 1 to 1,000,000,000,000,000"),
    (["--ocr-max-image-pixels=-5"], "", "--ocr-max-image-pixels=-5 is not a limit; give a whole number of pixels "
                                        "from 1 to 1,000,000,000,000,000"),
    ([], "ocr_max_output_chars = none", "--ocr-max-output-chars=none would turn the limit off, which is not "
                                        "possible: one input could exhaust memory; give a (large) whole number of "
                                        "characters instead"),
    (["--ocr-max-image-pixels=²"], "", "--ocr-max-image-pixels=² is not a limit; give a whole number of pixels from "
                                      "1 to 1,000,000,000,000,000"),
])
def test_a_bad_limit_is_one_usage_error(pytester: pytest.Pytester, args: list[str], ini: str, message: str) -> None:
    make_dataset(pytester.path)
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *args)
    assert usage_error_line(result) == message


def test_limits_accept_digit_separators(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds",
                                "--ocr-max-image-pixels=89_478_485", "--ocr-max-output-chars=2,000,000")
    result.assert_outcomes(passed=3)
