"""An agent loads the scorer's libraries while the phone runs (remote_session.warm_scorer), so a
session's end does not pay for them in a fresh agent process: checked in a fresh interpreter, as an
agent is, on the bundled dataset (its scorer imports nltk only when it first scores)."""

from __future__ import annotations

import subprocess
import sys

from orchestrator.bundled import REPO_ROOT

CODE = """
import sys
from orchestrator.bundled import BUNDLED_DATASET
from orchestrator.cluster.remote_session import DeviceWork, warm_scorer
from orchestrator.datasets import load_dataset
ds = load_dataset(BUNDLED_DATASET)
work = DeviceWork("phone", ds, ds.samples[:2], None, None, None, None)
print("before", "nltk" in sys.modules)
warm_scorer(work)
print("after", "nltk" in sys.modules)
"""


def test_the_scorer_libraries_load_before_the_session_scores():
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    assert out.stdout.split() == ["before", "False", "after", "True"], out.stdout + out.stderr
