"""The output cache and the prefetch pool, seen through whole pytest runs."""

from __future__ import annotations

import json

import pytest

from tests.helpers.engines import COUNTING_ENGINE
from tests.helpers.plugin import make_dataset
from tests.helpers.servers import load_fake_server


def _calls(pytester: pytest.Pytester) -> int:
    path = pytester.path / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_second_run_is_served_from_cache(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    make_dataset(pytester.path)
    pytester.makeconftest(COUNTING_ENGINE)
    args = ["--ocr-dataset=invoices", "--ocr-engine=counting", "--junitxml=out.xml", *xdist]
    pytester.runpytest(*args).assert_outcomes(passed=3)
    assert _calls(pytester) == 3
    result = pytester.runpytest(*args, "--ocr-max=cer:0.5")  # only thresholds changed: no inference at all
    result.assert_outcomes(passed=3)
    assert _calls(pytester) == 3
    assert (pytester.path / "out.xml").read_text().count('name="ocr.cached" value="true"') == 3
    result.stdout.fnmatch_lines(["engine*cached*", "counting*invoices*3*"])


def test_identity_change_refresh_and_no_cache_run_the_engine_again(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    pytester.makeconftest(COUNTING_ENGINE)
    base = ["--ocr-dataset=invoices", "--ocr-engine=counting"]
    pytester.runpytest(*base).assert_outcomes(passed=3)
    pytester.runpytest(*base, "--ocr-engine-option=counting.version=2").assert_outcomes(passed=3)
    assert _calls(pytester) == 6  # another identity is another cache key
    pytester.runpytest(*base, "--ocr-refresh-cache").assert_outcomes(passed=3)
    assert _calls(pytester) == 9
    pytester.runpytest(*base, "--ocr-no-cache").assert_outcomes(passed=3)
    assert _calls(pytester) == 12
    pytester.runpytest(*base).assert_outcomes(passed=3)
    assert _calls(pytester) == 12


def test_cache_dir_option(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    pytester.makeconftest(COUNTING_ENGINE)
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=counting", "--ocr-cache-dir=ocrcache").assert_outcomes(passed=3)
    assert any((pytester.path / "ocrcache").rglob("*.json"))


def test_a_run_without_pytests_cache_provider_says_its_outputs_are_not_cached(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    pytester.makeconftest(COUNTING_ENGINE)
    base = ["--ocr-dataset=invoices", "-p", "no:cacheprovider"]
    note = "engine outputs were not cached: pytest's cache provider is off (-p no:cacheprovider)*"
    result = pytester.runpytest(*base, "--ocr-engine=counting")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([note])
    pytester.runpytest(*base, "--ocr-engine=counting").assert_outcomes(passed=3)
    assert _calls(pytester) == 6  # said, and true: recognised again
    for quiet in (["--ocr-engine=counting", "--ocr-cache-dir=ocrcache"], ["--ocr-engine=counting", "--ocr-no-cache"],
                  ["--ocr-engine=replay:preds"]):  # cached elsewhere, asked not to cache, nothing to cache
        result = pytester.runpytest(*base, *quiet)
        result.assert_outcomes(passed=3)
        assert "were not cached" not in result.stdout.str()


def test_remote_engine_requests_run_concurrently_ahead_of_tests(pytester: pytest.Pytester) -> None:
    docs = {f"d{i:02d}.png": {"full_text": "x"} for i in range(12)}
    make_dataset(pytester.path, docs, {})
    for i, name in enumerate(docs):  # distinct image bytes, so the server can tell the pages apart
        (pytester.path / "invoices" / "images" / name).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([i]))
    with load_fake_server().FakeChatServer(latency_s=0.2) as server:
        result = pytester.runpytest(
            "--ocr-dataset=invoices", "--ocr-engine=openai", f"--ocr-engine-option=openai.base_url={server.base_url}",
            "--ocr-engine-option=openai.model=fake-vlm", "--ocr-concurrency=6", "--ocr-no-cache",
        )
        result.assert_outcomes(passed=12)  # no thresholds: what matters here is how the server was asked
        assert len(server.chat_requests) == 12
        assert server.max_in_flight >= 4


def test_truncated_output_is_visible_in_test_and_reports(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path, {"a.png": {"full_text": "hello world"}}, {})
    pytester.makeconftest(
        """
        from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

        class Cut:
            name = "cut"
            def identity(self): return {"engine": "cut"}
            def recognize(self, document): return OcrOutput(text="hello", engine="cut", truncated=True)
            def close(self): pass

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("cut", lambda arg, options: Cut()))
        """
    )
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=cut", "--ocr-json=run.json", "--junitxml=out.xml")
    result.stdout.fnmatch_lines(["*OcrTruncatedWarning*cut off at the token limit*", "*truncated*"])
    run = json.loads((pytester.path / "run.json").read_text())
    assert run["documents"][0]["truncated"] is True
    assert run["summary"][0]["truncated"] == 1
    assert 'name="ocr.truncated" value="true"' in (pytester.path / "out.xml").read_text()
