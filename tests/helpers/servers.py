"""The fake OpenAI-compatible server of the engine and plugin tests, loaded by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def load_fake_server():  # by path, so it works under any --import-mode
    """tests/engines/fake_server.py as a module, loaded once (plugin tests use it too)."""
    name = "ocrmetrics_tests_fake_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent.parent / "engines" / "fake_server.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
