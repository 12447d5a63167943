"""Regenerate ``expected_verdicts.json``: the olmOCR-bench scorer's OWN verdicts for the sample and hand-made cases.

Not run by the test suite (it needs the benchmark's code and its dependencies, installed in a throwaway venv, never
in the project's). How the committed JSON was made::

    git clone https://github.com/allenai/olmocr /tmp/olmocr && git -C /tmp/olmocr checkout f7cfe4c
    # only olmocr/bench and olmocr/repeatdetect.py: olmocr/__init__.py would pull in the whole pipeline
    mkdir /tmp/olmocr_min && git -C /tmp/olmocr archive HEAD olmocr/bench olmocr/repeatdetect.py | tar -x -C /tmp/olmocr_min
    : > /tmp/olmocr_min/olmocr/__init__.py
    python -m venv /tmp/oracle
    /tmp/oracle/bin/pip install fuzzysearch rapidfuzz beautifulsoup4 lxml tqdm pypdf playwright
    PYTHONPATH=/tmp/olmocr_min /tmp/oracle/bin/python tests/facts/make_expected_verdicts.py \
        ../shared/data/olmocr_bench_sample > tests/facts/expected_verdicts.json

KaTeX runs in Chromium through Playwright, as in the benchmark (``OLMOCR_CHROMIUM`` names the browser binary).
Every test of the sample's JSONL files plus the baseline test the benchmark adds for each PDF without one is run, as
``benchmark.py`` does, on every ``*_pg<page>_repeat<r>.md`` of the ``olmocr_pipeline`` candidate; then every hand-made
case of ``hand_made_cases.json`` (a test object and an output text).
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
from pathlib import Path

from olmocr.bench import tests as bench_tests
from olmocr.bench.katex import render

chromium = os.environ.get("OLMOCR_CHROMIUM", "/usr/bin/chromium")


def _launch(self):  # the benchmark's _BrowserOwner, with an explicit browser binary
    from playwright.sync_api import sync_playwright

    self.p = sync_playwright().start()
    self.browser = self.p.chromium.launch(executable_path=chromium)
    self._closed = True


render._BrowserOwner.__init__ = _launch
render.equation_cache.load = lambda eq_hash: None  # never a stale cache
render.equation_cache.save = lambda eq_hash, eq: None


def main(root: str) -> None:
    root_path = Path(root)
    pdf_folder = root_path / "pdfs"
    pdfs = sorted(os.path.relpath(p, pdf_folder) for p in glob.glob(str(pdf_folder / "**/*.pdf"), recursive=True))
    all_tests = []
    for jsonl in sorted(root_path.glob("*.jsonl")):
        for test in bench_tests.load_tests(str(jsonl)):
            all_tests.append((jsonl.name, test))
    for pdf in pdfs:  # as benchmark.py main()
        if not any(t.type == "baseline" for _, t in all_tests if t.pdf == pdf):
            all_tests.append(("baseline", bench_tests.BaselineTest(id=f"{pdf}_baseline", pdf=pdf, page=1, type="baseline")))
    candidate = root_path / "olmocr_pipeline"
    sample = []
    for jsonl, test in sorted(all_tests, key=lambda item: item[1].id):
        md_base = os.path.splitext(test.pdf)[0]
        pattern = re.compile(rf"^{re.escape(md_base)}_pg{test.page}_repeat(\d+)\.md$")
        repeats = []
        for path in sorted(candidate.rglob("*.md")):
            if pattern.match(path.relative_to(candidate).as_posix()):
                passed, explanation = test.run(path.read_text(encoding="utf-8"))
                repeats.append({"file": path.relative_to(candidate).as_posix(), "passed": bool(passed),
                                "explanation": explanation})
        sample.append({"id": test.id, "type": test.type, "jsonl": jsonl, "pdf": test.pdf, "page": test.page,
                       "repeats": repeats,
                       "passed": sum(r["passed"] for r in repeats) / len(repeats) > 0.5 if repeats else False})
    cases = json.loads((Path(__file__).with_name("hand_made_cases.json")).read_text(encoding="utf-8"))
    hand_made = []
    for case in cases:
        test = bench_tests.load_single_test(dict(case["fact"]))
        passed, explanation = test.run(case["output"])
        hand_made.append({"name": case["name"], "passed": bool(passed), "explanation": explanation})
    json.dump({"generated_by": "olmocr/bench at commit f7cfe4c via tests/facts/make_expected_verdicts.py",
               "sample": sample, "hand_made": hand_made}, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
