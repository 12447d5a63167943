"""The engine registry, option parsing and entry-point discovery."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Mapping

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineOptionError, EngineSpec, OcrOutput
from pytest_ocrmetrics.engines.registry import (
    EngineRegistry,
    UnknownEngineError,
    default_registry,
    parse_engine_options,
    split_engine_arg,
)


class EchoEngine:
    name = "echo"

    def __init__(self, arg: str | None, options: Mapping[str, str]) -> None:
        self.arg, self.options = arg, dict(options)

    def identity(self) -> Mapping[str, Any]:
        return {"engine": self.name, "arg": self.arg, **self.options}

    def recognize(self, document: Document) -> OcrOutput:
        return OcrOutput(text=document.reference_text or "", engine=self.name)

    def close(self) -> None:
        return None


ECHO = EngineSpec("echo", EchoEngine, options={"upper": "uppercase", "mode": "a mode"}, description="echo")


def test_default_registry_has_the_builtins_and_is_fresh_each_time() -> None:
    first = default_registry(entry_points=False)
    assert {"rapidocr", "replay", "tesseract"} <= set(first.names())
    assert first.names() == sorted(first.names())
    first.register(ECHO)
    assert "echo" not in default_registry(entry_points=False)
    for name in first.names():
        spec = first.get(name)
        assert spec.description and spec.options


def test_create_passes_the_part_after_the_first_colon_and_the_options() -> None:
    registry = EngineRegistry()
    registry.register(ECHO)
    engine = registry.create("echo:C:/preds:v2", {"mode": "x"})
    assert isinstance(engine, EchoEngine)
    assert engine.arg == "C:/preds:v2" and engine.options == {"mode": "x"}
    assert registry.create("echo", {}).arg is None
    assert registry.create("echo:", None).arg is None


def test_split_engine_arg() -> None:
    assert split_engine_arg(" replay : dir ") == ("replay", "dir")


def test_unknown_engine_lists_the_registered_ones() -> None:
    registry = default_registry(entry_points=False)
    listed = ", ".join(registry.names())
    with pytest.raises(UnknownEngineError) as info:
        registry.create("tesseact", {})
    assert str(info.value) == f"unknown OCR engine 'tesseact' (did you mean 'tesseract'?); registered engines: {listed}"
    assert "rapidocr, replay, tesseract" in listed
    assert issubclass(UnknownEngineError, ValueError)


def test_unknown_setting_lists_the_engines_valid_keys() -> None:
    registry = EngineRegistry()
    registry.register(ECHO)
    with pytest.raises(EngineOptionError, match=r"unknown setting echo.lang; valid settings of engine 'echo': echo.mode, echo.upper"):
        registry.create("echo", {"lang": "deu"})
    registry.register(EngineSpec("plain", EchoEngine))
    with pytest.raises(EngineOptionError, match=r"none \(this engine has no settings\)"):
        registry.check_options("plain", {"x": "1"})


def test_register_refuses_clashes_and_bad_names_but_allows_replace() -> None:
    registry = EngineRegistry()
    registry.register(ECHO)
    registry.register(ECHO)  # the same spec again is fine (a distribution seen twice on sys.path)
    other = EngineSpec("echo", lambda arg, options: EchoEngine(arg, options))
    with pytest.raises(ValueError, match="engine 'echo' is already registered"):
        registry.register(other)
    registry.register(other, replace=True)
    assert registry.get("echo") is other
    for bad in ("my engine", "a:b", "a.b", ""):
        with pytest.raises(ValueError, match="must be letters, digits"):
            registry.register(EngineSpec(bad, EchoEngine))
    with pytest.raises(TypeError):
        registry.register("echo")  # type: ignore[arg-type]


def test_builtins_are_imported_when_looked_up_and_still_refuse_clashes() -> None:
    code = textwrap.dedent("""
        import sys
        from pytest_ocrmetrics.engines.base import EngineSpec
        from pytest_ocrmetrics.engines.registry import builtin_engines, default_registry
        registry = default_registry(entry_points=False)
        loaded = lambda: sorted(m for m in ("deepseek", "openai_compat", "http", "rapidocr", "tesseract")
                                if f"pytest_ocrmetrics.engines.{m}" in sys.modules)
        assert {"deepseek", "openai", "replay"} <= set(registry.names()) and "openai" in registry, registry.names()
        registry.get("replay")
        assert loaded() == [], loaded()  # a replay run imports none of the other engines' modules
        assert registry.get("tesseract").name == "tesseract" and loaded() == ["tesseract"], loaded()
        try:
            registry.register(EngineSpec("deepseek", lambda arg, options: None))
        except ValueError as exc:
            assert "engine 'deepseek' is already registered" in str(exc), exc
        else:
            raise AssertionError("a spec under a built-in's name was accepted")
        other = EngineSpec("rapidocr", lambda arg, options: None)
        registry.register(other, replace=True)
        assert registry.get("rapidocr") is other and "pytest_ocrmetrics.engines.rapidocr" not in sys.modules
        assert [spec.name for spec in builtin_engines()] == ["replay", "tesseract", "rapidocr", "openai", "deepseek"]
        print("ok")
    """)
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize(("items", "expected"), [
    (["tesseract.lang=deu", "tesseract.psm=6"], {"tesseract": {"lang": "deu", "psm": "6"}}),
    ([" replay.dir = a=b.c ", "", "  "], {"replay": {"dir": "a=b.c"}}),
    (["t.k=1", "t.k=2"], {"t": {"k": "2"}}),
    (["t.k="], {"t": {"k": ""}}),
])
def test_parse_engine_options(items: list[str], expected: dict[str, dict[str, str]]) -> None:
    assert parse_engine_options(items) == expected


@pytest.mark.parametrize("item", ["tesseract.lang", "lang=deu", ".lang=deu", "tesseract.=deu", "=x"])
def test_malformed_engine_option(item: str) -> None:
    with pytest.raises(EngineOptionError, match=r"must look like ENGINE.KEY=VALUE, e.g. tesseract.lang=deu"):
        parse_engine_options([item])


# -- entry points -----------------------------------------------------------------------------------------------------
def fake_distribution(tmp_path: Path, entry_points: str, module: str) -> Path:
    """A fake installed distribution: a module plus a ``*.dist-info`` with METADATA and entry_points.txt."""
    (tmp_path / "fake_ocr_engines.py").write_text(textwrap.dedent(module), encoding="utf-8")
    info = tmp_path / "pytest_ocrmetrics_fake-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pytest-ocrmetrics-fake\nVersion: 1.2\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
    return tmp_path


MODULE = """
    from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

    class Upper:
        name = "upper"
        def __init__(self, arg, options): self.options = dict(options)
        def identity(self): return {"engine": "upper"}
        def recognize(self, document): return OcrOutput(text=(document.reference_text or "").upper(), engine="upper")
        def close(self): pass

    UPPER = EngineSpec("upper", Upper, options={"lang": "language"}, description="uppercases the truth")

    def more():
        return [EngineSpec("lower", Upper), EngineSpec("title", Upper)]

    NOT_A_SPEC = 42
"""


def test_entry_points_add_engines_with_no_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(fake_distribution(tmp_path, """
        [pytest_ocrmetrics.engines]
        upper = fake_ocr_engines:UPPER
        more = fake_ocr_engines:more
    """, MODULE)))
    registry = default_registry()
    assert {"upper", "lower", "title", "tesseract"} <= set(registry.names())
    engine = registry.create("upper", {"lang": "x"})
    document = Document("a.png", "d", None, reference_text="abc")
    assert engine.recognize(document).text == "ABC"
    assert registry.entry_point_errors == {}


def test_broken_entry_points_are_reported_when_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(fake_distribution(tmp_path, """
        [pytest_ocrmetrics.engines]
        broken = fake_ocr_engines_missing_module:SPEC
        number = fake_ocr_engines:NOT_A_SPEC
        tesseract = fake_ocr_engines:UPPER_AS_TESSERACT
        upper = fake_ocr_engines:UPPER
    """, MODULE)))
    registry = default_registry()
    assert "upper" in registry.names()  # the good one still loads
    errors = registry.entry_point_errors
    assert set(errors) == {"broken", "number", "tesseract"}
    assert "ModuleNotFoundError" in errors["broken"] and "pytest-ocrmetrics-fake 1.2" in errors["broken"]
    assert "expected an EngineSpec" in errors["number"]
    with pytest.raises(UnknownEngineError, match=r"engine entry point 'broken' .* failed to load: ModuleNotFoundError"):
        registry.get("broken")
    with pytest.raises(UnknownEngineError, match=r"entry points that failed to load: broken, number, tesseract"):
        registry.get("nothing")
    assert registry.get("tesseract").description.startswith("Tesseract")  # the built-in is untouched


def test_identity_of_a_created_engine_is_json_serializable() -> None:
    registry = EngineRegistry()
    registry.register(ECHO)
    assert json.loads(json.dumps(registry.create("echo:x", {"upper": "1"}).identity()))["arg"] == "x"
