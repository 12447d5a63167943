"""``python -m pytest_ocrmetrics.cli``: the ``ocrmetrics`` command."""

import sys

from pytest_ocrmetrics.cli import main

sys.exit(main())
