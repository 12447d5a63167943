"""Regenerate ``expected_scores.json``: OmniDocBench's OWN end-to-end scores of the demo pages, per page and candidate.

Not run by the test suite: it needs the benchmark's code and its dependencies, installed in a throwaway venv, never in
the project's. How the committed JSON was made::

    git clone https://github.com/opendatalab/OmniDocBench /tmp/omnibench
    git -C /tmp/omnibench checkout 7bd6c2ebdb7676e6fd251b0e695e15e09cf3ab5d
    python -m venv /tmp/omnivenv
    /tmp/omnivenv/bin/pip install Levenshtein numpy tqdm beautifulsoup4 pylatexenc==3.0a30 lxml apted scipy \
        pandas tabulate func-timeout loguru pyyaml
    /tmp/omnivenv/bin/python tests/omnidoc/make_expected.py --omnidocbench /tmp/omnibench \
        ../shared/data/acceptance/omnidocbench > tests/omnidoc/expected_scores.json

It runs the benchmark's own entry point, ``pdf_validation.py``, with an ``end2end`` configuration (``quick_match``,
text block / display formula / table / reading order edit distances and table TEDS), once per candidate folder under
``candidates/``, in a temporary working directory (the benchmark writes ``./result``). Only modules that the end-to-end
text, table and formula path never calls are replaced by empty stand-ins (``evaluate`` for BLEU/METEOR, ``mmeval``
for layout detection, ``matplotlib`` for charts, the CDM renderer), so their heavy dependencies need not be installed.

Per page it reads the benchmark's ``*_per_page_edit.json`` files (the page's edit distance: the sum of the page's
edits over the sum of its ``max(len(gt), len(pred))``) and the TEDS / TEDS-S of every table sample, averaged per page;
the leaderboard numbers are the ``all`` entries of ``*_metric_result.json`` (edit distances: the mean of the page
values; TEDS: the mean over all tables).

Besides the two shipped candidates it scores the synthetic ones of ``perturb.py`` (deterministic rewrites of them:
reordered, split and merged paragraphs, pipe tables, noise), written to a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perturb import TRANSFORMS, write_synthetic

_DRIVER = r'''
import os, runpy, sys, types
bench = sys.argv[1]
sys.path.insert(0, bench)
def stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module
class _Unused:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("not part of the end-to-end text/table/formula path")
stub("evaluate", load=_Unused)
stub("mmeval", COCODetection=_Unused)
stub("matplotlib", use=lambda *a, **k: None)
stub("matplotlib.pyplot")
stub("matplotlib.font_manager", FontProperties=lambda *a, **k: None)
stub("metrics.cdm_metric", CDM=_Unused)
sys.argv = ["pdf_validation.py", "--config", sys.argv[2]]
runpy.run_path(os.path.join(bench, "pdf_validation.py"), run_name="__main__")
'''

_CONFIG = """end2end_eval:
  metrics:
    text_block:
      metric: [Edit_dist]
    display_formula:
      metric: [Edit_dist]
    table:
      metric: [TEDS, Edit_dist]
    reading_order:
      metric: [Edit_dist]
  dataset:
    dataset_name: end2end_dataset
    ground_truth:
      data_path: {gt}
    prediction:
      data_path: {pred}
    match_method: quick_match
"""

# the benchmark's element names -> the product's metric names
EDIT_ELEMENTS = {
    "text_block": "text_block_edit",
    "display_formula": "formula_edit",
    "table": "table_edit",
    "reading_order": "reading_order_edit",
}


def run_benchmark(bench: Path, python: str, gt_json: Path, candidate: Path) -> dict:
    """Run the benchmark on one candidate folder; return its per-page scores and leaderboard means.

    Args:
        bench: the OmniDocBench checkout.
        python: the interpreter of the throwaway venv that has the benchmark's dependencies.
        gt_json: the ground-truth JSON.
        candidate: the folder of ``<image stem>.md`` predictions.

    Returns:
        ``{"pages": {image_path: {metric: value}}, "means": {metric: value}}``.
    """
    with tempfile.TemporaryDirectory() as work:
        work_dir = Path(work)
        pred = work_dir / candidate.name  # the save name is the folder's base name
        pred.symlink_to(candidate.resolve(), target_is_directory=True)
        config = work_dir / "end2end.yaml"
        config.write_text(_CONFIG.format(gt=gt_json.resolve(), pred=pred), encoding="utf-8")
        (work_dir / "result").mkdir()  # the benchmark writes there before it creates it
        driver = work_dir / "driver.py"
        driver.write_text(_DRIVER, encoding="utf-8")
        done = subprocess.run([python, str(driver), str(bench.resolve()), str(config)], cwd=work,
                              capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"the benchmark failed on {candidate}:\n{done.stderr[-4000:]}")
        result = work_dir / "result"
        save = f"{candidate.name}_quick_match"
        pages: dict[str, dict[str, float]] = defaultdict(dict)
        for element, metric in EDIT_ELEMENTS.items():
            per_page = result / f"{save}_{element}_per_page_edit.json"
            if per_page.exists():
                for image, value in json.loads(per_page.read_text(encoding="utf-8")).items():
                    pages[image][metric] = value
        tables: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for sample in json.loads((result / f"{save}_table_result.json").read_text(encoding="utf-8")):
            tables[sample["img_id"]].append((sample["metric"]["TEDS"], sample["metric"]["TEDS_structure_only"]))
        for image, scores in tables.items():
            pages[image]["table_teds"] = sum(s[0] for s in scores) / len(scores)
            pages[image]["table_teds_s"] = sum(s[1] for s in scores) / len(scores)
        summary = json.loads((result / f"{save}_metric_result.json").read_text(encoding="utf-8"))
        means = {metric: summary[element]["all"]["Edit_dist"]["ALL_page_avg"]
                 for element, metric in EDIT_ELEMENTS.items()}
        means["table_teds"] = summary["table"]["all"]["TEDS"]["all"]
        means["table_teds_s"] = summary["table"]["all"]["TEDS_structure_only"]["all"]
        return {"pages": dict(sorted(pages.items())), "means": means}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the OmniDocBench demo folder (gt/, candidates/)")
    parser.add_argument("--omnidocbench", type=Path, required=True, help="a checkout of OmniDocBench")
    parser.add_argument("--python", default=sys.executable, help="the venv interpreter with the benchmark's deps")
    args = parser.parse_args()
    gt_json = args.data / "gt" / "OmniDocBench_demo.json"
    commit = subprocess.run(["git", "-C", str(args.omnidocbench), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"
    out = {
        "omnidocbench_commit": commit,
        "ground_truth": os.path.relpath(gt_json, args.data),
        "candidates": {},
    }
    shipped = sorted(p for p in (args.data / "candidates").iterdir() if p.is_dir())
    stems = [page["page_info"]["image_path"][:-4] for page in json.loads(gt_json.read_text(encoding="utf-8"))]
    with tempfile.TemporaryDirectory() as synthetic_dir:
        synthetic = write_synthetic(args.data / "candidates", Path(synthetic_dir), stems)
        for candidate in [*shipped, *synthetic]:
            out["candidates"][candidate.name] = run_benchmark(args.omnidocbench, args.python, gt_json, candidate)
    assert set(TRANSFORMS) <= set(out["candidates"])
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
