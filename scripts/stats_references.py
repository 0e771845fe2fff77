#!/usr/bin/env python3
"""Reference values for tests/unit/test_stats.py, computed with scipy (an independent implementation).

    pip install 'scipy>=1.11,<2' && python scripts/stats_references.py

writes tests/unit/fixtures/stats_references.json. scipy is not a dependency of edgefarm or of its
test suite: installed beside nltk it is imported by nltk's package init (nltk.metrics.association),
which made every `edgefarm run` of the suite ~0.6-1 s slower, so its values are kept here instead.
The inputs are the tests' own (seeded `random`), so the file and the tests stay in step.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests/unit/fixtures/stats_references.json"
WILSON = [(0, 10), (1, 10), (5, 10), (10, 10), (3, 50), (17, 200), (199, 200)]
MCNEMAR = [(0, 0), (0, 1), (1, 0), (8, 0), (0, 8), (3, 5), (10, 2), (25, 40), (0, 100)]


def mean_sample() -> list[float]:
    rng = random.Random(7)
    return [rng.gauss(100.0, 15.0) for _ in range(200)]


def median_sample() -> list[float]:
    rng = random.Random(3)
    return [rng.lognormvariate(4.0, 0.5) for _ in range(150)]


def bootstrap(xs: list[float], stat) -> list[float]:
    from scipy import stats as scipy_stats

    ci = scipy_stats.bootstrap((xs,), stat, n_resamples=4000, method="percentile", random_state=0)
    return [float(ci.confidence_interval.low), float(ci.confidence_interval.high)]


def main() -> None:
    import numpy as np
    import scipy
    from scipy import stats as scipy_stats

    refs = {
        "scipy": scipy.__version__,
        "wilson": {
            f"{k}/{n}": list(map(float, scipy_stats.binomtest(k, n).proportion_ci(0.95, method="wilson")))
            for k, n in WILSON
        },
        "mcnemar": {
            f"{b},{c}": 1.0 if b + c == 0 else float(scipy_stats.binomtest(min(b, c), b + c, 0.5).pvalue)
            for b, c in MCNEMAR
        },
        "bootstrap_mean": bootstrap(mean_sample(), lambda a, axis: a.mean(axis=axis)),
        "bootstrap_median": bootstrap(median_sample(), lambda a, axis: np.median(a, axis=axis)),
        "gmean_3_1_quarter": float(scipy_stats.gmean([3.0, 1.0, 0.25])),
    }
    OUT.write_text(json.dumps(refs, indent=1) + "\n")
    print(f"wrote {OUT} (scipy {scipy.__version__})", file=sys.stderr)


if __name__ == "__main__":
    main()
