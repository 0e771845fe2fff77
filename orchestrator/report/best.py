"""Which device is best at a figure, and when none is (pure).

A device is marked best only when its 95% interval is clear of every other device's (the speed-up's
interval is the paired test against the baseline, report/paired.py): a higher median on overlapping
intervals is no reason to pick a device. When the leader's interval overlaps others', the leader
and the devices it overlaps are "tied". A device that did not run every sample (interrupted, failed
part-way) is never marked and not ranked: its figures are over a different sample mix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BEST = "best"
TIED = "tied"


@dataclass(frozen=True)
class Entry:
    """One device's figure: its value as a number, its 95% interval and the text as shown."""

    value: float | None
    interval: tuple[float, float] | None
    shown: str
    eligible: bool  # ran every sample and did not fail: may be marked


def _span(e: Entry) -> tuple[float, float]:
    """The interval, or the value alone when the device has none (one sample)."""
    return e.interval if e.interval is not None else (e.value or 0.0, e.value or 0.0)


def marks(entries: Sequence[Entry], higher_is_better: bool) -> list[str]:
    """BEST, TIED or "" per entry. Nothing is marked when fewer than two devices have the figure,
    when every device shows the same value, or when the leader has no interval."""
    out = [""] * len(entries)
    have = [i for i, e in enumerate(entries) if e.value is not None]
    if len(have) < 2 or len({entries[i].shown for i in have}) < 2:
        return out
    candidates = [i for i in have if entries[i].eligible]
    if not candidates:
        return out
    sign = 1.0 if higher_is_better else -1.0
    lead = max(candidates, key=lambda i: sign * entries[i].value)  # type: ignore[operator]
    if entries[lead].interval is None:
        return out
    lo, hi = _span(entries[lead])
    overlapping = []
    for i in candidates:
        if i == lead:
            continue
        olo, ohi = _span(entries[i])
        clear = lo > ohi if higher_is_better else hi < olo
        if not clear:
            overlapping.append(i)
    if not overlapping:
        out[lead] = BEST
        return out
    for i in [lead, *overlapping]:
        out[i] = TIED
    return out
