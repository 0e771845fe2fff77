"""How long each block of `edgefarm ab` measures (pure): the run --repeat that makes every block
measure at least --block-s seconds, chosen from the uncounted warm-up blocks.

Why: a round's ratio is as noisy as the load its two blocks met, and a block that measures a fraction
of a second (8 samples of the tiny model: 0.05-0.4 s) meets whatever burst another job made in that
instant (docs/benchmarks/ab.md: on a busy host one pass per block left a round's ratio anywhere in
0.5-2, 40 passes a third of that spread). Running each sample several times in a block averages the
bursts over the block's measured time, at the cost of that time; a load that differs between blocks
for longer than a block only more rounds average (--resolve). On a phone, whose samples take seconds,
one pass is usually long enough and the repeat stays 1. The device whose pass is shortest sets the
repeat, so every device's blocks measure at least --block-s. A and B run the same
repeat, so their blocks are alike."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..report.ab import Block
from .bounds import FLAG_BOUNDS, MAX_RUNS_PER_DEVICE

DEFAULT_BLOCK_S = 2.0
MAX_BLOCK_S = 600.0  # ten minutes of measurement per block: 2 x 20 rounds of it is over 13 hours
MOST_REPEAT = int(next(b.most for b in FLAG_BOUNDS if b.flag == "--repeat"))


@dataclass(frozen=True)
class BlockLength:
    """The --repeat ab gives each block, and why: the shortest pass of the warm-up blocks."""

    repeat: int
    pass_s: float  # the shortest device's time for one pass over the samples (warm-up blocks)
    samples: int  # samples in that pass
    capped: str = ""  # why the repeat is short of --block-s ('' when it is not)

    def text(self, block_s: float) -> str:
        """`each block runs its 8 sample(s) 10 time(s) (--repeat 10): about 2.0 s per device, --block-s 2`."""
        head = (f"each block runs its {self.samples} sample(s) {self.repeat} time(s) (--repeat {self.repeat}): "
                f"about {self.repeat * self.pass_s:.1f} s per device by the warm-up blocks, --block-s {block_s:g}")  # fmt: skip
        return head + (f" ({self.capped})" if self.capped else "")


def pass_seconds(block: Block) -> tuple[float, int] | None:
    """The shortest device's time for one pass over its samples in `block` (the sum of their first
    runs' wall times) and its number of samples; None when no device timed any sample."""
    passes = []
    for runs in block.runs.values():
        walls = [rs[0].wall_ms for rs in runs.values() if rs and rs[0].status == "ok" and rs[0].wall_ms]
        if walls:
            passes.append((sum(walls) / 1000.0, len(runs)))
    return min(passes) if passes else None


def block_length(warmups: Sequence[Block], block_s: float) -> BlockLength | None:
    """The repeat that makes a block of every device measure at least `block_s` seconds, from the
    warm-up blocks (each configuration's); None when they timed nothing (every sample failed)."""
    found = [p for p in (pass_seconds(b) for b in warmups) if p is not None]
    if not found:
        return None
    pass_s, samples = min(found)
    want = max(1, math.ceil(block_s / pass_s))
    most = min(MOST_REPEAT, max(1, MAX_RUNS_PER_DEVICE // max(1, samples + 1)))
    capped = ""
    if want > most:
        capped = f"not the {want} runs --block-s asks: edgefarm run takes --repeat {most} at most for {samples} samples"
    return BlockLength(min(want, most), pass_s, samples, capped)
