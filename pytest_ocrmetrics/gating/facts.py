"""Page-level facts against a baseline: a fact that passed in the baseline run and fails now is a regression of its
document, one that failed and passes now is fixed.

Facts are matched by (dataset, engine, document, fact id) through the run files' ``details.facts``. A fact
regression fails (the document's test, the session, ``ocrmetrics compare``) when ``fact_pass_rate`` has a
tolerance (``--ocr-max-regression=fact_pass_rate:0``, any amount, or ``*``): a fact is pass/fail, so one that
flipped is a regression whatever the tolerance of the rates; the amount applies to ``fact_pass_rate`` itself, per
document and per aggregate. Without that tolerance the flips are listed, as differences are for other metrics.

>>> old = {"details": {"facts": [{"id": "t1", "type": "present", "passed": True, "explanation": ""}]}}
>>> [r.message for r in fact_changes("d", "e", "p1", old, [{"id": "t1", "type": "present", "passed": False,
...     "explanation": "'x' not found"}])[0]]
["fact 't1' (present) regressed on document 'p1' (e / d): passed in the baseline, fails now: 'x' not found"]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

__all__ = ["FactChange", "fact_changes", "document_facts"]


@dataclass(frozen=True)
class FactChange:
    """One fact whose verdict flipped between the baseline and this run (``regressed``: passed, now fails)."""

    engine: str
    dataset: str
    document: str
    fact: str
    type: str
    regressed: bool
    explanation: str = ""

    @property
    def message(self) -> str:
        where = f"document {self.document!r} ({self.engine} / {self.dataset})"
        if self.regressed:
            why = f": {self.explanation}" if self.explanation else ""
            return f"fact {self.fact!r} ({self.type}) regressed on {where}: passed in the baseline, fails now{why}"
        return f"fact {self.fact!r} ({self.type}) is fixed on {where}: failed in the baseline, passes now"

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "dataset": self.dataset, "document": self.document, "fact": self.fact,
                "type": self.type, "explanation": self.explanation}


def document_facts(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The facts checked on a run file document (``details.facts``), or ``[]``."""
    details = doc.get("details")
    facts = details.get("facts") if isinstance(details, Mapping) else None
    return [f for f in facts if isinstance(f, Mapping) and "id" in f] if isinstance(facts, list) else []


def fact_changes(dataset: str, engine: str, doc_id: str, old_doc: Mapping[str, Any],
                 new_facts: Iterable[Mapping[str, Any]]) -> tuple[list[FactChange], list[FactChange]]:
    """(regressed, fixed) facts of one document: ``old_doc`` is its baseline record, ``new_facts`` this run's
    ``details.facts``. Facts only on one side are neither (new or removed facts are not flips), nor are facts not
    checked on either side (``passed`` null: no verdict to compare)."""
    old = {str(f["id"]): bool(f.get("passed")) for f in document_facts(old_doc) if f.get("passed") is not None}
    regressed: list[FactChange] = []
    fixed: list[FactChange] = []
    for fact in new_facts:
        fact_id = str(fact["id"])
        if fact_id not in old or fact.get("passed") is None or old[fact_id] == bool(fact.get("passed")):
            continue
        change = FactChange(engine, dataset, doc_id, fact_id, str(fact.get("type", "")), old[fact_id],
                            str(fact.get("explanation") or "") if old[fact_id] else "")
        (regressed if change.regressed else fixed).append(change)
    return regressed, fixed
