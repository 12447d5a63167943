"""Command-line options and their ini twins, parsed once into :class:`OcrSettings`.

Every ``--ocr-*`` option has an ini key with the same name in snake case (``--ocr-engine`` / ``ocr_engines``); the
command line wins over the ini file. Values are validated here, at startup, so a typo is one clear usage error
instead of a failure in the middle of a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pytest

from pytest_ocrmetrics.metrics.normalize import get_profile
from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message
from pytest_ocrmetrics.metrics.units import TOKENIZERS, UNITS
from pytest_ocrmetrics.sharding import Shard, parse_shard

__all__ = ["add_options", "OcrSettings", "parse_threshold_items", "SUMMARY_MODES", "FIELD_COMPARE_MODES",
           "parse_columns"]

SUMMARY_MODES = ("none", "short", "full")
FIELD_COMPARE_MODES = ("lowercase", "exact", "normalized", "fuzzy")
JUNIT_PROPERTY_MODES = ("default", "all")
DOCUMENT_REGRESSION_MODES = ("warn", "fail", "off")  # gating.DOCUMENT_REGRESSION_POLICIES, without its import
COLUMN_STATISTICS = ("micro", "mean", "median", "p90", "p95", "min", "max")
PROGRESS_MODES = ("auto", "on", "off")

# (option, ini name, ini type, kwargs for addoption). The ini name is the "dest"; list options append.
_OPTIONS: tuple[tuple[str, str, str | None, dict[str, Any]], ...] = (
    ("--ocr-engine", "ocr_engines", "linelist", dict(action="append", metavar="NAME[:ARG]",
        help="OCR engine to score (repeatable: documents are scored by each engine side by side), e.g. tesseract, "
             "rapidocr, replay:DIR.")),
    ("--ocr-engine-option", "ocr_engine_options", "linelist", dict(action="append", metavar="ENGINE.KEY=VALUE",
        help="Engine setting (repeatable), e.g. tesseract.lang=deu, tesseract.psm=6.")),
    ("--ocr-dataset", "ocr_datasets", "linelist", dict(action="append", metavar="[NAME=]PATH",
        help="Dataset to collect one test per document from (repeatable). Without Python test files, each document "
             "becomes a test item checking --ocr-max/--ocr-min. Named by its path relative to the rootdir, or NAME.")),
    ("--ocr-max", "ocr_max", "linelist", dict(action="append", metavar="METRIC:VALUE",
        help="Fail a document whose METRIC is above VALUE (repeatable), e.g. cer:0.05.")),
    ("--ocr-min", "ocr_min", "linelist", dict(action="append", metavar="METRIC:VALUE",
        help="Fail a document whose METRIC is below VALUE (repeatable), e.g. field_f1:0.9.")),
    ("--ocr-min-confidence", "ocr_min_confidence", "string", dict(metavar="CONF",
        help="Filter out (not fail) documents whose engine confidence (0..1) is below CONF.")),
    ("--ocr-limit", "ocr_limit", "string", dict(metavar="N", help="Use only the first N documents of each dataset.")),
    ("--ocr-summary", "ocr_summary", "string", dict(metavar="MODE",
        help="Terminal summary: none, short (default) or full (adds rows per document tag, worst documents and top "
             "confusions).")),
    ("--ocr-columns", "ocr_columns", "string", dict(metavar="METRIC[:STAT],...",
        help="Metric columns of the terminal summary, comma-separated registry names with an optional statistic "
             "(micro by default, or mean, median, p90, p95, min, max), e.g. cer,exact_match,ned,edit_similarity "
             "(default: cer, cer:mean, cer:p95, wer, field_f1, json_valid, fact_pass_rate; each when computed).")),
    ("--ocr-json", "ocr_json", "string", dict(metavar="PATH", help="Write the JSON run file (schema pytest-ocrmetrics/1).")),
    ("--ocr-normalize", "ocr_normalize", "string", dict(metavar="PROFILE",
        help="Normalization profile applied to reference and output before scoring (default nfc), "
             "e.g. nfc+casefold, lenient, model-output.")),
    ("--ocr-unit", "ocr_unit", "string", dict(metavar="UNIT", help="Character unit: grapheme (default) or codepoint.")),
    ("--ocr-tokenizer", "ocr_tokenizer", "string", dict(metavar="NAME",
        help="Word tokenizer: whitespace (default, like jiwer) or unicode (UAX #29, like dinglehopper).")),
    ("--ocr-metric", "ocr_metrics", "linelist", dict(action="append", metavar="NAME",
        help="Extra metric to compute for every document (repeatable or comma-separated), e.g. crr, lcs_ratio, "
             "token_ratio; shown as a column of the summary.")),
    ("--ocr-field-compare", "ocr_field_compare", "string", dict(metavar="MODE",
        help="How field values are compared for field_f1: lowercase (default, the specification's "
             "str(v).strip().lower()), exact, normalized (dates, amounts) or fuzzy.")),
    ("--ocr-word-distance", "ocr_word_distance", "string", dict(metavar="N",
        help="Word matching (crr, word_f1, the HTML report's word colours): pair words within N character edits "
             "(0 to 5, default 1, the evaluator's threshold; 0: exact words only).")),
    ("--ocr-word-case-sensitive", "ocr_word_case_sensitive", "bool", dict(action="store_true",
        help="Word matching distinguishes case (default: it ignores case, as the evaluator does).")),
    ("--ocr-word-keep-punctuation", "ocr_word_keep_punctuation", "bool", dict(action="store_true",
        help="Word matching keeps punctuation (default: it strips it from each word, as the evaluator does).")),
    ("--ocr-seed", "ocr_seed", "string", dict(metavar="N", help="Seed of the bootstrap intervals (default 0).")),
    ("--ocr-bootstrap", "ocr_bootstrap", "string", dict(metavar="N",
        help="Bootstrap resamples for the summary's confidence intervals (0 to 100000, default 1000; 0: no intervals, "
             "faster).")),
    ("--ocr-junit-properties", "ocr_junit_properties", "string", dict(metavar="WHICH",
        help="Metrics each JUnit testcase carries: default (cer, wer, field_f1, the checked, gated and --ocr-metric "
             "ones) or all.")),
    # output cache and concurrency
    ("--ocr-no-cache", "ocr_no_cache", "bool", dict(action="store_true",
        help="Do not read or write the engine output cache (nor the math facts' equation layouts kept next to it).")),
    ("--ocr-cache-dir", "ocr_cache_dir", "string", dict(metavar="PATH",
        help="Directory of the engine output cache, which also keeps the math facts' equation layouts in math-layout/ (default: inside pytest's cache directory).")),
    ("--ocr-refresh-cache", "ocr_refresh_cache", "bool", dict(action="store_true",
        help="Run the engines again and overwrite their cached outputs (and lay the math facts' equations out again).")),
    ("--ocr-concurrency", "ocr_concurrency", "string", dict(metavar="N",
        help="Documents recognised at once by remote engines (1 to 1024, default 8; prefetched ahead of the tests).")),
    # gates, baselines and reports
    ("--ocr-gate", "ocr_gates", "linelist", dict(action="append", metavar="EXPR",
        help="Suite gate on an aggregate (repeatable), e.g. 'cer<=0.03', 'p95:cer<=0.1', 'field_f1>=0.9'.")),
    ("--ocr-baseline", "ocr_baseline", "string", dict(metavar="PATH",
        help="JSON run file to compare this run with; an aggregate regression beyond --ocr-max-regression fails the "
             "session, documents that got worse are listed (see --ocr-document-regressions).")),
    ("--ocr-baseline-update", "ocr_baseline_update", "bool", dict(action="store_true",
        help="After comparing, write this run to the --ocr-baseline path (atomically); a missing baseline file is "
             "the first run: nothing is compared and the file is created.")),
    ("--ocr-document-regressions", "ocr_document_regressions", "string", dict(metavar="POLICY",
        help="What a document that got worse than the baseline beyond its tolerance does: warn (default: listed in "
             "every report, its test passes, the aggregates decide), fail (its test fails) or off.")),
    ("--ocr-baseline-allow-mismatch", "ocr_baseline_allow_mismatch", "bool", dict(action="store_true",
        help="Compare with a baseline made with another normalization profile, unit or tokenizer (with a warning) "
             "instead of refusing it.")),
    ("--ocr-validate-baseline", "ocr_validate_baseline", "bool", dict(action="store_true",
        help="Check the --ocr-baseline run file against the full JSON schema, element by element (default: the "
             "structure of what the comparison reads, ~10x faster on a big baseline; NaN, infinity and a wrong type "
             "where the comparison looks are refused either way).")),
    ("--ocr-max-regression", "ocr_max_regressions", "linelist", dict(action="append", metavar="METRIC:TOL",
        help="Allowed regression against the baseline (repeatable): absolute (cer:0.005) or relative (field_f1:2%%).")),
    ("--ocr-significance", "ocr_significance", "string", dict(metavar="ALPHA",
        help="Fail an aggregate regression only when the paired bootstrap says it is significant at ALPHA (e.g. 0.05).")),
    ("--ocr-html", "ocr_html", "string", dict(metavar="PATH", help="Write a self-contained HTML report.")),
    ("--ocr-csv", "ocr_csv", "string", dict(metavar="PATH", help="Write one CSV row per document × engine.")),
    ("--ocr-markdown", "ocr_markdown", "string", dict(metavar="PATH",
        help="Write a Markdown summary (append it to $GITHUB_STEP_SUMMARY).")),
    # page-level facts (olmOCR-bench) and PDF pages
    ("--ocr-fact-items", "ocr_fact_items", "bool", dict(action="store_true",
        help="Also make one test item per page-level fact, named DOCUMENT[FACT ID], so -k FACT_ID selects a fact "
             "(datasets given with --ocr-dataset and no Python test).")),
    ("--ocr-repeats", "ocr_repeats", "string", dict(metavar="N",
        help="Recognise each document N times (default 1) with live engines, which vary at temperature > 0; a fact "
             "passes when a strict majority of the N outputs pass it, disagreeing repeats are reported as flaky. "
             "Text metrics use the first output.")),
    ("--ocr-pdf-longest-side", "ocr_pdf_longest_side", "string", dict(metavar="PX",
        help="Longest side in pixels of a PDF page rendered for live engines (default 1288, what olmOCR's "
             "pipeline renders).")),
    # CI matrices
    ("--ocr-shard", "ocr_shard", "string", dict(metavar="K/N",
        help="Run only shard K of N of every dataset's documents (a stable split by dataset and document id), e.g. "
             "1/4 on the first of four CI machines; merge the run files with ocrmetrics merge.")),
    ("--ocr-progress", "ocr_progress", "string", dict(metavar="MODE",
        help="Progress lines (pages done/total, pages per second, ETA) every 10 s while pages are recognised: auto "
             "(default: on a terminal or with -v, once a page is recognised live, not from the cache or replay), on "
             "(always, also in CI logs) or off.")),
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("ocrmetrics", "OCR quality (pytest-ocrmetrics)")
    for option, dest, ini_type, kwargs in _OPTIONS:
        group.addoption(option, dest=dest, default=None, **kwargs)
        default: Any = [] if ini_type == "linelist" else (False if ini_type == "bool" else None)
        parser.addini(dest, type=ini_type, default=default,  # type: ignore[arg-type]
                      help=f"Default for {option}: {kwargs['help']}")


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

    Values are read by :func:`~pytest_ocrmetrics.thresholds.parse_limit`, as gate values are: ``N%`` is a
    percentage, and a plain number above 1 on a fraction metric is refused with the fraction to write
    (``--ocr-max=cer:5 reads as 500 %; write cer:0.05 for 5 % (or cer:500% if you mean it)``).
    """
    from pytest_ocrmetrics.thresholds import LimitError, parse_limit

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
            result[name] = parse_limit(name, value, lambda v: f"{name}:{v}", where=f"{option} {item!r}", typed=typed)
        except LimitError as exc:
            raise pytest.UsageError(str(exc)) from None
    return result


def parse_columns(value: Any) -> tuple[tuple[str, str], ...]:
    """``--ocr-columns`` (or ``ocr_columns``): ``"cer,ned:p95"`` -> ``(("cer", "micro"), ("ned", "p95"))``.

    An unknown metric or statistic is a usage error (with a did-you-mean for a metric); empty: the default columns.
    """
    columns: list[tuple[str, str]] = []
    for item in str(value or "").replace("\n", ",").split(","):
        name, _, stat = (part.strip() for part in item.strip().partition(":"))
        if not name:
            continue
        if name not in METRICS:
            raise pytest.UsageError(f"--ocr-columns {item.strip()!r}: {unknown_metric_message(name)}")
        stat = stat or "micro"
        if stat not in COLUMN_STATISTICS:
            from pytest_ocrmetrics.hints import did_you_mean

            raise pytest.UsageError(f"--ocr-columns {item.strip()!r}: unknown statistic {stat!r}"
                                    f"{did_you_mean(stat, COLUMN_STATISTICS)}; choose one of: "
                                    f"{', '.join(COLUMN_STATISTICS)}, e.g. --ocr-columns={name}:p95")
        if (name, stat) not in columns:
            columns.append((name, stat))
    return tuple(columns)


def _shard(text: str) -> Shard:
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


def _choice(config: pytest.Config, dest: str, option: str, choices: tuple[str, ...], default: str) -> str:
    value = _get(config, dest) or default
    if value not in choices:
        from pytest_ocrmetrics.hints import did_you_mean  # only for the error

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

    @classmethod
    def from_config(cls, config: pytest.Config) -> "OcrSettings":
        invocation = Path(config.invocation_params.dir)
        ini_base = Path(config.inipath).parent if config.inipath else config.rootpath
        cli_datasets = config.getoption("ocr_datasets") or []
        from pytest_ocrmetrics.datasets.loading import rebase_dataset_argument  # PATH or NAME=PATH, as typed

        datasets = [str(d) for d in cli_datasets] if cli_datasets else [
            rebase_dataset_argument(d, ini_base) for d in _list(config, "ocr_datasets")
        ]
        normalize = str(_get(config, "ocr_normalize") or "nfc")
        try:
            normalize = get_profile(normalize).name
        except ValueError as exc:
            raise pytest.UsageError(f"--ocr-normalize: {exc}") from None
        # repeatable, and each value may list several names: --ocr-metric=crr,word_f1
        extra = tuple(dict.fromkeys(name.strip() for value in _list(config, "ocr_metrics")
                                    for name in value.split(",") if name.strip()))
        for name in extra:
            if name not in METRICS:
                raise pytest.UsageError(f"--ocr-metric: {unknown_metric_message(name)}")
        # the command line overrides the ini file metric by metric
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
            unit=_choice(config, "ocr_unit", "--ocr-unit", UNITS, "grapheme"),
            tokenizer=_choice(config, "ocr_tokenizer", "--ocr-tokenizer", TOKENIZERS, "whitespace"),
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
        )

    def command_line_thresholds(self) -> dict[str, float]:
        """Thresholds from the command line or ini, by metric (direction from the registry)."""
        return {**self.max_thresholds, **self.min_thresholds}
