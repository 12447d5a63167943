"""Page assembly of the HTML report: the header, the sections in order, the detail views and the image store, wrapped
in one self-contained page with its Content-Security-Policy.

A new section is a module of this package with a function returning its ``<section>`` (empty when it has nothing
to show), added to the list in :func:`render_html`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core.safe_text import write_text_atomic
from pytest_ocrmetrics.gating import Comparison
from pytest_ocrmetrics.metrics.word_match import MAX_DISTANCE
from pytest_ocrmetrics.reporting.assets import CSS, JS, csp_hash
from pytest_ocrmetrics.reporting.common import (
    GateLike,
    RunVerdict,
    engine_order,
    gate_results,
    primary_metric,
    run_metrics,
    run_verdict,
    worst_first,
)
from pytest_ocrmetrics.reporting.html.charts import charts_section
from pytest_ocrmetrics.reporting.html.comparison import comparison_section, gates_section
from pytest_ocrmetrics.reporting.html.confusions import confusions_section
from pytest_ocrmetrics.reporting.html.detail import LEGEND, detail_blocks, document_detail
from pytest_ocrmetrics.reporting.html.documents import collection_errors_section, documents_section, skipped_section
from pytest_ocrmetrics.reporting.html.facts import facts_section
from pytest_ocrmetrics.reporting.html.markup import ChangeClasses, change_classes, e
from pytest_ocrmetrics.reporting.html.paired import paired_detail
from pytest_ocrmetrics.reporting.html.summary import summary_section, tags_section
from pytest_ocrmetrics.reporting.html.thumbnails import ImageStore, missing_images_note
from pytest_ocrmetrics.reporting.images import ImageFinder
from pytest_ocrmetrics.runfile.read import doc_key

#: word matching for highlighting when neither the caller nor the run says: the evaluator's defaults
_WORD_OPTIONS_DEFAULT: dict[str, Any] = {"max_distance": 1, "case_sensitive": False, "ignore_punctuation": True}


#: a run file's ``normalization.word_match`` keys -> :func:`highlight_words` options
_WORD_MATCH_KEYS = {"distance": "max_distance", "case_sensitive": "case_sensitive",
                    "ignore_punctuation": "ignore_punctuation"}


def _header(run: Mapping[str, Any], title: str, verdict: RunVerdict) -> str:
    env = run.get("environment", {}) or {}
    norm = run.get("normalization", {}) or {}
    engines = env.get("engines", {}) or {}
    engine_bits = []
    for name, info in engines.items():
        details = ", ".join(f"{k}={v}" for k, v in (info or {}).items()
                            if k not in ("name", "engine") and v not in (None, "") and not isinstance(v, (dict, list)))
        engine_bits.append(f"{name} ({details})" if details else str(name))
    items = [
        ("created", run.get("created")),
        ("normalization", f"{norm.get('name')} · unit {norm.get('unit')} · tokenizer {norm.get('tokenizer')}"),
        ("engines", "; ".join(engine_bits) or "-"),
        ("pytest-ocrmetrics", env.get("plugin_version")),
        ("python", env.get("python")),
        ("pytest", env.get("pytest_version")),
        ("platform", env.get("platform")),
    ]
    meta = "".join(f"<span>{e(k)} <b>{e(v)}</b></span>" for k, v in items if v)
    css = {"passed": "ok", "failed": "fail"}.get(verdict.status, "interrupted")
    badge = f' <span class="verdict {css}" id="verdict">{e(verdict.text)}</span>'
    return f'<header class="top"><h1>{e(title)}{badge}</h1><div class="meta">{meta}</div></header>'


#: a document's key (dataset, engine, id) -> the id of its detail view, for links from the tables
Anchors = dict[tuple[str, str, str], str]


@dataclass(frozen=True)
class _DetailSettings:
    """How the detail views are drawn: where images are, how many views and images, how words are matched."""

    finder: ImageFinder
    max_details: int
    max_images: int
    thumbnail_pixels: int
    word_options: Mapping[str, Any]


def _word_options(run: Mapping[str, Any], max_distance: int | None, case_sensitive: bool | None,
                  ignore_punctuation: bool | None) -> dict[str, Any]:
    """How words are matched for highlighting: each option given, else the run's own (``normalization.word_match``),
    else the evaluator's default; a distance recorded beyond today's range is coloured at the largest allowed."""
    recorded = (run.get("normalization") or {}).get("word_match")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    given = {"max_distance": max_distance, "case_sensitive": case_sensitive, "ignore_punctuation": ignore_punctuation}
    word_options = {**_WORD_OPTIONS_DEFAULT,
                    **{option: recorded[key] for key, option in _WORD_MATCH_KEYS.items()
                       if isinstance(recorded.get(key), type(_WORD_OPTIONS_DEFAULT[option]))
                       and not (option == "max_distance" and (isinstance(recorded[key], bool) or recorded[key] < 0))},
                    **{option: value for option, value in given.items() if value is not None}}
    if recorded.get("distance") == word_options["max_distance"] and word_options["max_distance"] > MAX_DISTANCE:
        # a run file of before the 0..5 range: its words are coloured at the largest distance allowed now
        word_options["max_distance"] = MAX_DISTANCE
    return word_options


def _details_section(
    run: Mapping[str, Any], documents: Sequence[Mapping[str, Any]], ordered: Sequence[Mapping[str, Any]],
    metrics: list[str], comparison: Comparison | None, changes: ChangeClasses, settings: _DetailSettings,
    anchors: Anchors, images: ImageStore,
) -> str:
    """The detail views, worst first (one per document, or one per document of a dataset read by several engines);
    fills ``anchors`` (each document's view) and ``images`` (the page images they embed). Empty with no document."""
    engines = engine_order(run)
    engines_of: dict[str, dict[str, None]] = {}  # dataset -> its engines, in the order first seen
    for doc in documents:
        engines_of.setdefault(str(doc.get("dataset")), {})[str(doc.get("engine"))] = None
    blocks, block_count = detail_blocks(documents, ordered, engines, engines_of, settings.max_details)
    details = []
    for number, block in enumerate(blocks, start=1):
        for doc in block:
            anchors[doc_key(doc)] = f"doc-{number}"
        details.append(_detail_view(number, block, engines, engines_of, metrics, comparison, changes, settings,
                                    images))
    more = ""
    if block_count > settings.max_details:
        more = (f'<p class="note">{block_count - settings.max_details} more documents have no detail view here '
                f'(only the worst {settings.max_details} do, to keep the file small); see the table above or the '
                f'CSV report.</p>')
    more += missing_images_note(images)
    if not ordered:
        return ""
    return ('<section id="details"><h2>Document details, worst first</h2>'
            f'{_paired_note(engines, engines_of)}'
            '<div class="toolbar"><button type="button" class="action" data-action="expand">Expand all</button>'
            '<button type="button" class="action" data-action="collapse">Collapse all</button></div>'
            f'{LEGEND}{"".join(details)}{more}</section>')


def _detail_view(number: int, block: Sequence[Mapping[str, Any]], engines: Sequence[str],
                 engines_of: Mapping[str, Mapping[str, None]], metrics: list[str], comparison: Comparison | None,
                 changes: ChangeClasses, settings: _DetailSettings, images: ImageStore) -> str:
    """Detail view ``number``: one document's, or every engine's reading of it in a dataset read by several."""
    dataset = str(block[0].get("dataset"))
    with_image = number <= settings.max_images
    if len(engines_of.get(dataset, ())) < 2:
        return document_detail(number, block[0], metrics, comparison, changes, settings.finder,
                               settings.thumbnail_pixels, with_image, settings.word_options, images)
    by_engine = {str(doc.get("engine")): doc for doc in block}
    names = sorted(engines_of[dataset], key=lambda name: engines.index(name) if name in engines else len(engines))
    return paired_detail(number, [(name, by_engine.get(name)) for name in names], metrics, comparison, changes,
                         settings.finder, settings.thumbnail_pixels, with_image, settings.word_options, images)


def _paired_note(engines: Sequence[str], engines_of: Mapping[str, Mapping[str, None]]) -> str:
    """A note naming the datasets read by several engines and the engine each is compared against; empty if none."""
    paired = sorted(dataset for dataset, names in engines_of.items() if len(names) >= 2)
    if not paired:
        return ""
    firsts = ", ".join(f"{dataset} (against {min(engines_of[dataset], key=engines.index)})" for dataset in paired)
    return (f'<p class="note">Read by several engines: {e(firsts)}. Each of their documents shows every '
            f'engine\'s reading side by side, with the delta against the first engine under each value.</p>')


def render_html(
    run: Mapping[str, Any],
    *,
    comparison: Comparison | None = None,
    gates: Sequence[GateLike] | None = None,
    title: str = "OCR metrics report",
    image_root: str | Path | None = None,
    run_folder: str | Path | None = None,
    max_details: int = 200,
    max_images: int = 100,
    max_rows: int = 5000,
    max_fact_rows: int = 2000,
    thumbnail_pixels: int = 400_000,
    max_distance: int | None = None,
    case_sensitive: bool | None = None,
    ignore_punctuation: bool | None = None,
    with_charts: bool = True,
) -> str:
    """Render a run (a JSON run file's dict) as one self-contained HTML page.

    ``comparison`` (from :func:`pytest_ocrmetrics.gating.compare_runs`) adds baseline deltas; ``gates`` (gate
    expressions, :class:`Gate` objects or evaluated :class:`GateResult` objects) adds the gate table. Page images
    are looked for under ``image_root`` (``--image-root``), in the dataset folders the run recorded, then in
    ``run_folder`` (the run file's folder; default: the current directory), see
    :class:`~pytest_ocrmetrics.reporting.images.ImageFinder`; a note says how many were not found. Only the worst
    ``max_details`` documents get an expandable detail view (with an image, at most ``thumbnail_pixels`` pixels, for
    the first ``max_images``) and the document table lists at most ``max_rows`` documents and the facts table at most
    ``max_fact_rows`` facts (failing first), so a big run still gives a reasonable file; notes say what was left out.
    ``max_distance``, ``case_sensitive`` and ``ignore_punctuation`` set how words are matched for highlighting; each
    one not given is the run's own (its ``normalization.word_match``, what its ``crr`` and ``word_f1`` used), else
    the evaluator's default (1 edit, case-insensitive, punctuation stripped). Exact words are left uncoloured, fuzzy
    ones purple, unmatched ones red, as the evaluator's legend has them. ``with_charts=False`` leaves the charts
    section out (the benchmark measures what the charts cost).
    """
    root = ImageFinder.for_run(run, image_root=image_root, run_folder=run_folder)
    metrics = run_metrics(run)
    primary = primary_metric(run)
    documents = list(run.get("documents", []) or [])
    changes = change_classes(comparison)
    regressed_keys = {key[:3] for key, cls in changes.items() if cls == "worse"}
    ordered = worst_first(documents, primary, first=regressed_keys)
    results = gate_results(gates, run)
    verdict = run_verdict(run, results, comparison)
    word_options = _word_options(run, max_distance, case_sensitive, ignore_punctuation)
    images: ImageStore = {}  # path -> (id, data URL, note)
    anchors: dict[tuple[str, str, str], str] = {}  # document -> the id of its detail view
    details_section = _details_section(
        run, documents, ordered, metrics, comparison, changes,
        _DetailSettings(root, max_details, max_images, thumbnail_pixels, word_options), anchors, images)
    image_store = "".join(f'<img id="{image_id}" src="{e(url)}" alt="">' for image_id, url, _ in images.values() if url)
    body = "".join([
        _header(run, title, verdict),
        "<main>",
        summary_section(run, metrics, comparison),
        tags_section(run, metrics),
        charts_section(run, documents, primary, comparison, changes) if with_charts else "",
        gates_section(results),
        comparison_section(comparison) if comparison is not None else "",
        facts_section(run, anchors, max_fact_rows),
        confusions_section(documents),
        collection_errors_section(run),
        skipped_section(run),
        documents_section(ordered, metrics, primary, comparison, changes, anchors, max_rows) if ordered else "",
        details_section,
        "</main>",
        f'<div hidden id="images">{image_store}</div>' if image_store else "",
    ])
    csp = (f"default-src 'none'; img-src data:; style-src {csp_hash(CSS)}; script-src {csp_hash(JS)}; "
           "base-uri 'none'; form-action 'none'")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{e(title)}</title><style>{CSS}</style></head>"
        f"<body>{body}<script>{JS}</script></body></html>\n"
    )


def write_html(run: Mapping[str, Any], path: str | Path, **kwargs: Any) -> Path:
    """Render ``run`` with :func:`render_html` and write it to ``path`` (UTF-8, through a temporary file renamed
    over ``path``, so a failure keeps the previous report); returns the path."""
    return write_text_atomic(path, render_html(run, **kwargs))
