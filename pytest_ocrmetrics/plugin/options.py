"""Command-line options and their ini twins, and the plugin's markers: what every pytest run registers.

Every ``--ocr-*`` option has an ini key with the same name in snake case (``--ocr-engine`` / ``ocr_engines``); the
command line wins over the ini file. The values are read and validated by
:meth:`~pytest_ocrmetrics.plugin.settings.OcrSettings.from_config` when the run uses OCR (at startup when an option
is given, so a typo is one clear usage error instead of a failure in the middle of a run).
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["COLUMN_STATISTICS", "DOCUMENT_REGRESSION_MODES", "FIELD_COMPARE_MODES", "JUNIT_PROPERTY_MODES", "MARKERS",
           "PROGRESS_MODES", "SUMMARY_MODES", "add_options", "ocr_options_given", "register_markers"]

# Every pytest run imports this module (to register the options): it imports nothing of the OCR code, and defines no
# dataclass (making one costs more than the rest of the module); the settings are read by plugin.settings.

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
             "faster). They are computed only when read: the run file, the HTML report or a gate on ci_low/ci_high.")),
    ("--ocr-junit-properties", "ocr_junit_properties", "string", dict(metavar="WHICH",
        help="Metrics each JUnit testcase carries: default (cer, wer, field_f1, the checked, gated and --ocr-metric "
             "ones) or all.")),
    # output cache and concurrency
    ("--ocr-no-cache", "ocr_no_cache", "bool", dict(action="store_true",
        help="Do not read or write the engine output cache (nor the math facts' equation layouts and MathML kept "
             "next to it).")),
    ("--ocr-cache-dir", "ocr_cache_dir", "string", dict(metavar="PATH",
        help="Directory of the engine output cache, which also keeps the math facts' equation layouts and MathML in "
             "math-layout/ and math-mathml/ (default: inside pytest's cache directory).")),
    ("--ocr-refresh-cache", "ocr_refresh_cache", "bool", dict(action="store_true",
        help="Run the engines again and overwrite their cached outputs (and lay the math facts' equations out "
             "again).")),
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
    ("--ocr-baseline-engine", "ocr_baseline_engines", "linelist", dict(action="append", metavar="OLD=NEW",
        help="Compare this run's engine NEW with the baseline's engine OLD, documents paired by dataset and id "
             "(repeatable; e.g. tesseract=rapidocr when a release switches engines); engines not paired are not "
             "compared.")),
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
        help="Recognise each document N times (default 1, at most 100) with live engines, which vary at temperature "
             "> 0; a fact passes when a strict majority of the N outputs pass it, disagreeing repeats are reported as "
             "flaky. Text metrics use the first output.")),
    ("--ocr-pdf-longest-side", "ocr_pdf_longest_side", "string", dict(metavar="PX",
        help="Longest side in pixels of a PDF page rendered for live engines (16 to 20000, default 1288, what "
             "olmOCR's pipeline renders).")),
    # resource limits (docs/reference/limits.md)
    ("--ocr-max-image-pixels", "ocr_max_image_pixels", "string", dict(metavar="N",
        help="Most pixels (width x height) a document's image may have, for every engine (default 89478485, "
             "Pillow's limit, about 9,500 x 9,500); checked from the image's header before anything decodes it, a "
             "larger image errors its own document. A whole number from 1; there is no 'off' (a small file can "
             "declare gigabytes of pixels).")),
    ("--ocr-max-output-chars", "ocr_max_output_chars", "string", dict(metavar="N",
        help="Longest engine output scored, in characters (default 2000000), or twice the reference when that is "
             "longer; a longer output errors its own document (aligning it takes about 160 bytes per character). A "
             "whole number from 1; there is no 'off'.")),
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
    """Register every ``--ocr-*`` option and its ini twin (``pytest_addoption``).

    Args:
        parser: pytest's parser of the command line and the ini file.
    """
    group = parser.getgroup("ocrmetrics", "OCR quality (pytest-ocrmetrics)")
    for option, dest, ini_type, kwargs in _OPTIONS:
        group.addoption(option, dest=dest, default=None, **kwargs)
        default: Any = [] if ini_type == "linelist" else (False if ini_type == "bool" else None)
        parser.addini(dest, type=ini_type, default=default,  # type: ignore[arg-type]
                      help=f"Default for {option}: {kwargs['help']}")


MARKERS = (
    "ocr_dataset(*paths, name=None): run this test once per document of the datasets (paths relative to the test file)",
    "ocr_thresholds(**limits): per-test limits, e.g. ocr_thresholds(cer=0.05, field_f1=0.9)",
)


def register_markers(config: pytest.Config) -> None:
    """Register the plugin's markers (every run: ``--strict-markers`` must know them, OCR or not)."""
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def ocr_options_given(config: pytest.Config) -> bool:
    """Whether any ``--ocr-*`` option or its ini key holds a value other than its unset default: then the run uses
    OCR from the start (its settings are read and checked at configure time, a typo fails before any test)."""
    for _, dest, _, _ in _OPTIONS:
        if config.getoption(dest) not in (None, [], False) or config.getini(dest) not in (None, [], False):
            return True
    return False
