"""Fixtures of the plugin tests (the helpers they share live in tests/helpers/plugin.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.plugin import make_dataset


@pytest.fixture
def dataset(pytester: pytest.Pytester) -> Path:
    return make_dataset(pytester.path)
