"""What ships with edgefarm and `edgefarm run` uses by default: the tiny model and the EdgeMMEval set.

Its own module, with nothing to import, so the command line can name its defaults without loading
the dataset formats or the model inspection.
"""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BUNDLED_MODEL = REPO_ROOT / "data" / "models" / "tiny-mm.litertlm"
BUNDLED_DATASET = REPO_ROOT / "data" / "edgemmeval"
