"""An HTML parser that collects what the report tests look at."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """A tiny DOM-ish recorder: every start tag with its attributes, the text inside each element id, and nesting."""

    VOID = {"meta", "img", "input", "br", "hr", "link"}

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.text_by_id: dict[str, list[str]] = {}
        self.script_text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        entry = (tag, dict(attrs))
        self.tags.append(entry)
        if tag not in self.VOID:
            self.stack.append(entry)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] == "script":
            self.script_text.append(data)
        for _, attrs in self.stack:
            if attrs.get("id"):
                self.text_by_id.setdefault(str(attrs["id"]), []).append(data)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())]

    def text(self, element_id: str) -> str:
        return "".join(self.text_by_id.get(element_id, []))
