"""Where the plugin keeps its state: the stash keys of the run and of each test, and the parameter that carries a
test function's document × engine.

Every pytest run imports this module (the plugin's hooks look up the keys to learn whether the run uses OCR), so it
imports nothing but pytest: the state's types live in :mod:`~pytest_ocrmetrics.plugin.state`, imported by an OCR run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_ocrmetrics.plugin.state import ItemState, PluginState

__all__ = ["CASE_ARG", "ITEM_STATE", "STATE", "active_state", "plugin_state"]

CASE_ARG = "_ocr_case"  # the parameter that carries a test function's OcrCase (or BrokenDataset)
STATE: pytest.StashKey[PluginState] = pytest.StashKey()  # config.stash: the run's state, once the run uses OCR
ITEM_STATE: pytest.StashKey[ItemState] = pytest.StashKey()  # item.stash: an OCR test's state until its teardown


def plugin_state(config: pytest.Config) -> PluginState:
    """The run's state, for code that runs only once the run uses OCR (the state exists).

    Args:
        config: the pytest config.

    Returns:
        The state in ``config.stash[STATE]``.
    """
    return config.stash[STATE]


def active_state(config: pytest.Config) -> PluginState | None:
    """The run's state, or None while the run uses no OCR feature (then the plugin's hooks have nothing to do).

    Args:
        config: the pytest config.

    Returns:
        The state in ``config.stash[STATE]``, or None.
    """
    return config.stash.get(STATE, None)
