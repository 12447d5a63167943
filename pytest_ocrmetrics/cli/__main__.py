"""``python -m pytest_ocrmetrics.cli``: the ``ocrmetrics`` command."""

import sys

from pytest_ocrmetrics.cli import main

if __name__ == "__main__":  # imported (by the doctest walk, a tool), it runs nothing
    sys.exit(main())
