"""The engine registry: which engines exist, their settings, and how ``--ocr-engine=NAME[:ARG]`` becomes an engine.

Engines come from three places, all through :meth:`EngineRegistry.register`:

1. the built-ins (``replay``, ``tesseract``, ``rapidocr``, ``openai``, ``deepseek``), registered by
   :func:`default_registry` by name, each module imported when its engine is first looked up (a ``replay`` run
   imports none of the HTTP and model engines' code);
2. installed packages: each entry point in the group ``pytest_ocrmetrics.engines`` is an :class:`EngineSpec`, or a
   callable returning one or a list of them (:meth:`EngineRegistry.load_entry_points`), so
   ``pip install pytest-ocrmetrics-myengine`` adds an engine with no configuration;
3. the pluggy hook ``pytest_ocrmetrics_register_engines(registry)`` in a ``conftest.py``.

Engine settings use one syntax everywhere, ``ENGINE.KEY=VALUE`` (:func:`parse_engine_options`).
"""

from __future__ import annotations

import re
from importlib import import_module, metadata
from typing import Any, Iterable, Mapping

from pytest_ocrmetrics.engines.base import EngineOptionError, EngineSpec, OcrEngine
from pytest_ocrmetrics.engines.settings import did_you_mean

__all__ = [
    "ENTRY_POINT_GROUP",
    "EngineRegistry",
    "UnknownEngineError",
    "builtin_engines",
    "default_registry",
    "parse_engine_options",
    "split_engine_arg",
]

ENTRY_POINT_GROUP = "pytest_ocrmetrics.engines"

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")

#: the built-in engines: name -> (module, attribute) of their :class:`EngineSpec`, in :func:`builtin_engines`' order
_BUILTINS: dict[str, tuple[str, str]] = {
    "replay": ("pytest_ocrmetrics.engines.replay", "SPEC"),
    "tesseract": ("pytest_ocrmetrics.engines.tesseract", "SPEC"),
    "rapidocr": ("pytest_ocrmetrics.engines.rapidocr", "SPEC"),
    "openai": ("pytest_ocrmetrics.engines.openai_compat", "OPENAI_SPEC"),
    "deepseek": ("pytest_ocrmetrics.engines.deepseek", "DEEPSEEK_SPEC"),
}


class UnknownEngineError(EngineOptionError):
    """``--ocr-engine`` names an engine nobody registered; the message lists the registered ones."""


def split_engine_arg(engine_arg: str) -> tuple[str, str | None]:
    """Split what the user typed into ``(name, arg)`` at the first ``:``; an empty argument is None.

    >>> split_engine_arg("replay:preds/run 7")
    ('replay', 'preds/run 7')
    >>> split_engine_arg("tesseract")
    ('tesseract', None)
    """
    name, sep, arg = engine_arg.partition(":")
    arg = arg.strip()
    return name.strip(), (arg if sep and arg else None)


def parse_engine_options(items: Iterable[str]) -> dict[str, dict[str, str]]:
    """Parse ``ENGINE.KEY=VALUE`` items (``--ocr-engine-option``, ``ocr_engine_options`` ini lines).

    Surrounding whitespace and blank items are ignored; the value is everything after the first ``=`` (it may contain
    ``=`` and ``.``); a later item overrides an earlier one with the same engine and key. A malformed item raises
    :class:`~pytest_ocrmetrics.engines.base.EngineOptionError`.

    >>> parse_engine_options(["tesseract.lang=deu", " tesseract.psm = 6 ", "replay.dir=out/v1.2"])
    {'tesseract': {'lang': 'deu', 'psm': '6'}, 'replay': {'dir': 'out/v1.2'}}
    """
    options: dict[str, dict[str, str]] = {}
    for item in items:
        text = item.strip()
        if not text:
            continue
        target, equals, value = text.partition("=")
        engine, dot, key = target.strip().partition(".")
        engine, key = engine.strip(), key.strip()
        if not equals or not dot or not engine or not key:
            raise EngineOptionError(
                f"engine option {item!r} must look like ENGINE.KEY=VALUE, e.g. tesseract.lang=deu"
            )
        options.setdefault(engine, {})[key] = value.strip()
    return options


class EngineRegistry:
    """Registered engines by name.

    Example::

        >>> registry = default_registry()
        >>> registry.names()                                   # doctest: +SKIP
        ['rapidocr', 'replay', 'tesseract']
        >>> engine = registry.create("replay:predictions", {})  # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._specs: dict[str, EngineSpec] = {}
        self._deferred: dict[str, tuple[str, str]] = {}  # built-ins not imported yet: name -> (module, attribute)
        self._failed_entry_points: dict[str, str] = {}

    def _register_builtin(self, name: str, module: str, attribute: str) -> None:
        """Register a built-in engine by name; its module is imported when the engine is first looked up."""
        if name not in self._specs:
            self._deferred[name] = (module, attribute)

    def _resolve(self, name: str) -> None:
        """Import the deferred built-in ``name`` (if it is one) and register its spec."""
        where = self._deferred.pop(name, None)
        if where is not None:
            self.register(getattr(import_module(where[0]), where[1]))

    # -- registering -------------------------------------------------------------------------------------------------
    def register(self, spec: EngineSpec, *, replace: bool = False) -> None:
        """Add an engine. Registering the same spec twice is a no-op; another spec under a taken name is a
        ``ValueError`` unless ``replace=True`` (e.g. a conftest overriding a built-in on purpose)."""
        if not isinstance(spec, EngineSpec):
            raise TypeError(f"register() takes an EngineSpec, got {type(spec).__name__}")
        if not _NAME.match(spec.name):
            raise ValueError(
                f"engine name {spec.name!r} must be letters, digits, '_' or '-' (no ':', '.' or spaces): "
                "it is typed in --ocr-engine=NAME[:ARG] and ENGINE.KEY=VALUE settings"
            )
        for key in spec.options:
            if not _KEY.match(key):
                raise ValueError(f"engine {spec.name!r}: setting key {key!r} must be letters, digits, '_', '.' or '-'")
        if not replace:  # a name taken by a built-in not imported yet is taken all the same
            self._resolve(spec.name)
        self._deferred.pop(spec.name, None)
        current = self._specs.get(spec.name)
        if current is not None and current != spec and not replace:
            raise ValueError(
                f"engine {spec.name!r} is already registered ({_describe(current)}); "
                "pick another name or pass replace=True"
            )
        self._specs[spec.name] = spec

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> list[str]:
        """Register the engines of installed distributions (entry-point group ``pytest_ocrmetrics.engines``).

        Each entry point loads to an :class:`EngineSpec`, or to a callable returning one or a list/tuple of them.
        An entry point that fails to load does not break the run: the failure is remembered and reported when
        someone asks for that engine (by the entry point's name) or for an unknown one. Returns the names
        registered.
        """
        registered: list[str] = []
        for entry_point in sorted(metadata.entry_points(group=group), key=lambda ep: ep.name):
            origin = _origin(entry_point)
            try:
                loaded: Any = entry_point.load()
                specs = loaded if isinstance(loaded, EngineSpec) else loaded() if callable(loaded) else loaded
                if isinstance(specs, EngineSpec):
                    specs = [specs]
                if not isinstance(specs, (list, tuple)) or not all(isinstance(s, EngineSpec) for s in specs):
                    raise TypeError(
                        f"expected an EngineSpec or a callable returning EngineSpec(s), got {type(specs).__name__}"
                    )
                for spec in specs:
                    self.register(spec)
                    registered.append(spec.name)
            except Exception as exc:  # noqa: BLE001 - a broken third-party package must not break every run
                self._failed_entry_points[entry_point.name] = (
                    f"engine entry point {entry_point.name!r} ({origin}) failed to load: {type(exc).__name__}: {exc}"
                )
        return registered

    # -- looking up --------------------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Registered engine names, sorted."""
        return sorted({*self._specs, *self._deferred})

    @property
    def entry_point_errors(self) -> dict[str, str]:
        """Entry points that failed to load: entry point name -> one-sentence error."""
        return dict(self._failed_entry_points)

    def __contains__(self, name: object) -> bool:
        return name in self._specs or name in self._deferred

    def get(self, name: str) -> EngineSpec:
        """The spec registered as ``name``.

        Raises :class:`UnknownEngineError` listing the registered engines, or naming the import error when ``name``
        is an installed entry point that failed to load (a usage error either way: the engine cannot be used).
        """
        self._resolve(name)
        spec = self._specs.get(name)
        if spec is not None:
            return spec
        if name in self._failed_entry_points:
            raise UnknownEngineError(self._failed_entry_points[name])
        message = (f"unknown OCR engine {name!r}{did_you_mean(name, self.names())}; "
                   f"registered engines: {', '.join(self.names()) or '(none)'}")
        if self._failed_entry_points:
            message += f" (entry points that failed to load: {', '.join(sorted(self._failed_entry_points))})"
        raise UnknownEngineError(message)

    def check_options(self, name: str, options: Mapping[str, str]) -> EngineSpec:
        """Check setting keys for engine ``name`` without creating it; unknown keys raise
        :class:`~pytest_ocrmetrics.engines.base.EngineOptionError` listing the valid ones."""
        spec = self.get(name)
        unknown = [key for key in options if key not in spec.options]
        if unknown:
            keys = [f"{name}.{key}" for key in sorted(spec.options)]
            valid = ", ".join(keys) or "none (this engine has no settings)"
            raise EngineOptionError(
                f"unknown setting {name}.{unknown[0]}{did_you_mean(unknown[0], spec.options, prefix=name + '.')}; "
                f"valid settings of engine {name!r}: {valid}"
            )
        return spec

    def check(self, engine_arg: str, options: Mapping[str, str] | None = None) -> EngineSpec:
        """Check what the user typed (``replay:DIR``) and the engine's settings without creating the engine.

        Unknown names and setting keys, and whatever the spec's ``check`` refuses (a bad value, a missing required
        setting, a missing folder), raise :class:`~pytest_ocrmetrics.engines.base.EngineOptionError`: cheap enough
        for startup, so these are one usage error instead of an error in every test. A missing binary or package
        is not checked here (creating the engine finds it, and its tests are skipped).
        """
        name, arg = split_engine_arg(engine_arg)
        options = dict(options or {})
        spec = self.check_options(name, options)
        if spec.check is not None:
            spec.check(arg, options)
        return spec

    def create(self, engine_arg: str, options: Mapping[str, str] | None = None) -> OcrEngine:
        """Build the engine for what the user typed: ``tesseract``, ``replay:DIR`` (the part after the first ``:``
        goes to the factory as ``arg``).

        ``options`` are this engine's settings (``{"lang": "deu"}``), checked against the spec's keys first. The
        factory may raise :class:`~pytest_ocrmetrics.engines.base.EngineUnavailable` (missing binary or package) or
        :class:`~pytest_ocrmetrics.engines.base.EngineOptionError` (bad value).
        """
        name, arg = split_engine_arg(engine_arg)
        options = dict(options or {})
        spec = self.check_options(name, options)
        return spec.factory(arg, options)


def _describe(spec: EngineSpec) -> str:
    factory = spec.factory
    return f"factory {getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"


def _origin(entry_point: metadata.EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    where = f"{entry_point.value}"
    if dist is not None:
        where += f" in distribution {dist.metadata['Name']} {dist.version}"
    return where


def builtin_engines() -> list[EngineSpec]:
    """The specs of the built-in engines (their modules import no heavy library at import time)."""
    return [getattr(import_module(module), attribute) for module, attribute in _BUILTINS.values()]


def default_registry(*, entry_points: bool = True) -> EngineRegistry:
    """A fresh registry with the built-in engines and (unless ``entry_points=False``) installed entry points.

    The built-ins are registered by name: each one's module is imported when the engine is looked up
    (:meth:`EngineRegistry.get`, hence ``check`` and ``create``), or when another spec is registered under its name
    (to refuse it, as for any taken name, unless ``replace=True``)."""
    registry = EngineRegistry()
    for name, (module, attribute) in _BUILTINS.items():
        registry._register_builtin(name, module, attribute)
    if entry_points:
        registry.load_entry_points()
    return registry
