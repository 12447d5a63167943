"""The ``--ocr-*`` settings of a run, read once from the options and their ini twins into :class:`OcrSettings`.

Values are validated here, when the run starts using OCR (at startup when an option is given), so a typo is one
clear usage error instead of a failure in the middle of a run. The options themselves are declared in
:mod:`~pytest_ocrmetrics.plugin.options`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import pytest

from pytest_ocrmetrics.plugin.options import (
    COLUMN_STATISTICS,
    DOCUMENT_REGRESSION_MODES,
    FIELD_COMPARE_MODES,
    JUNIT_PROPERTY_MODES,
    PROGRESS_MODES,
    SUMMARY_MODES,
)

if TYPE_CHECKING:
    from pytest_ocrmetrics.runfile.sharding import Shard

__all__ = ["OcrSettings", "parse_columns", "parse_threshold_items"]


def _get(config: pytest.Config, dest: str) -> Any:
    value = config.getoption(dest)
    if value is None or value == []:
        value = config.getini(dest)
    return value


def _list(config: pytest.Config, dest: str) -> list[str]:
    value = _get(config, dest) or []
    if isinstance(value, str):
        value = [value]
    return [v.strip() for v in value if v and v.strip()]


def _number(text: str, what: str, kind: type = float) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise pytest.UsageError(f"{what} must be a {'number' if kind is float else 'whole number'}, got {text!r}") from None


def parse_threshold_items(items: list[str], option: str) -> dict[str, float]:
    """Parse ``["cer:0.05", "wer:5%"]`` into ``{"cer": 0.05, "wer": 0.05}``; a bad item is a usage error.

    Values are read by :func:`~pytest_ocrmetrics.metrics.thresholds.parse_limit`, as gate values are: ``N%`` is a
    percentage, and a plain number above 1 on a fraction metric is refused with the fraction to write
    (``--ocr-max=cer:5 reads as 500 %; write cer:0.05 for 5 % (or cer:500% if you mean it)``).
    """
    from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message
    from pytest_ocrmetrics.metrics.thresholds import LimitError, parse_limit

    result: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition(":")
        if not sep:
            name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not value.strip():
            raise pytest.UsageError(f"{option} {item!r}: expected METRIC:VALUE, e.g. {option}=cer:0.05")
        if name not in METRICS:
            raise pytest.UsageError(f"{option} {item!r}: {unknown_metric_message(name)}")
        spelled = option.split()[0]  # "ocr_min (ini)" -> "ocr_min"
        # what was typed, as it reads on the command line or in the ini file
        typed = f"{spelled}={item}" if spelled.startswith("-") else f"{spelled} = {item}"
        try:
            result[name] = parse_limit(name, value, lambda v: f"{name}:{v}",  # noqa: B023 - called in this iteration
                                       where=f"{option} {item!r}", typed=typed)
        except LimitError as exc:
            raise pytest.UsageError(str(exc)) from None
    return result


def parse_columns(value: Any) -> tuple[tuple[str, str], ...]:
    """``--ocr-columns`` (or ``ocr_columns``): ``"cer,ned:p95"`` -> ``(("cer", "micro"), ("ned", "p95"))``.

    An unknown metric or statistic is a usage error (with a did-you-mean for a metric); empty: the default columns.
    """
    from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message

    columns: list[tuple[str, str]] = []
    for item in str(value or "").replace("\n", ",").split(","):
        name, _, stat = (part.strip() for part in item.strip().partition(":"))
        if not name:
            continue
        if name not in METRICS:
            raise pytest.UsageError(f"--ocr-columns {item.strip()!r}: {unknown_metric_message(name)}")
        stat = stat or "micro"
        if stat not in COLUMN_STATISTICS:
            from pytest_ocrmetrics.core.hints import did_you_mean

            raise pytest.UsageError(f"--ocr-columns {item.strip()!r}: unknown statistic {stat!r}"
                                    f"{did_you_mean(stat, COLUMN_STATISTICS)}; choose one of: "
                                    f"{', '.join(COLUMN_STATISTICS)}, e.g. --ocr-columns={name}:p95")
        if (name, stat) not in columns:
            columns.append((name, stat))
    return tuple(columns)


def _shard(text: str) -> Shard:
    from pytest_ocrmetrics.runfile.sharding import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _word_distance(value: Any) -> int:
    """``--ocr-word-distance`` (or ``ocr_word_distance``): a whole number of character edits from 0 to 5 (document
    002's threshold range, as the page and :func:`~pytest_ocrmetrics.metrics.word_match.word_match` enforce it)."""
    if value in (None, ""):
        return 1
    distance = _number(str(value).strip(), "--ocr-word-distance", int)
    from pytest_ocrmetrics.metrics.word_match import MAX_DISTANCE, distance_out_of_range

    if not 0 <= distance <= MAX_DISTANCE:
        raise pytest.UsageError(distance_out_of_range("--ocr-word-distance", distance))
    return int(distance)


def _confidence(text: str) -> float:
    """``--ocr-min-confidence``: an engine confidence, a fraction from 0 to 1 (``80`` is refused: write 0.8)."""
    value = _number(text.strip(), "--ocr-min-confidence")
    if not 0 <= value <= 1:  # NaN fails this too
        hint = f"; write --ocr-min-confidence={value / 100:g} for {value:g} %" if 1 < value <= 100 else ""
        raise pytest.UsageError(f"--ocr-min-confidence={text} is out of range: engine confidences are fractions "
                                f"from 0 to 1{hint}")
    return float(value)


def _at_least(text: str, option: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` given as ``option``, or one usage error saying what is allowed."""
    value = _number(text, option, int)
    if not low <= value <= high:
        raise pytest.UsageError(f"{option}={text} is out of range; give a whole number from {low} to {high}")
    return int(value)


def _datasets(config: pytest.Config, ini_base: Path) -> list[str]:
    """``--ocr-dataset`` values as typed; ini ones rebased on the ini file's folder (PATH or NAME=PATH)."""
    from pytest_ocrmetrics.datasets.loading import rebase_dataset_argument

    cli_datasets = config.getoption("ocr_datasets") or []
    if cli_datasets:
        return [str(d) for d in cli_datasets]
    return [rebase_dataset_argument(d, ini_base) for d in _list(config, "ocr_datasets")]


def _normalize_and_metrics(config: pytest.Config) -> tuple[str, tuple[str, ...]]:
    """The normalization profile's name and the ``--ocr-metric`` extras (repeatable, each value may list several
    names: ``--ocr-metric=crr,word_f1``), each checked."""
    from pytest_ocrmetrics.metrics.normalize import get_profile
    from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message

    normalize = str(_get(config, "ocr_normalize") or "nfc")
    try:
        normalize = get_profile(normalize).name
    except ValueError as exc:
        raise pytest.UsageError(f"--ocr-normalize: {exc}") from None
    extra = tuple(dict.fromkeys(name.strip() for value in _list(config, "ocr_metrics")
                                for name in value.split(",") if name.strip()))
    for name in extra:
        if name not in METRICS:
            raise pytest.UsageError(f"--ocr-metric: {unknown_metric_message(name)}")
    return normalize, extra


def _command_line_thresholds(config: pytest.Config) -> tuple[dict[str, float], dict[str, float]]:
    """``--ocr-max`` and ``--ocr-min`` (the command line overrides the ini file metric by metric), each limit on a
    metric of the right direction."""
    from pytest_ocrmetrics.metrics.registry import METRICS

    max_t = {**parse_threshold_items(list(config.getini("ocr_max")), "ocr_max (ini)"),
             **parse_threshold_items(config.getoption("ocr_max") or [], "--ocr-max")}
    min_t = {**parse_threshold_items(list(config.getini("ocr_min")), "ocr_min (ini)"),
             **parse_threshold_items(config.getoption("ocr_min") or [], "--ocr-min")}
    for name in max_t:
        if not METRICS[name].lower_is_better:
            raise pytest.UsageError(f"--ocr-max={name}:...: {name} is better when higher; use --ocr-min={name}:VALUE")
    for name in min_t:
        if METRICS[name].lower_is_better:
            raise pytest.UsageError(f"--ocr-min={name}:...: {name} is better when lower; use --ocr-max={name}:VALUE")
    return max_t, min_t


def _units() -> tuple[str, ...]:
    from pytest_ocrmetrics.metrics.units import UNITS

    return tuple(UNITS)


def _tokenizers() -> tuple[str, ...]:
    from pytest_ocrmetrics.metrics.units import TOKENIZERS

    return tuple(TOKENIZERS)


def _limit(text: str, option: str, unit: str) -> int:
    """A resource limit option (:func:`~pytest_ocrmetrics.core.limits.parse_resource_limit`), a usage error else."""
    from pytest_ocrmetrics.core.limits import parse_resource_limit

    try:
        return parse_resource_limit(text, option, unit)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _limits(config: pytest.Config) -> dict[str, int]:
    """``--ocr-max-image-pixels`` and ``--ocr-max-output-chars`` (their defaults when not given)."""
    max_pixels = _get(config, "ocr_max_image_pixels")
    max_chars = _get(config, "ocr_max_output_chars")
    return {"max_image_pixels": (89_478_485 if max_pixels in (None, "")
                                 else _limit(str(max_pixels), "--ocr-max-image-pixels", "pixels")),
            "max_output_chars": (2_000_000 if max_chars in (None, "")
                                 else _limit(str(max_chars), "--ocr-max-output-chars", "characters"))}


def _choice(config: pytest.Config, dest: str, option: str, choices: tuple[str, ...], default: str) -> str:
    value = _get(config, dest) or default
    if value not in choices:
        from pytest_ocrmetrics.core.hints import did_you_mean  # only for the error

        raise pytest.UsageError(f"{option}={value!r} is not valid{did_you_mean(str(value), choices)}; "
                                f"choose one of: {', '.join(choices)}")
    return str(value)


@dataclass(frozen=True)
class OcrSettings:
    """Every ``--ocr-*`` setting of this run, validated."""

    engines: tuple[str, ...] = ()
    engine_options: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    datasets_base: Path = Path(".")  # cli datasets are relative to the invocation dir, ini ones to the ini file dir
    max_thresholds: Mapping[str, float] = field(default_factory=dict)
    min_thresholds: Mapping[str, float] = field(default_factory=dict)
    min_confidence: float | None = None
    limit: int | None = None
    summary: str = "short"
    columns: tuple[tuple[str, str], ...] = ()  # (metric, statistic) of the terminal summary; () = the default ones
    json_path: Path | None = None
    normalize: str = "nfc"
    unit: str = "grapheme"
    tokenizer: str = "whitespace"
    extra_metrics: tuple[str, ...] = ()
    field_compare: str = "lowercase"
    word_distance: int = 1
    word_case_sensitive: bool = False
    word_ignore_punctuation: bool = True
    seed: int = 0
    bootstrap: int = 1000
    junit_properties: str = "default"
    cache: bool = True
    cache_dir: Path | None = None
    refresh_cache: bool = False
    concurrency: int = 8
    gates: tuple[str, ...] = ()
    baseline: Path | None = None
    baseline_allow_mismatch: bool = False
    baseline_engines: tuple[str, ...] = ()  # --ocr-baseline-engine OLD=NEW, as typed
    baseline_update: bool = False
    validate_baseline: bool = False
    document_regressions: str = "warn"
    max_regressions: tuple[str, ...] = ()
    significance: float | None = None
    html_path: Path | None = None
    csv_path: Path | None = None
    markdown_path: Path | None = None
    shard: Shard | None = None
    fact_items: bool = False
    repeats: int = 1
    pdf_longest_side: int = 1288
    progress: str = "auto"  # --ocr-progress: auto, on or off
    max_image_pixels: int = 89_478_485  # core.documents.MAX_IMAGE_PIXELS, without its import
    max_output_chars: int = 2_000_000  # scoring.document.MAX_SCORED_CHARACTERS, without its import

    @classmethod
    def from_config(cls, config: pytest.Config) -> OcrSettings:
        invocation = Path(config.invocation_params.dir)
        ini_base = Path(config.inipath).parent if config.inipath else config.rootpath
        datasets = _datasets(config, ini_base)
        normalize, extra = _normalize_and_metrics(config)
        max_t, min_t = _command_line_thresholds(config)
        confidence = _get(config, "ocr_min_confidence")
        limit = _get(config, "ocr_limit")
        json_path = _get(config, "ocr_json")
        seed = _get(config, "ocr_seed")
        bootstrap = _get(config, "ocr_bootstrap")
        concurrency = _get(config, "ocr_concurrency")
        significance = _get(config, "ocr_significance")
        shard = _get(config, "ocr_shard")
        repeats = _get(config, "ocr_repeats")
        longest_side = _get(config, "ocr_pdf_longest_side")

        def path(dest: str) -> Path | None:
            value = _get(config, dest)
            return None if not value else invocation / str(value)
        return cls(
            engines=tuple(_list(config, "ocr_engines")),
            engine_options=tuple(_list(config, "ocr_engine_options")),
            datasets=tuple(datasets),
            datasets_base=invocation,
            max_thresholds=max_t,
            min_thresholds=min_t,
            min_confidence=None if confidence in (None, "") else _confidence(str(confidence)),
            limit=None if limit in (None, "") else _at_least(str(limit), "--ocr-limit", 1, 10**9),
            summary=_choice(config, "ocr_summary", "--ocr-summary", SUMMARY_MODES, "short"),
            columns=parse_columns(_get(config, "ocr_columns")),
            json_path=None if not json_path else invocation / str(json_path),
            normalize=normalize,
            unit=_choice(config, "ocr_unit", "--ocr-unit", _units(), "grapheme"),
            tokenizer=_choice(config, "ocr_tokenizer", "--ocr-tokenizer", _tokenizers(), "whitespace"),
            extra_metrics=extra,
            field_compare=_choice(config, "ocr_field_compare", "--ocr-field-compare", FIELD_COMPARE_MODES, "lowercase"),
            word_distance=_word_distance(_get(config, "ocr_word_distance")),
            word_case_sensitive=bool(config.getoption("ocr_word_case_sensitive")
                                     or config.getini("ocr_word_case_sensitive")),
            word_ignore_punctuation=not (config.getoption("ocr_word_keep_punctuation")
                                         or config.getini("ocr_word_keep_punctuation")),
            seed=0 if seed in (None, "") else _number(str(seed), "--ocr-seed", int),
            bootstrap=1000 if bootstrap in (None, "") else _at_least(str(bootstrap), "--ocr-bootstrap", 0, 100_000),
            junit_properties=_choice(config, "ocr_junit_properties", "--ocr-junit-properties", JUNIT_PROPERTY_MODES,
                                     "default"),
            cache=not (config.getoption("ocr_no_cache") or config.getini("ocr_no_cache")),
            cache_dir=path("ocr_cache_dir"),
            refresh_cache=bool(config.getoption("ocr_refresh_cache") or config.getini("ocr_refresh_cache")),
            concurrency=8 if concurrency in (None, "") else _at_least(str(concurrency), "--ocr-concurrency", 1, 1024),
            gates=tuple(_list(config, "ocr_gates")),
            baseline=path("ocr_baseline"),
            baseline_allow_mismatch=bool(config.getoption("ocr_baseline_allow_mismatch")
                                         or config.getini("ocr_baseline_allow_mismatch")),
            baseline_engines=tuple(_list(config, "ocr_baseline_engines")),
            baseline_update=bool(config.getoption("ocr_baseline_update") or config.getini("ocr_baseline_update")),
            validate_baseline=bool(config.getoption("ocr_validate_baseline")
                                   or config.getini("ocr_validate_baseline")),
            document_regressions=_choice(config, "ocr_document_regressions", "--ocr-document-regressions",
                                         DOCUMENT_REGRESSION_MODES, "warn"),
            max_regressions=tuple(_list(config, "ocr_max_regressions")),
            significance=None if significance in (None, "") else _number(str(significance), "--ocr-significance"),
            html_path=path("ocr_html"),
            csv_path=path("ocr_csv"),
            markdown_path=path("ocr_markdown"),
            shard=None if shard in (None, "") else _shard(str(shard)),
            fact_items=bool(config.getoption("ocr_fact_items") or config.getini("ocr_fact_items")),
            repeats=1 if repeats in (None, "") else _at_least(str(repeats), "--ocr-repeats", 1, 100),
            pdf_longest_side=(1288 if longest_side in (None, "")
                              else _at_least(str(longest_side), "--ocr-pdf-longest-side", 16, 20000)),
            progress=_choice(config, "ocr_progress", "--ocr-progress", PROGRESS_MODES, "auto"),
            **_limits(config),
        )

    def command_line_thresholds(self) -> dict[str, float]:
        """Thresholds from the command line or ini, by metric (direction from the registry)."""
        return {**self.max_thresholds, **self.min_thresholds}
