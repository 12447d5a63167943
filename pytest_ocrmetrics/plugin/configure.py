"""Setting up the run when pytest configures: settings, engines, gates and baseline checked at once (a typo fails
before any test), the run's :class:`~pytest_ocrmetrics.plugin.state.PluginState`, the hook classes it needs, and the
engine output cache at session start."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Iterable

import pytest

from pytest_ocrmetrics.engines.base import EngineOptionError
from pytest_ocrmetrics.engines.registry import default_registry
from pytest_ocrmetrics.metrics.registry import METRIC_DEFINITIONS
from pytest_ocrmetrics.options import OcrSettings
from pytest_ocrmetrics.plugin.items import _no_engine_hint, cli_datasets
from pytest_ocrmetrics.plugin.scheduling import _ShardHooks, _unfreeze_gc, _XdistHooks
from pytest_ocrmetrics.plugin.session import _SessionHooks
from pytest_ocrmetrics.plugin.state import STATE, PluginState
from pytest_ocrmetrics.results import RunResults
from pytest_ocrmetrics.runner import OcrRunner
from pytest_ocrmetrics.scoring import with_metrics


def configure_run(config: pytest.Config) -> None:
    """Register the markers, check the settings (engines, gates, baseline: a typo fails before any test), make the
    run's state and register the hook classes it needs."""
    config.addinivalue_line("markers", "ocr_dataset(*paths, name=None): run this test once per document of the datasets (paths relative to the test file)")
    config.addinivalue_line("markers", "ocr_thresholds(**limits): per-test limits, e.g. ocr_thresholds(cer=0.05, field_f1=0.9)")
    settings = OcrSettings.from_config(config)
    registry = default_registry()
    config.hook.pytest_ocrmetrics_register_engines(registry=registry)
    try:
        runner = OcrRunner(settings, registry)
        runner.validate()
    except (EngineOptionError, KeyError, ValueError) as exc:
        raise pytest.UsageError(str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)) from None
    results = RunResults(
        normalization=_normalization(settings),
        seed=settings.seed,
        engine_order=tuple(choice.label for choice in runner.engines),
    )
    datasets_only = _datasets_only(config, settings)
    if datasets_only and not runner.engines:
        raise pytest.UsageError(f"--ocr-dataset needs an engine: {_no_engine_hint(runner)}")
    gates, tolerances, baseline = _gating_settings(settings)
    # a metric computed only on request (crr, word_f1, ...) is requested by a threshold, gate or tolerance naming it:
    # a threshold on a metric nobody computed would pass having checked nothing
    runner.scoring = with_metrics(runner.scoring, [*settings.command_line_thresholds(),
                                                   *(gate.metric for gate in gates), *tolerances])
    config.stash[STATE] = PluginState(settings, runner, results, is_worker=hasattr(config, "workerinput"),
                                      gates=gates, tolerances=tolerances, baseline=baseline,
                                      datasets_only=datasets_only,
                                      junit_metrics=_junit_metrics(settings, gates, tolerances),
                                      record_confusions=bool(settings.json_path or settings.html_path
                                                             or settings.summary == "full"))
    if not config.stash[STATE].is_worker:  # the controller refuses; workers were started with the same paths
        conflict = report_input_conflict(report_paths(config, settings), _run_inputs(config.stash[STATE]))
        if conflict is not None:
            raise pytest.UsageError(conflict)
    config.pluginmanager.register(_SessionHooks(config.stash[STATE]), "ocrmetrics-session")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(config.stash[STATE]), "ocrmetrics-xdist")
    if settings.shard is not None:
        config.pluginmanager.register(_ShardHooks(config.stash[STATE]), "ocrmetrics-shard")
    # registered before pytest's own cleanups (this configure hook runs before the built-in plugins'), so it runs
    # after them: pytest's closing gc.collect() passes do not walk the frozen collected items again
    config.add_cleanup(functools.partial(_unfreeze_gc, config.stash[STATE]))


def _datasets_only(config: pytest.Config, settings: OcrSettings) -> bool:
    """``pytest --ocr-dataset=DIR`` with no test paths runs just the dataset's documents, not the project's tests;
    ``pytest tests --ocr-dataset=DIR`` runs both (and fixture tests without a marker score DIR).

    Decided on the controller (workers see the controller's arguments, not how they were chosen).
    """
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return bool(workerinput.get("ocrmetrics_datasets_only", False))
    given_on_command_line = bool(config.getoption("ocr_datasets"))  # not the ini key: suites built on it keep working
    return given_on_command_line and config.args_source != pytest.Config.ArgsSource.ARGS


JUNIT_DEFAULT_METRICS = frozenset({"cer", "wer", "field_f1"})


def _junit_metrics(settings: OcrSettings, gates: tuple[Any, ...], tolerances: dict[str, Any]) -> frozenset[str] | None:
    """The metrics a JUnit testcase carries with ``--ocr-junit-properties=default``: CER, WER and field F1, those with
    a threshold, a gate or a regression tolerance, and the ``--ocr-metric`` extras (a test adds what it checked);
    None (every computed metric) with ``all``. A dozen properties per testcase cost pytest about a tenth of a
    millisecond each to carry and write."""
    if settings.junit_properties == "all":
        return None
    return JUNIT_DEFAULT_METRICS | set(settings.command_line_thresholds()) | {gate.metric for gate in gates} \
        | set(tolerances) | set(settings.extra_metrics)


def _normalization(settings: OcrSettings) -> dict[str, Any]:
    """The run file's ``normalization``: every setting a baseline must share for its numbers to be comparable."""
    return {"name": settings.normalize, "unit": settings.unit, "tokenizer": settings.tokenizer,
            "field_compare": settings.field_compare, "definitions": METRIC_DEFINITIONS,
            "word_match": {"distance": settings.word_distance, "case_sensitive": settings.word_case_sensitive,
                           "ignore_punctuation": settings.word_ignore_punctuation}}


def _gating_settings(settings: OcrSettings) -> tuple[tuple[Any, ...], dict[str, Any], Any]:
    """Parse gates and tolerances and load the baseline at startup, so a typo, a bad file or a baseline made with
    other normalization settings (unless ``--ocr-baseline-allow-mismatch``) fails at once. A run with none of
    them imports nothing of the gating package."""
    _check_baseline_update(settings)
    if not (settings.gates or settings.max_regressions or settings.significance is not None
            or settings.baseline is not None):
        return (), {}, None
    from pytest_ocrmetrics.gating import Baseline, RunFileError, parse_gate, parse_significance, resolve_tolerances

    try:
        gates = tuple(parse_gate(expr) for expr in settings.gates)
    except ValueError as exc:
        raise pytest.UsageError(f"--ocr-gate: {exc}") from None
    try:
        tolerances = resolve_tolerances(settings.max_regressions)
    except ValueError as exc:
        raise pytest.UsageError(f"--ocr-max-regression: {exc}") from None
    if settings.significance is not None:
        try:
            parse_significance(settings.significance)
        except ValueError as exc:
            raise pytest.UsageError(f"--ocr-significance: {exc}") from None
    baseline = None
    if settings.baseline is not None and settings.baseline_update and not settings.baseline.exists():
        pass  # the first run: nothing to compare with; the session end creates the file
    elif settings.baseline is not None:
        try:
            # NaN or infinity inside is refused, naming the document; the full schema with --ocr-validate-baseline
            baseline = Baseline.load(settings.baseline, schema=settings.validate_baseline)
        except RunFileError as exc:
            first_run = "" if settings.baseline.exists() else (
                "; for the first run, pass --ocr-baseline-update to create it from this run")
            raise pytest.UsageError(f"--ocr-baseline: {exc}{first_run}") from None
        current = _normalization(settings)
        mismatch = baseline.normalization_mismatch(current, name=f"--ocr-baseline {str(settings.baseline)!r}",
                                                   override="--ocr-baseline-allow-mismatch")
        if mismatch is not None and not settings.baseline_allow_mismatch:
            raise pytest.UsageError(mismatch)
    return gates, tolerances, baseline


def _check_baseline_update(settings: OcrSettings) -> None:
    """Refuse, at startup, what would make ``--ocr-baseline-update`` write a wrong baseline or none, and a report
    path that would silently replace the baseline (``--ocr-json`` onto it without the update flag)."""
    same_file = (settings.json_path is not None and settings.baseline is not None
                 and os.path.abspath(settings.json_path) == os.path.abspath(settings.baseline))
    if same_file and not settings.baseline_update:
        raise pytest.UsageError(f"--ocr-json={settings.json_path} is the --ocr-baseline file: writing the run there "
                                f"would replace the baseline it is compared with; pass --ocr-baseline-update to "
                                f"replace it on purpose, or write the run file elsewhere")
    if not settings.baseline_update:
        return
    if settings.baseline is None:
        raise pytest.UsageError("--ocr-baseline-update needs --ocr-baseline=PATH: the file to compare with and then "
                                "replace (created when it does not exist yet)")
    if settings.shard is not None:
        raise pytest.UsageError(f"--ocr-baseline-update with --ocr-shard={settings.shard} would replace the baseline "
                                f"with one shard's documents; write each shard's run file (--ocr-json), merge them "
                                f"with ocrmetrics merge and use the merged file as the baseline")
    if settings.baseline.is_dir():
        raise pytest.UsageError(f"--ocr-baseline={settings.baseline} is a folder; give the run file to compare with "
                                f"and replace")


def report_paths(config: pytest.Config, settings: OcrSettings) -> list[tuple[str, str]]:
    """Every file this run writes as a report, as ``(option, path)``: the OCR reports and pytest's JUnit XML."""
    paths = [("--ocr-json", settings.json_path), ("--ocr-html", settings.html_path), ("--ocr-csv", settings.csv_path),
             ("--ocr-markdown", settings.markdown_path), ("--junitxml", getattr(config.option, "xmlpath", None))]
    return [(option, os.fspath(path)) for option, path in paths if path]


def _run_inputs(state: PluginState) -> list[tuple[Path, str, frozenset[str]]]:
    """What this run reads and no report may replace, as ``(path, what it is, report options allowed onto it)``:
    the ``--ocr-dataset`` / ``ocr_datasets`` datasets (a folder: everything inside it, its ground truth, images and
    sidecars; a file: that file), the ``--ocr-baseline`` file (the run file may replace it with
    ``--ocr-baseline-update``) and a replay engine's folder of predictions. The datasets of ``ocr_dataset`` markers
    are checked when they are collected (:func:`report_input_conflict` from the collection)."""
    settings = state.settings
    inputs = [(path, "the dataset folder" if path.is_dir() else "the dataset file", frozenset())
              for path, _ in cli_datasets(state)]
    if settings.baseline is not None:
        inputs.append((settings.baseline, "the --ocr-baseline file",
                       frozenset({"--ocr-json"} if settings.baseline_update else ())))
    for choice in state.runner.engines:
        if choice.name == "replay":
            folder = choice.arg or state.runner.engine_options.get("replay", {}).get("dir")
            if folder:
                inputs.append((Path(folder), "the replay engine's folder of predictions", frozenset()))
    return inputs


def report_input_conflict(reports: Iterable[tuple[str, str]],
                          inputs: Iterable[tuple[Path, str, frozenset[str]]]) -> str | None:
    """The sentence refusing the first report path that is an input of the run (or lies inside an input folder,
    through symbolic links too: a report is written through a link), or that two reports share; None when every
    report path is free. Writing there would destroy what the run reads (a dataset's ``ground_truth.json``, an
    image) or what a later run compares with (the baseline)."""
    reports = list(reports)
    inputs = list(inputs)
    seen: dict[str, str] = {}
    for option, path in reports:
        real = os.path.realpath(path)
        if real in seen:
            return (f"{option}={path} is also the {seen[real]} path: two reports cannot share a file; give each its "
                    f"own path")
        seen[real] = option
        for source, what, allowed in inputs:
            if option in allowed:
                continue
            folder = os.path.realpath(source)
            if real == folder:
                return (f"{option}={path} is {what} {source}: writing the report there would destroy an input of "
                        f"this run; write it elsewhere")
            if os.path.isdir(folder) and _inside(real, folder):
                return (f"{option}={path} lies inside {what} {source}: writing the report there would destroy an "
                        f"input of this run (its ground truth, an image, a sidecar); write it outside that folder")
    return None


def _inside(path: str, folder: str) -> bool:
    """Whether the resolved ``path`` lies inside the resolved ``folder`` (False across Windows drives)."""
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:
        return False


def _output_cache(config: pytest.Config, settings: OcrSettings) -> Any:
    """The engine output cache: --ocr-cache-dir, else inside pytest's cache directory; None with --ocr-no-cache."""
    if not settings.cache:
        return None
    from pytest_ocrmetrics.cache import OutputCache

    directory = settings.cache_dir
    if directory is None:
        cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
        if cache is None:
            return None
        directory = cache.mkdir("ocrmetrics") / "outputs"
    return OutputCache(directory, refresh=settings.refresh_cache)


def use_result_cache(cache: Any, settings: OcrSettings) -> None:
    """Keep results of metric code that are costly and never change (the math facts' equation layouts: a browser)
    next to the engine outputs, so a second run recomputes none; in memory only without an output cache
    (``--ocr-no-cache``, no cache provider). Imports nothing heavy: the metric code looks the folder up when used."""
    from pytest_ocrmetrics.metrics.result_cache import use_folder

    use_folder(None if cache is None else cache.directory, refresh=settings.refresh_cache)
