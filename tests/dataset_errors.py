"""What the tests of malformed ground truth check: the malformed entry's document errors, the others load."""

from __future__ import annotations

from pytest_ocrmetrics.datasets import Dataset


def entry_error(dataset: Dataset, doc_id: str) -> str:
    """The load-time error of document ``doc_id``, after checking that it has one and no other document has."""
    errors = {document.id: document.error for document in dataset.documents}
    assert errors.get(doc_id) is not None, errors
    assert all(error is None for name, error in errors.items() if name != doc_id), errors
    return str(errors[doc_id])
