"""Reading engine settings: the ``ENGINE.KEY=VALUE`` strings every engine factory turns into typed values.

One function per kind of value, shared by every built-in engine, so a bad value gets the same kind of sentence from
each of them: the setting's full name, what it accepts and what it got. An empty value means the setting was not
given (its default).

>>> int_setting("tesseract", {"psm": "6"}, "psm", None, minimum=0, maximum=13)
6
>>> float_setting("rapidocr", {}, "text_score", 0.5, minimum=0, maximum=1)
0.5
>>> int_setting("tesseract", {"psm": "14"}, "psm", None, minimum=0, maximum=13)
Traceback (most recent call last):
pytest_ocrmetrics.engines.base.EngineOptionError: tesseract.psm must be a whole number 0..13, got '14'
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Mapping, TypeVar

from pytest_ocrmetrics.core.hints import did_you_mean
from pytest_ocrmetrics.engines.base import EngineOptionError

__all__ = [
    "did_you_mean",
    "normalise_settings",
    "int_setting",
    "float_setting",
    "bool_setting",
    "json_object_setting",
    "api_key_from_env",
]

_Default = TypeVar("_Default", int, float, bool, None)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def normalise_settings(engine: str, options: Mapping[str, str], allowed: Mapping[str, str]) -> dict[str, str]:
    """Strip an ``ENGINE.`` prefix from setting keys and reject unknown ones with the list of valid keys.

    >>> normalise_settings("openai", {"openai.model": "m"}, {"model": "..."})
    {'model': 'm'}
    """
    settings: dict[str, str] = {}
    for key, value in options.items():
        short = key[len(engine) + 1 :] if key.startswith(engine + ".") else key
        if short not in allowed:
            valid = ", ".join(f"{engine}.{k}" for k in sorted(allowed))
            raise EngineOptionError(f"unknown setting {engine}.{short}{did_you_mean(short, allowed, prefix=engine + '.')} for engine "
                                    f"{engine!r}; valid settings: {valid}")
        settings[short] = value
    return settings


def _given(settings: Mapping[str, str], key: str) -> str | None:
    value = settings.get(key)
    return value.strip() if value is not None and value.strip() else None


def _bounds(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" {minimum:g}..{maximum:g}"
    if minimum is not None:
        return f" >= {minimum:g}"
    if maximum is not None:
        return f" <= {maximum:g}"
    return ""


def _within(value: float, minimum: float | None, maximum: float | None) -> bool:
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def int_setting(
    engine: str,
    settings: Mapping[str, str],
    key: str,
    default: _Default,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | _Default:
    """A whole-number setting in ``minimum..maximum`` (either bound optional); ``default`` when not given."""
    text = _given(settings, key)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not _within(value, minimum, maximum):
        raise EngineOptionError(f"{engine}.{key} must be a whole number{_bounds(minimum, maximum)}, got {settings[key]!r}")
    return value


def float_setting(
    engine: str,
    settings: Mapping[str, str],
    key: str,
    default: _Default,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    positive: bool = False,
    unit: str = "",
) -> float | _Default:
    """A finite number setting in ``minimum..maximum`` (or > 0 with ``positive``); ``default`` when not given.

    ``unit`` names what the number counts in the error (``"seconds"``: "must be a number of seconds >= 0").
    """
    text = _given(settings, key)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    of_unit = f" of {unit}" if unit else ""
    if positive:
        expected, valid = f"a positive number{of_unit}", value > 0
    else:
        expected, valid = f"a number{of_unit}{_bounds(minimum, maximum)}", _within(value, minimum, maximum)
    if not valid or not math.isfinite(value):
        raise EngineOptionError(f"{engine}.{key} must be {expected}, got {settings[key]!r}")
    return value


def bool_setting(engine: str, settings: Mapping[str, str], key: str, default: bool) -> bool:
    """A yes/no setting (true/false, yes/no, on/off, 1/0, any case); ``default`` when not given."""
    text = _given(settings, key)
    if text is None:
        return default
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise EngineOptionError(f"{engine}.{key} must be true or false, got {settings[key]!r}")


def json_object_setting(engine: str, settings: Mapping[str, str], key: str) -> dict[str, Any]:
    """A JSON object setting (``{"top_k": 1}``); empty when not given."""
    text = _given(settings, key)
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineOptionError(f"{engine}.{key} must be a JSON object, got {settings[key]!r} ({exc})") from None
    if not isinstance(value, dict):
        raise EngineOptionError(f"{engine}.{key} must be a JSON object ({{...}}), got {settings[key]!r}")
    return value


def api_key_from_env(engine: str, env_name: str | None) -> str | None:
    """Read the API key from the environment variable ``env_name``; an error when it is named but not set."""
    if not env_name:
        return None
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env_name):
        raise EngineOptionError(
            f"{engine}.api_key_env must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself"
        )
    key = os.environ.get(env_name, "").strip()
    if not key:
        raise EngineOptionError(
            f"{engine}.api_key_env names the environment variable {env_name}, but it is not set; "
            f"export {env_name}=... or remove the setting for a server without authentication"
        )
    return key
