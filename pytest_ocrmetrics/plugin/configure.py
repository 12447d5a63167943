"""Starting the OCR run: settings, engines, gates and baseline checked at once (a typo fails before any test), the
run's :class:`~pytest_ocrmetrics.plugin.state.PluginState`, the hook classes it needs and the engine output cache.

A pytest run starts it when pytest configures if an ``--ocr-*`` option or ini key is given, else when a test function
first asks for an OCR fixture (:func:`started_run`); a run that uses no OCR feature never imports this module."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Iterable

import pytest

from pytest_ocrmetrics.engines.base import EngineOptionError
from pytest_ocrmetrics.engines.registry import default_registry
from pytest_ocrmetrics.metrics.registry import METRIC_DEFINITIONS
from pytest_ocrmetrics.plugin.items import cli_datasets, no_engine_hint
from pytest_ocrmetrics.plugin.keys import STATE
from pytest_ocrmetrics.plugin.progress import register_progress
from pytest_ocrmetrics.plugin.scheduling import ShardHooks, XdistHooks, unfreeze_gc
from pytest_ocrmetrics.plugin.session import SessionHooks
from pytest_ocrmetrics.plugin.settings import OcrSettings
from pytest_ocrmetrics.plugin.state import CollectionState, PluginState, RunConfig, RunOutcome
from pytest_ocrmetrics.runfile.results import RunResults
from pytest_ocrmetrics.scoring.document import ScoringOptions, with_metrics
from pytest_ocrmetrics.scoring.runner import OcrRunner, RunnerSettings


def start_run(config: pytest.Config) -> PluginState:
    """Make the run's state and register the hook classes it needs: check the settings (engines, gates, baseline: a
    typo fails before any test), create the runner and the results.

    Called by ``pytest_configure`` when an ``--ocr-*`` option or ini key is given, else by :func:`started_run` when
    the run first uses OCR (a test function asks for an OCR fixture); a run that never does never imports this.

    Args:
        config: the pytest config of this run (or xdist worker).

    Returns:
        The state, kept in ``config.stash[STATE]``.
    """
    settings = OcrSettings.from_config(config)
    registry = default_registry()
    config.hook.pytest_ocrmetrics_register_engines(registry=registry)
    gates, tolerances, baseline = _gating_settings(settings)
    # a metric computed only on request (crr, word_f1, ...) is requested by a threshold, gate or tolerance naming it:
    # a threshold on a metric nobody computed would pass having checked nothing
    scoring = with_metrics(scoring_options(settings), [*settings.command_line_thresholds(),
                                                        *(gate.metric for gate in gates), *tolerances])
    try:
        runner = OcrRunner(runner_settings(settings), registry, scoring=scoring,
                           cache=_output_cache(config, settings) if settings.engines else None)
        runner.validate()
    except (EngineOptionError, KeyError, ValueError) as exc:
        raise pytest.UsageError(str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)) from None
    baseline = _paired_baseline(settings, baseline, [choice.label for choice in runner.engines])
    results = RunResults(
        normalization=_normalization(settings),
        seed=settings.seed,
        engine_order=tuple(choice.label for choice in runner.engines),
    )
    use_result_cache(runner.cache, settings)  # the math facts' equation layouts, next to the engine outputs
    datasets_only = _datasets_only(config, settings)
    if datasets_only and not runner.engines:
        raise pytest.UsageError(f"--ocr-dataset needs an engine: {no_engine_hint(runner)}")
    run_config = RunConfig(settings, runner, is_worker=hasattr(config, "workerinput"), gates=gates,
                           tolerances=tolerances, baseline=baseline, datasets_only=datasets_only,
                           junit_metrics=_junit_metrics(settings, gates, tolerances),
                           record_confusions=bool(settings.json_path or settings.html_path
                                                  or settings.summary == "full"))
    state = config.stash[STATE] = PluginState(run_config, CollectionState(), RunOutcome(results))
    if not run_config.is_worker:  # the controller refuses; workers were started with the same paths
        conflict = report_input_conflict(report_paths(config, settings), _run_inputs(state))
        if conflict is not None:
            raise pytest.UsageError(conflict)
    _register_hooks(config, state)
    return state


def started_run(config: pytest.Config) -> PluginState:
    """The run's state, started now if configure did not (no ``--ocr-*`` option or ini key given): the run uses
    OCR from the first test function that asks for an OCR fixture. With no option given nothing can be refused and
    no engine is selected, so starting here changes nothing a run shows but when the OCR modules are imported.

    Args:
        config: the pytest config.

    Returns:
        The run's state.
    """
    state = config.stash.get(STATE, None)
    return state if state is not None else start_run(config)


def _register_hooks(config: pytest.Config, state: PluginState) -> None:
    """The hook classes of an OCR run: results from reports, xdist (when loaded), shards, progress lines, and the
    cleanup that undoes the collector's freeze."""
    settings = state.run_config.settings
    config.pluginmanager.register(SessionHooks(state), "ocrmetrics-session")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(state), "ocrmetrics-xdist")
    if settings.shard is not None:
        config.pluginmanager.register(ShardHooks(state), "ocrmetrics-shard")
    # registered before pytest's own cleanups (this configure hook runs before the built-in plugins'), so it runs
    # after them: pytest's closing gc.collect() passes do not walk the frozen collected items again
    config.add_cleanup(functools.partial(unfreeze_gc, state))
    engine_names = {choice.label: choice.name for choice in state.run_config.runner.engines}
    register_progress(config, settings.progress, engine_names)


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


JUNIT_DEFAULT_METRICS = frozenset({"cer", "wer", "field_f1", "text_block_edit", "reading_order_edit", "table_edit",
                                   "table_teds", "table_teds_s", "formula_edit"})
"""CER, WER, field F1 and OmniDocBench's page metrics (only pages of an OmniDocBench dataset have them)."""


def _junit_metrics(settings: OcrSettings, gates: tuple[Any, ...], tolerances: dict[str, Any]) -> frozenset[str] | None:
    """The metrics a JUnit testcase carries with ``--ocr-junit-properties=default``: :data:`JUNIT_DEFAULT_METRICS`, those with
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


def _paired_baseline(settings: OcrSettings, baseline: Any, engines: list[str]) -> Any:
    """The baseline with its engines paired with this run's (``--ocr-baseline-engine OLD=NEW``), checked at startup:
    OLD an engine of the baseline, NEW one of ``--ocr-engine``'s, each of this run's engines paired once (a typo is a
    usage error with a did-you-mean). Without a baseline file yet (the first run of ``--ocr-baseline-update``) only
    NEW is checked: nothing is compared."""
    if not settings.baseline_engines:
        return baseline
    if settings.baseline is None:
        raise pytest.UsageError("--ocr-baseline-engine needs --ocr-baseline=PATH: the run file whose engine OLD this "
                                "run's engine NEW is compared with")
    from pytest_ocrmetrics.gating.comparison import parse_engine_pairs

    name = f"the baseline {str(settings.baseline)!r}"
    # without a baseline file yet, any OLD is taken (nothing is compared) and this run's names are still checked
    olds = baseline.engines if baseline is not None else [text.partition("=")[0] for text in settings.baseline_engines]
    try:
        pairs = parse_engine_pairs(settings.baseline_engines, olds, engines, baseline_name=name,
                                   run_name="this run (--ocr-engine)", option="--ocr-baseline-engine")
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return None if baseline is None else baseline.with_engines(pairs)


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
    settings = state.run_config.settings
    inputs: list[tuple[Path, str, frozenset[str]]] = [
        (path, "the dataset folder" if path.is_dir() else "the dataset file", frozenset())
        for path, _ in cli_datasets(state)]
    if settings.baseline is not None:
        inputs.append((settings.baseline, "the --ocr-baseline file",
                       frozenset({"--ocr-json"} if settings.baseline_update else ())))
    runner = state.run_config.runner
    for choice in runner.engines:
        if choice.name == "replay":
            folder = choice.arg or runner.engine_options.get("replay", {}).get("dir")
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


def runner_settings(settings: OcrSettings) -> RunnerSettings:
    """The runner's part of the ``--ocr-*`` settings."""
    return RunnerSettings(engines=settings.engines, engine_options=settings.engine_options, limit=settings.limit,
                          pdf_longest_side=settings.pdf_longest_side, repeats=settings.repeats,
                          concurrency=settings.concurrency, max_image_pixels=settings.max_image_pixels)


def scoring_options(settings: OcrSettings) -> ScoringOptions:
    """How documents are scored, from the ``--ocr-*`` settings."""
    return ScoringOptions(normalize=settings.normalize, unit=settings.unit, tokenizer=settings.tokenizer,
                          extra_metrics=settings.extra_metrics, field_compare=settings.field_compare,
                          word_distance=settings.word_distance, word_case_sensitive=settings.word_case_sensitive,
                          word_ignore_punctuation=settings.word_ignore_punctuation,
                          max_output_chars=settings.max_output_chars)


def _output_cache(config: pytest.Config, settings: OcrSettings) -> Any:
    """The engine output cache: --ocr-cache-dir, else inside pytest's cache directory; None with --ocr-no-cache."""
    if not settings.cache:
        return None
    from pytest_ocrmetrics.engines.cache import OutputCache

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
