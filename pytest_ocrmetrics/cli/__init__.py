"""The ``ocrmetrics`` command line tool: score texts, compare runs, render reports, all without pytest.

::

    ocrmetrics score REF.txt HYP.txt [HYP2.txt ...]     one or many outputs against one reference
    ocrmetrics score FOLDER                              batch: FOLDER/gt.txt against every FOLDER/<model>_out.txt
    ocrmetrics compare BASE.json NEW.json --max-regression=cer:0.005 [--gate=...] [--significance=0.05]
                       [--engine OLD=NEW ...]          two engines paired (RUN.json RUN.json: two engines of one run)
    ocrmetrics report RUN.json --html out.html [--csv out.csv] [--markdown out.md] [--baseline BASE.json]
                      [--biblicus OUT.json [--pipeline NAME]] [--benchmark-dir DIR]
    ocrmetrics biblicus-compare A.json [B.json] [--pipeline NAME --pipeline NAME] [--json]
                                                         two pipelines metric by metric with a winner column
    ocrmetrics evaluate LABEL_FILE --engine NAME [--base-path DIR] [--conf-threshold X] [--max-images N] [--json]
    ocrmetrics serve [--host 127.0.0.1] [--port 8765] [--open] [--run RUN.json]   the evaluator page in a browser
    ocrmetrics merge SHARD.json... -o RUN.json [--gate=...] [--baseline BASE.json --max-regression=...]
                                                         the run files of a sharded run (pytest --ocr-shard=K/N) as one

Exit codes: 0 success, 1 a regression, a failing gate or a baseline that matched no document of the run
(``compare``, ``merge``), 2 a usage error (bad option, bad gate or tolerance expression, a file that is missing, not a
run file or holding NaN, runs made with other normalization settings without ``--allow-mismatch``, run files that
``merge`` refuses). ``compare`` and ``merge`` follow
exactly the rules of the plugin's ``--ocr-baseline`` (see :mod:`pytest_ocrmetrics.gating`).

One module per subcommand (:mod:`~pytest_ocrmetrics.cli.score`, ``compare``, ``report``, ``biblicus_compare``,
``evaluate``, ``serve``, ``merge``), each with ``add_parser`` and ``run``; :mod:`~pytest_ocrmetrics.cli.command`
assembles the parser and runs one (:func:`main`, the ``ocrmetrics`` entry point); the helpers they share (run files,
gating and report options, exit codes) are in :mod:`~pytest_ocrmetrics.cli.common`.
"""

from __future__ import annotations

from pytest_ocrmetrics.cli.command import build_parser, main
from pytest_ocrmetrics.cli.score import SCORE_METRICS, score_texts

__all__ = ["main", "build_parser", "score_texts", "SCORE_METRICS"]
