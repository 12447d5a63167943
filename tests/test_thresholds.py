"""Reading a written limit (pytest_ocrmetrics.metrics.thresholds.parse_limit): one rule for every place a limit is written.

Issue 19, item 2: a percent typed as a fraction on an error rate (``cer:5``) passed every document silently; it is
refused with the fraction to write, and an explicit ``%`` says what is meant (``cer:500%``, ``field_f1:90%``).
"""

from __future__ import annotations

import pytest

from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.metrics.thresholds import LimitError, Threshold, format_limit, parse_limit


def _read(metric: str, written: object) -> float:
    return parse_limit(metric, written, lambda v: f"{metric}:{v}", where=f"--ocr-max '{metric}:{written}'",
                       typed=f"--ocr-max={metric}:{written}")


@pytest.mark.parametrize(("metric", "written", "expected"), [
    ("cer", 0.05, 0.05),
    ("cer", "0.05", 0.05),
    ("cer", "5%", 0.05),
    ("cer", " 3 % ", 0.03),
    ("cer", "500%", 5.0),  # CER can exceed 1 (insertions): said explicitly
    ("cer", 1, 1.0),  # exactly 1 is a fraction
    ("cer", "0", 0.0),
    ("field_f1", "90%", 0.9),
    ("field_f1", "100%", 1.0),
    ("field_f1", 1, 1.0),
    ("token_ratio", 3, 3.0),  # a ratio, not a fraction: any non-negative number
    ("token_ratio", "150%", 1.5),
])
def test_a_written_limit_reads_as_a_fraction(metric: str, written: object, expected: float) -> None:
    assert _read(metric, written) == pytest.approx(expected)


def test_a_percent_typo_on_an_error_rate_is_refused_with_the_sentence() -> None:
    with pytest.raises(LimitError) as info:
        _read("cer", "5")
    assert str(info.value) == "--ocr-max=cer:5 reads as 500 %; write cer:0.05 for 5 % (or cer:500% if you mean it)"


@pytest.mark.parametrize("metric", sorted(name for name, spec in METRICS.items()
                                          if spec.unit == "fraction" and spec.lower_is_better))
def test_every_lower_is_better_fraction_refuses_a_plain_number_above_1(metric: str) -> None:
    with pytest.raises(LimitError, match="reads as 1200 %"):
        _read(metric, 12)
    assert _read(metric, "1200%") == 12.0


@pytest.mark.parametrize("metric", sorted(name for name, spec in METRICS.items()
                                          if spec.unit == "fraction" and not spec.lower_is_better))
def test_every_higher_is_better_fraction_refuses_above_100_percent(metric: str) -> None:
    with pytest.raises(LimitError, match=f"{metric} is a fraction between 0 and 1; write {metric}:0.9 for 90 %"):
        _read(metric, 90)
    with pytest.raises(LimitError, match=f"{metric} is at most 100 %, so a limit of 150% fails every document"):
        _read(metric, "150%")


@pytest.mark.parametrize(("written", "fragment"), [
    ("abc", "must be a number such as 0.05 or a percentage such as 5%, got 'abc'"),
    ("%", "must be a number such as 0.05 or a percentage such as 5%, got '%'"),
    ("5%%", "got '5%%'"),
    ("nan", "must be a finite number"),
    (float("inf"), "must be a finite number"),
    (True, "must be a finite number, got True"),
    (None, "must be a finite number, got None"),
    (-0.1, "cer is never negative, so a limit of -0.1 fails every document"),
    ("-5%", "a limit of -5% fails every document"),
])
def test_a_limit_that_is_no_number_is_refused_in_one_sentence(written: object, fragment: str) -> None:
    with pytest.raises(LimitError) as info:
        _read("cer", written)
    assert fragment in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith("--ocr-max 'cer:")


def test_an_unknown_metric_is_refused_with_a_suggestion() -> None:
    with pytest.raises(LimitError, match="unknown metric 'cre' \\(did you mean 'cer'\\?\\)"):
        _read("cre", 0.1)


@pytest.mark.parametrize(("metric", "limit"), [("cer", 0.05), ("cer", 5.0), ("cer", 1.0), ("field_f1", 0.9),
                                                ("token_ratio", 2.5), ("cer", 1.234)])
def test_format_limit_reads_back(metric: str, limit: float) -> None:
    assert parse_limit(metric, format_limit(metric, limit), str, where="x") == pytest.approx(limit)


def test_a_threshold_above_1_is_shown_as_a_percentage() -> None:
    assert str(Threshold("cer", 5.0, "test")) == "cer <= 500% (from the test)"
    assert str(Threshold("cer", 0.05, "test")) == "cer <= 0.05 (from the test)"


def test_the_ocrmetrics_command_refuses_a_percent_typo_in_a_gate(capsys: pytest.CaptureFixture[str]) -> None:
    """``ocrmetrics compare --gate`` reads gates with the plugin's rule: a usage error (2) before any file is read."""
    from pytest_ocrmetrics.cli import main

    assert main(["compare", "missing-old.json", "missing-new.json", "--gate", "cer<=5"]) == 2
    assert ("argument --gate: gate 'cer<=5' reads as 500 %; write cer<=0.05 for 5 % (or cer<=500% if you mean it)"
            in capsys.readouterr().err)
