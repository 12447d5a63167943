"""Engines that count their calls (cache and plugin tests), and documents for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineError, OcrOutput, Word

COUNTING_ENGINE = """
from pathlib import Path
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

class Counting:
    name = "counting"
    def __init__(self, version):
        self.version = version
    def identity(self):
        return {"engine": "counting", "version": self.version}
    def recognize(self, document):
        with open(Path(__file__).parent / "calls.txt", "a") as log:
            log.write(document.id + "\\n")
        return OcrOutput(text=document.reference_text, engine="counting")
    def close(self):
        pass

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("counting", lambda arg, options: Counting(options.get("version", "1")),
                                 options={"version": "changes the identity"}))
"""


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"  # images are checked by their first bytes; the rest is never decoded here


class CountingEngine:
    """A fake engine: output derived from the image bytes; counts calls."""

    name = "counting"

    def __init__(self, prompt: str = "p", fail: set[str] | None = None) -> None:
        self.prompt = prompt
        self.calls: list[str] = []
        self.fail = fail or set()
        self.closed = False

    def identity(self) -> Mapping[str, Any]:
        return {"engine": "counting", "prompt": self.prompt}

    def recognize(self, document: Document) -> OcrOutput:
        self.calls.append(document.id)
        if document.id in self.fail:
            raise EngineError(f"cannot read {document.id}")
        return OcrOutput(
            text=document.image_bytes()[len(PNG_MAGIC):].decode(),
            engine=self.name,
            words=(Word("w", (1.0, 2.0, 3.0, 4.0), 0.5),),
            confidence=0.5,
            raw="raw:" + document.id,
            elapsed_s=1.25,
            truncated=True,
            metadata={"k": [1, 2]},
        )

    def close(self) -> None:
        self.closed = True


class BatchingEngine(CountingEngine):
    batch_size = 8

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def recognize_batch(self, documents: Sequence[Document]) -> list[OcrOutput | BaseException]:
        self.batches.append([d.id for d in documents])
        return [self.recognize(d) for d in documents]


def doc(tmp_path: Path, name: str, content: str | None = None) -> Document:
    path = tmp_path / "img" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(PNG_MAGIC + (content if content is not None else f"content of {name}").encode())
    return Document(id=name, dataset="d", image_path=path)
