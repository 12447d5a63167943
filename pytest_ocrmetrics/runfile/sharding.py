"""Which documents a CI shard runs (``--ocr-shard=K/N``): a stable split of every dataset over N machines.

Pytest-free. A document belongs to shard K of N by a hash of its dataset name and document id alone, never by its
position in the dataset or by Python's per-process ``hash()``: every machine of a CI matrix computes the same split,
and adding or removing documents never moves another document to a different shard. The hash picks the shard with
Lamping and Veach's jump consistent hash, so changing N moves only the documents that must move (from 3 to 4
shards, a quarter of them, all to the new shard). Every engine of a document runs in the same shard.

>>> parse_shard("2/3")
Shard(index=2, count=3)
>>> [Shard(k, 3).holds("invoices", "doc_001.png") for k in (1, 2, 3)].count(True)
1

The shards' run files are merged with ``ocrmetrics merge`` (:mod:`pytest_ocrmetrics.runfile.merge`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Shard", "parse_shard", "shard_index"]

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
_MASK = (1 << 64) - 1


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def holds(self, dataset: str, document_id: str) -> bool:
        """Whether this shard runs the document ``document_id`` of the dataset named ``dataset``."""
        return shard_index(dataset, document_id, self.count) == self.index

    def to_dict(self) -> dict[str, Any]:
        """The run file's top-level ``shard`` entry."""
        return {"index": self.index, "count": self.count}

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, option: str = "--ocr-shard") -> Shard:
    """``"K/N"`` as a :class:`Shard`; anything else raises ``ValueError`` with one sentence naming ``option``.

    >>> parse_shard("0/2")
    Traceback (most recent call last):
    ...
    ValueError: --ocr-shard='0/2': K must be 1 to N (shards are numbered from 1), e.g. --ocr-shard=1/2
    """
    match = _SHARD.fullmatch(str(text))
    if match is None:
        raise ValueError(f"{option}={text!r} is not K/N (this machine's shard K of N, both whole numbers), "
                         f"e.g. {option}=1/4")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1:
        raise ValueError(f"{option}={text!r}: N must be at least 1, e.g. {option}=1/2")
    if not 1 <= index <= count:
        raise ValueError(f"{option}={text!r}: K must be 1 to N (shards are numbered from 1), e.g. {option}=1/{count}")
    return Shard(index, count)


def shard_index(dataset: str, document_id: str, count: int) -> int:
    """The shard (1 to ``count``) of a document: a SHA-256 of ``dataset`` and ``document_id`` fed to a jump
    consistent hash. The same on every machine and Python version; no other document changes it.

    >>> shard_index("invoices", "doc_001.png", 1)
    1
    """
    if count < 1:
        raise ValueError(f"a shard count is at least 1, not {count}")
    # surrogatepass: a document id from a file name that is not UTF-8 still hashes (to the same bytes everywhere)
    text = f"{dataset}\x00{document_id}".encode("utf-8", "surrogatepass")
    key = int.from_bytes(hashlib.sha256(text).digest()[:8], "big")
    return _jump_hash(key, count) + 1


def _jump_hash(key: int, buckets: int) -> int:
    """Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm" (2014): a bucket in ``range(buckets)``;
    going from n to n + 1 buckets moves only keys into the new bucket."""
    bucket, jump = -1, 0
    while jump < buckets:
        bucket = jump
        key = (key * 2862933555777941757 + 1) & _MASK
        jump = int((bucket + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return bucket
