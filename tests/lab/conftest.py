"""Fixtures every lab suite shares: ONE Android device lab per test session, whichever suite asks."""

import pytest

from .adb.conftest import open_adb_lab
from .lmeval_client import lm_eval_target


@pytest.fixture(scope="session")
def adb_lab(tmp_path_factory):
    """Two farm hosts (adb servers) and three phones, for the whole test session (tests/lab/adb)."""
    yield from open_adb_lab(tmp_path_factory)


@pytest.fixture(scope="session")
def lm_eval_path():
    """lm-eval (the lmeval extra's release) in a folder of the lab cache, for lm-eval children only."""
    return lm_eval_target()
