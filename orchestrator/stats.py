"""Intervals and paired tests for the report (pure; numpy draws the resamples; scipy's values are only
the tests' references, tests/unit/fixtures/stats_references.json).

- `bootstrap_ci`: percentile bootstrap of any statistic (a latency percentile, a mean) over the
  samples; `bootstrap_ci_groups` resamples whole groups (the repeats of one sample under --repeat),
  so repeats of one prompt are not counted as independent evidence.
- `wilson_interval`: a pass rate's interval (Wilson score; sane at 0 and 100% and small n, where
  the normal "Wald" interval collapses to zero width).
- `mcnemar_exact`: pass/fail flips of two devices (or runs) on the same samples; only the
  discordant pairs count (b: pass->fail, c: fail->pass); two-sided exact binomial p at 1/2.
- `paired_ratio_ci`: B against A on the same samples as the geometric mean of the per-sample ratios
  b_i/a_i with a bootstrap interval over the pairs: "1.00 (0.97-1.04)" holds 1, no difference.
- `median_order_ci`: the median's distribution-free interval from two order statistics (exact
  binomial coverage, no resampling), for many paired ratios (scripts/bench_vs_litert.py).

docs/run-directory.md says which interval each figure carries and why.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Protocol

import numpy as np

LEVEL = 0.95
N_BOOT = 2000
ALPHA = 0.05  # a paired test "rejects" (a significant difference) below this p
# Resamples are drawn as a (resamples x values) matrix in blocks of at most this many cells, so a
# device with 10,000 samples does not allocate 2000 x 10,000 floats at once.
BLOCK_CELLS = 1 << 20


class Stat(Protocol):
    """A statistic of a sample of values, also computed row by row over a matrix of resamples
    (NaN marks an empty cell where resampled groups differ in size)."""

    def __call__(self, values: Sequence[float]) -> float | None: ...

    def rows(self, m: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Percentile:
    """The q-th percentile (q in [0, 100]), linearly interpolated (numpy's default)."""

    q: float

    def __call__(self, values: Sequence[float]) -> float | None:
        return quantile(values, self.q / 100.0)

    def rows(self, m: np.ndarray) -> np.ndarray:
        return percentile_rows(m, self.q)

    def by_counts(self, xs: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The percentile of every resample of xs from how often each value is drawn in it (a row of
        `counts`), without building the resamples: a resample's j-th smallest value is the sorted value
        at which the running count of drawn values passes j. Bit for bit `rows` of the resamples."""
        order = np.argsort(xs, kind="stable")
        srt = xs[order]
        n, k = counts.shape
        # One running count over all the resamples (take: C order, fast): a resample draws k values, so
        # resample r's running counts are r * k + its own, and the whole is sorted: one binary search
        # per resample finds the first sorted value whose running count passes i, and j (n * k is at most
        # BLOCK_CELLS: counts are kept only that small, so the int32 count cannot overflow).
        cum = np.cumsum(np.take(counts, order, axis=1), dtype=counts.dtype)
        i, j, gamma = _linear_positions(np.array([k]), self.q)  # every resample is k long
        start = np.arange(n, dtype=counts.dtype) * k  # the keys in cum's own dtype: no cast of cum
        a = srt[np.searchsorted(cum, start + int(i[0]), side="right") - start]
        b = srt[np.searchsorted(cum, start + int(j[0]), side="right") - start]
        return _lerp(a, b, gamma[0])


@dataclass(frozen=True)
class Mean:
    def __call__(self, values: Sequence[float]) -> float | None:
        return sum(values) / len(values) if len(values) else None

    def rows(self, m: np.ndarray) -> np.ndarray:
        return np.nanmean(m, axis=1) if np.isnan(m).any() else m.mean(axis=1)


@dataclass(frozen=True)
class Max:
    def __call__(self, values: Sequence[float]) -> float | None:
        return max(values) if len(values) else None

    def rows(self, m: np.ndarray) -> np.ndarray:
        return np.nanmax(m, axis=1) if np.isnan(m).any() else m.max(axis=1)


mean = Mean()
maximum = Max()
median = Percentile(50.0)


def quantile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated quantile (numpy's default), q in [0, 1]; None for no values."""
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def percentile_rows(m: np.ndarray, q: float) -> np.ndarray:
    """The q-th percentile of each row of m, NaN cells left out (a row of NaN only: NaN): bit for bit
    `np.nanpercentile(m, q, axis=1)` (`np.percentile` when there is no NaN), by one sort of the rows.
    numpy partitions each row separately (and, with NaN, applies a Python function row by row): 6 ms
    for 2000 resamples of 200 values against 1 ms here."""
    srt = np.sort(m, axis=1)  # NaN sorts last
    count = srt.shape[1] - np.isnan(srt).sum(axis=1)
    i, j, gamma = _linear_positions(count, q)
    a = np.take_along_axis(srt, i[:, None], axis=1)[:, 0]
    b = np.take_along_axis(srt, j[:, None], axis=1)[:, 0]
    out = _lerp(a, b, gamma)
    out[count == 0] = np.nan
    return out


def _linear_positions(
    count: np.ndarray, q: float, scale: float = 100
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """numpy's "linear" percentile method (Hyndman & Fan 7) over sorted rows of `count` values each:
    the two neighbouring positions and the weight between them. q in percent (scale 1: a fraction,
    as np.quantile takes it)."""
    virtual = (count - 1) * np.true_divide(q, scale)
    prev = np.floor(virtual)
    last = np.maximum(count - 1, 0)
    top = virtual >= count - 1
    i = np.where(top, last, prev).astype(np.intp)
    j = np.where(top, last, prev + 1).astype(np.intp)
    return i, j, virtual - prev


def _lerp(a: np.ndarray, b: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """numpy's _lerp: from the nearer end, so the value is exact at both ends."""
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


def percentile_stat(q: float) -> Percentile:
    """The statistic 'q-th percentile' (q in [0, 100]) for bootstrap_ci."""
    return Percentile(float(q))


class Resamples:
    """The bootstrap's resamples (which rows each draws), drawn once per table shape and reused by
    every statistic over as many rows: a device's interval figures, every device's paired figures
    against the baseline. Each draw starts from `seed` as a fresh one would, so sharing changes no
    interval. Only draws of one block (BLOCK_CELLS) are kept; bigger ones are drawn per statistic."""

    def __init__(self, n: int = N_BOOT, seed: int = 0) -> None:
        self.n, self.seed = n, seed
        self._kept: dict[tuple[int, int], list[np.ndarray]] = {}
        self._counts: dict[int, np.ndarray] = {}

    def counts(self, k: int) -> np.ndarray | None:
        """(n x k): how often each of k values is drawn in each resample (the draws `indices` gives a
        table of one column), or None when those draws are too big to keep."""
        block = max(1, BLOCK_CELLS // k)
        if block < self.n:
            return None
        if k not in self._counts:
            (idx,) = self.indices(k, block)  # one block, kept
            flat = (idx + (np.arange(idx.shape[0]) * k)[:, None]).ravel()
            counted = np.bincount(flat, minlength=idx.size).reshape(idx.shape)
            self._counts[k] = counted.astype(np.int32)  # numpy sums int32 rows fastest
        return self._counts[k]

    def indices(self, k: int, block: int) -> Iterator[np.ndarray]:
        """Row indices into a table of k rows, `block` resamples at a time (n in all)."""
        key = (k, block)
        if key in self._kept:
            yield from self._kept[key]
            return
        rng = np.random.default_rng(self.seed)
        drawn = []
        for start in range(0, self.n, block):
            idx = rng.integers(0, k, size=(min(block, self.n - start), k))
            if block >= self.n and idx.size <= BLOCK_CELLS:
                drawn.append(idx)
            yield idx
        if drawn:
            self._kept[key] = drawn


def _resampled(table: np.ndarray, stat: Stat, draws: Resamples) -> np.ndarray:
    """`stat` of n resamples (with replacement) of the rows of `table` (one row a sample, or a group
    of a sample's runs padded with NaN), flattened per resample. Seeded: the same values give the
    same interval in every report."""
    k = table.shape[0]
    block = max(1, BLOCK_CELLS // max(1, table.size))
    out = [
        stat.rows(np.take(table, idx, axis=0).reshape(idx.shape[0], -1)) for idx in draws.indices(k, block)
    ]
    stats = np.concatenate(out)
    return stats[~np.isnan(stats)]


def _tails(stats: np.ndarray, level: float) -> tuple[float, float] | None:
    if stats.size == 0:
        return None
    a = (1.0 - level) / 2.0
    # np.quantile(stats, [a, 1 - a]) bit for bit, from one sort: numpy's own imports numpy.ma the
    # first time (10 - 20 ms) and costs more than the sort on every call
    srt = np.sort(stats)
    i, j, gamma = _linear_positions(np.array([stats.size, stats.size]), np.array([a, 1.0 - a]), scale=1)
    lo, hi = _lerp(srt[i], srt[j], gamma)
    return float(lo), float(hi)


def bootstrap_ci(
    values: Sequence[float],
    stat: Stat,
    *,
    n: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
    draws: Resamples | None = None,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of `stat` over `values`; None with fewer than 2 values (no
    spread to estimate). `draws`: resamples shared with other statistics (their n and seed count)."""
    xs = np.array([float(v) for v in values if v is not None and not math.isnan(v)])
    if xs.size < 2:
        return None
    draws = draws or Resamples(n, seed)
    if isinstance(stat, Percentile) and (counts := draws.counts(xs.size)) is not None:
        return _tails(stat.by_counts(xs, counts), level)
    return _tails(_resampled(xs.reshape(-1, 1), stat, draws), level)


def bootstrap_ci_groups(
    groups: Sequence[Sequence[float]],
    stat: Stat,
    *,
    n: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
    draws: Resamples | None = None,
) -> tuple[float, float] | None:
    """Cluster bootstrap: resample whole groups (a sample's first run and its --repeat runs) and
    apply `stat` to the values of the drawn groups; None with fewer than 2 non-empty groups."""
    gs = [[float(v) for v in g] for g in groups if g]
    if len(gs) < 2:
        return None
    table = np.full((len(gs), max(len(g) for g in gs)), np.nan)
    for i, g in enumerate(gs):
        table[i, : len(g)] = g
    return _tails(_resampled(table, stat, draws or Resamples(n, seed)), level)


def wilson_interval(k: int, n: int, level: float = LEVEL) -> tuple[float, float] | None:
    """Wilson score interval for k successes of n, as fractions in [0, 1]; None for n = 0."""
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"wilson_interval: k={k} not in 0..n={n}")
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: b, c the discordant pairs (pass->fail, fail->pass). Under
    no difference each discordant pair is a fair coin: p = P(Binomial(b+c, 1/2) as extreme), capped
    at 1. No discordant pair: p = 1 (nothing to reject)."""
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar_exact: negative count b={b} c={c}")
    m = b + c
    if m == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2.0**m
    return min(1.0, 2.0 * tail)


def paired_difference_ci(b: int, c: int, n: int, level: float = LEVEL) -> tuple[float, float] | None:
    """Interval of the paired difference of two pass rates on the same n samples, (c - b) / n with b the
    pass->fail and c the fail->pass samples (Wald's, with its paired variance; fractions in [-1, 1]);
    None for n = 0. The test of it is mcnemar_exact(b, c); this only says how large it is."""
    if n <= 0:
        return None
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    d = (c - b) / n
    half = z * math.sqrt(max(0.0, (b + c) / n - d * d) / n)
    return max(-1.0, d - half), min(1.0, d + half)


def median_order_ci(values: Sequence[float], level: float = LEVEL) -> tuple[float, float] | None:
    """The median's interval [x_(k), x_(n+1-k)] of the sorted values, k the largest rank whose tail
    P(Binomial(n, 1/2) < k) is at most (1 - level) / 2: coverage at least `level` for any continuous
    distribution. None when n is too small for any k (n < 6 at 95%)."""
    xs = sorted(float(v) for v in values)
    n, half = len(xs), (1.0 - level) / 2.0
    k, tail = 0, 0
    while k < n // 2 and (tail + math.comb(n, k)) / 2.0**n <= half:  # tail: P(B < k) * 2^n
        tail += math.comb(n, k)
        k += 1
    return (xs[k - 1], xs[n - k]) if k else None


@dataclass(frozen=True)
class Ratio:
    """B/A on paired samples: the geometric mean of the per-sample ratios and its interval."""

    ratio: float
    lo: float | None
    hi: float | None
    pairs: int
    rounds: tuple[float, ...] = ()  # rounds_ratio_ci: each round's own ratio, in run order

    @property
    def significant(self) -> bool:
        """The interval excludes 1 (no interval: never significant)."""
        return self.lo is not None and self.hi is not None and (self.hi < 1.0 or self.lo > 1.0)


def _log_ratios(a: Sequence[float | None], b: Sequence[float | None], who: str) -> list[float]:
    """log(b[i]/a[i]) for each pair where both are there and > 0."""
    if len(a) != len(b):
        raise ValueError(f"{who}: {len(a)} values of A against {len(b)} of B")
    return [
        math.log(y / x)
        for x, y in zip(a, b, strict=True)
        if x is not None and y is not None and x > 0 and y > 0
    ]


def _geomean_ratio(logs: Sequence[float]) -> float | None:
    return math.exp(sum(logs) / len(logs)) if logs else None


def paired_ratio_ci(
    a: Sequence[float | None],
    b: Sequence[float | None],
    *,
    n: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
    draws: Resamples | None = None,
) -> Ratio | None:
    """B against A on the same samples (a[i] and b[i] are one sample): the geometric mean of b_i/a_i
    with a bootstrap interval over the pairs. Pairs where either value is missing or not > 0 are
    left out; None when no pair is left. One pair: the ratio without an interval."""
    logs = _log_ratios(a, b, "paired_ratio_ci")
    if not logs:
        return None
    est = _geomean_ratio(logs)
    assert est is not None
    ci = bootstrap_ci(logs, mean, n=n, seed=seed, level=level, draws=draws)
    if ci is None:
        return Ratio(est, None, None, len(logs))
    return Ratio(est, math.exp(ci[0]), math.exp(ci[1]), len(logs))


def rounds_ratio_ci(
    rounds: Sequence[tuple[Sequence[float | None], Sequence[float | None]]], level: float = 0.95
) -> Ratio | None:
    """B against A measured in rounds, each round A and B on the same samples in neighbouring blocks
    (`rounds`: per round, A's and B's values, a[i] and b[i] one sample). A round's ratio is the
    geometric mean of its samples' b/a; the ratio is the geometric mean of the rounds', and its interval
    Student's t over the rounds' log-ratios. The unit is the round, not the sample: the samples of one
    block share that block's load, so their ratios move together, and an interval over them (as
    paired_ratio_ci's) is too narrow as soon as the load differs between blocks. Rounds without a pair
    are left out; None when none is left; one round: its ratio without an interval. `level`: the
    interval's two-sided coverage."""
    per_round = []
    pairs = 0
    for a, b in rounds:
        logs = _log_ratios(a, b, "rounds_ratio_ci")
        if logs:
            per_round.append(sum(logs) / len(logs))
            pairs += len(logs)
    if not per_round:
        return None
    est = math.exp(sum(per_round) / len(per_round))
    each = tuple(math.exp(d) for d in per_round)
    ci = mean_t_interval(per_round, level)
    if ci is None:
        return Ratio(est, None, None, pairs, each)
    return Ratio(est, math.exp(ci[0]), math.exp(ci[1]), pairs, each)


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer `df` (Abramowitz & Stegun 26.7.3 and 26.7.4: exact finite
    sums in cos of theta = atan(t / sqrt(df)))."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:  # odd: (2 / pi) (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...)), last power df - 3
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    term, total = 1.0, 1.0  # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...), last power df - 2
    for k in range(1, df // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return math.sin(theta) * total


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: the t with P(T < t) = p (0.5 <= p < 1), `df` >= 1 degrees of freedom, to
    1e-9 (bisection on the exact distribution function)."""
    if df < 1:
        raise ValueError("t_quantile: at least one degree of freedom")
    if not 0.5 <= p < 1:
        raise ValueError(f"t_quantile: p must be in [0.5, 1), not {p}")
    want, lo, hi = 2 * p - 1, 0.0, 1.0
    while _t_two_sided(hi, df) < want:
        hi *= 2
    while hi - lo > 1e-9 * max(1.0, hi):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_two_sided(mid, df) < want else (lo, mid)
    return (lo + hi) / 2


def t_quantile_975(df: int) -> float:
    """Student's t 97.5% point (a two-sided 95% interval)."""
    return t_quantile(0.975, df)


def mean_t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """The `level` (two-sided) interval of a mean of a few repetitions (Student's t: a bootstrap of 5
    values is too narrow); None with fewer than 2 values."""
    xs = [float(v) for v in values]
    if len(xs) < 2:
        return None
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    half = t_quantile(1 - (1 - level) / 2, len(xs) - 1) * sd / math.sqrt(len(xs))
    return (m - half, m + half)
