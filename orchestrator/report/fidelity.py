"""--fidelity: is each device computing the same model as the reference device? (pure; docs/fidelity.md)

Every device scored the same reference answers teacher-forced from the same prompts (the runtime's
per-token log-likelihoods, android_runner/fidelity.py) and tokenized its greedy answers. Against the
reference device (--reference, else the first CPU device), per device:
- |Δ log p| per token of the references: the mean over all tokens and the max, each with a 95%
  cluster-bootstrap interval over samples (a sample's tokens are resampled together);
- the share of samples whose greedy answers are token-identical (Wilson interval) and the median
  position of the first differing token among the others;
- a verdict against the noise thresholds below, naming the samples with the largest departures.
A device or runner that could not score says why; no figure is ever a silent zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from android_runner.contract import FidelityScores

from ..stats import bootstrap_ci_groups, maximum, mean, quantile, wilson_interval
from .types.device_row import DeviceRow
from .types.fidelity import DeviceFidelity, FidelityReport, FidelitySample
from .types.sample_row import SampleRow

# What kernels that compute the SAME model legitimately change (docs/fidelity.md gives the reasoning):
# fp16 activations and accumulation (GPU delegates) and int8 dynamic-range activations (XNNPACK) move a
# token's log-probability by a few hundredths of a nat on average; a backend that computes something
# else (a wrong kernel, a broken driver) moves it by tenths to whole nats.
MEAN_NOISE_NATS = 0.1  # mean |Δ log p| per token: "same" needs the interval's top at or under this
MAX_NOISE_NATS = 1.0  # max |Δ log p|: any token beyond this is a departure no rounding explains
WORST_SHOWN = 3
SAME = "same model within float noise"
DIFFERENT = "computes differently"
UNDECIDED = "undecided: the interval straddles the noise threshold (score more samples)"
NONE = "—"


def default_reference(rows: Sequence[DeviceRow]) -> str:
    """The first device that ran on the CPU (its arithmetic is the plainest), else the first device."""
    cpu = [r.device for r in rows if r.backend.split(",") == ["cpu"]]
    return cpu[0] if cpu else (rows[0].device if rows else "")


def _first_diff(a: FidelityScores, b: FidelityScores) -> int | None:
    """The first token position where two greedy answers differ; None when identical."""
    if a.answer_ids == b.answer_ids and a.answer_tokens == b.answer_tokens:
        return None
    for i, (x, y) in enumerate(zip(a.answer_ids, b.answer_ids, strict=False)):
        if x != y:
            return i
    return min(len(a.answer_ids), len(b.answer_ids))


def _tokenized(f: FidelityScores | None) -> bool:
    return f is not None and f.answer_tokens is not None


def compare_sample(sample_id: str, ref: FidelityScores | None, dev: FidelityScores | None) -> FidelitySample:
    """One sample: the per-token departures of the device's scores from the reference's, the answers."""
    compared = _tokenized(ref) and _tokenized(dev)
    first = _first_diff(ref, dev) if compared else None
    if ref is None or dev is None or not ref.logp or not dev.logp:
        return FidelitySample(sample_id, 0, None, None, None, first, compared)
    if ref.target_tokens != dev.target_tokens or len(ref.logp) != len(dev.logp):
        note = (
            f"the reference answer is {dev.target_tokens} tokens here, {ref.target_tokens} on the reference"
        )
        return FidelitySample(sample_id, 0, None, None, None, first, compared, note)
    d = [abs(x - y) for x, y in zip(ref.logp, dev.logp, strict=True)]
    worst = max(range(len(d)), key=d.__getitem__)
    return FidelitySample(sample_id, len(d), sum(d) / len(d), d[worst], worst, first, compared)


def _why_none(cells: Sequence[FidelityScores | None], runner: str) -> str:
    """Why a device has no score at all: its rows' own reasons, most common first."""
    if all(c is None for c in cells):
        return f"the {runner or 'device'} runner returned no scores (it cannot run the scoring pass)"
    reasons = Counter(c.unscored.splitlines()[0][:160] for c in cells if c is not None and c.unscored)
    if not reasons:
        return "no sample of this run could be scored"
    return "; ".join(f"{why} ({n})" for why, n in reasons.most_common(3))


def _verdict(mean_ci: tuple[float, float] | None, mean_v: float, max_v: float, mismatched: int) -> str:
    if mismatched or max_v > MAX_NOISE_NATS or (mean_ci[0] if mean_ci else mean_v) > MEAN_NOISE_NATS:
        return DIFFERENT
    if (mean_ci[1] if mean_ci else mean_v) <= MEAN_NOISE_NATS:
        return SAME
    return UNDECIDED


def device_fidelity(
    device: str, reference: str, samples: Sequence[SampleRow], runner: str = ""
) -> DeviceFidelity:
    pairs = [(s.id, s.cells.get(reference), s.cells.get(device)) for s in samples]
    pairs = [(i, r.fidelity, d.fidelity) for i, r, d in pairs if r is not None and d is not None]
    compared = [compare_sample(i, r, d) for i, r, d in pairs]
    scored = [c for c in compared if c.tokens]
    mismatched = tuple(c.id for c in compared if c.note)
    answers = [c for c in compared if c.answers_compared]
    differ = [c.first_diff for c in answers if c.first_diff is not None]
    identical = len(answers) - len(differ)
    intervals: dict[str, tuple[float, float]] = {}
    if answers and (w := wilson_interval(identical, len(answers))) is not None:
        intervals["identical_pct"] = (round(100 * w[0], 1), round(100 * w[1], 1))
    common = {
        "device": device, "reference": reference, "answers_compared": len(answers), "answers_identical": identical,
        "first_diff_median": quantile([float(x) for x in differ], 0.5), "mismatched": mismatched,
        "samples": tuple(compared), "intervals": intervals,
    }  # fmt: skip
    if device == reference:  # itself: what it scored, nothing to compare
        common.update(answers_compared=0, answers_identical=0, first_diff_median=None, intervals={})
        return DeviceFidelity(
            scored=len(scored), tokens=sum(c.tokens for c in scored), reason="reference", **common
        )
    if not scored:
        own, theirs = [d for _, _, d in pairs], [r for _, r, _ in pairs]
        if any(r is not None and r.logp for r in theirs) or not own:
            reason = _why_none(own, runner)
        else:
            reason = f"the reference device {reference} scored nothing: {_why_none(theirs, 'reference')}"
        if mismatched:
            reason = f"every sample's reference has another token count here ({len(mismatched)})"
        verdict = DIFFERENT if mismatched else ""
        return DeviceFidelity(scored=0, tokens=0, verdict=verdict, reason=reason, **common)
    groups = [[abs(x - y) for x, y in zip(r.logp, d.logp, strict=True)] for i, r, d in pairs
              if any(c.id == i and c.tokens for c in scored)]  # fmt: skip
    flat = [x for g in groups for x in g]
    mean_v, max_v = sum(flat) / len(flat), max(flat)
    for name, stat in (("mean_abs_dlogp", mean), ("max_abs_dlogp", maximum)):
        ci = bootstrap_ci_groups(groups, stat)
        if ci is not None:
            intervals[name] = ci
    worst = tuple(c.id for c in sorted(scored, key=lambda c: -(c.max_abs_dlogp or 0.0))[:WORST_SHOWN])
    return DeviceFidelity(
        scored=len(scored), tokens=len(flat), mean_abs_dlogp=mean_v, max_abs_dlogp=max_v,
        verdict=_verdict(intervals.get("mean_abs_dlogp"), mean_v, max_v, len(mismatched)),
        worst=worst if max_v > 0 else (), **common,
    )  # fmt: skip


def fidelity_report(
    rows: Sequence[DeviceRow], samples: Sequence[SampleRow], reference: str = ""
) -> FidelityReport | None:
    """None when no row of the run carries fidelity (the run was not asked for it)."""
    if not any(c.fidelity is not None for s in samples for c in s.cells.values()):
        return None
    reference = reference or default_reference(rows)
    order = [reference] + [r.device for r in rows if r.device != reference]
    runner = {r.device: r.runner_kind for r in rows}
    return FidelityReport(
        reference=reference,
        devices=tuple(device_fidelity(d, reference, samples, runner.get(d, "")) for d in order),
        thresholds={"mean_abs_dlogp": MEAN_NOISE_NATS, "max_abs_dlogp": MAX_NOISE_NATS},
    )
