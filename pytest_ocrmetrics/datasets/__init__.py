"""Datasets: documents with ground truth, read from on-disk formats detected automatically.

>>> from pytest_ocrmetrics.datasets import load_dataset
>>> dataset = load_dataset("example_suites/plates/data")   # doctest: +SKIP

Formats (detection order): ``ground_truth.json`` + ``images/`` (:mod:`.ground_truth_json`), an olmOCR-bench folder
(:mod:`.olmocr_bench`), an OmniDocBench folder (:mod:`.omnidocbench`), a JSONL manifest
(:mod:`.jsonl`), a ``<image>\\t<text>`` label file (:mod:`.label_file`), images with ``.gt.txt`` sidecars
(:mod:`.sidecar`). This package never imports pytest.
"""

from __future__ import annotations

from pytest_ocrmetrics.datasets.base import Dataset, DatasetError, DatasetLoader, SkippedEntry
from pytest_ocrmetrics.datasets.label_file import DatasetWarning
from pytest_ocrmetrics.datasets.loading import (
                                                LOADERS,
                                                dataset_name,
                                                detect_format,
                                                load_dataset,
                                                rebase_dataset_argument,
                                                split_dataset_argument,
)

__all__ = [
    "Dataset",
    "DatasetError",
    "DatasetLoader",
    "DatasetWarning",
    "LOADERS",
    "SkippedEntry",
    "dataset_name",
    "detect_format",
    "load_dataset",
    "rebase_dataset_argument",
    "split_dataset_argument",
]
