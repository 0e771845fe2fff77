"""One run's scored answers: each distinct (sample, answer) is scored once, whichever device gave it.

A sample's score is a pure function of the sample and the answer (docs/scoring.md). A farm of
identical phones decoding greedily gives the same answer to a sample on every phone, so a run of
N phones would otherwise score the same answers N times (the metrics, the strict check, the JSON
Schema or the tool call parsed again). `ScoredAnswers` keeps the scored row of each (sample id,
answer text) for ONE run: it is made by the run's execute stage (`RunScoring`, scoring/__init__.py)
and passed down to every device's scoring; it is never a module global, so nothing outlives the run.

Devices score in their own threads: a row is looked up and stored under a lock and scored outside
it (two threads scoring the same new answer at once both get the same row). On a cluster run the
controller scores every host's rows (cluster/farm.py); pickled, it is a new, empty one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .types import ScoredSample


class ScoredAnswers:
    """The scored rows of one run, by (sample id, answer text). Sample ids are unique in a run's
    dataset (the loader refuses duplicates), so the id stands for the sample."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], ScoredSample] = {}
        self._lock = threading.Lock()

    def row(self, sample_id: str, answer: str, score: Callable[[], ScoredSample]) -> ScoredSample:
        """The row scored for this answer to this sample; `score()` makes it the first time."""
        key = (sample_id, answer)
        with self._lock:
            found = self._rows.get(key)
        if found is None:
            found = score()
            with self._lock:
                found = self._rows.setdefault(key, found)
        return found

    def __len__(self) -> int:
        return len(self._rows)

    def __reduce__(self) -> tuple[type[ScoredAnswers], tuple[()]]:  # pickled: a new, empty one
        return (ScoredAnswers, ())
