"""Two runs side by side (B against A), device by device, on the samples both ran: a record (pure).

Each device of both runs is paired with itself (report/paired.py): its verdict flips with an exact
McNemar test, and its figures as paired ratios B/A with a bootstrap interval. A change is named only
when the test rejects / the interval excludes 1 (and the ratio is past the noise threshold), never
for any 5% move: two runs with identical settings moved TTFT p50 by 48.7%. The runs must share their
model, dataset slice and settings (settings.py) unless --allow-different. A run that is not whole (a
device failed, was interrupted or never wrote its outcome) is refused as an incomplete run naming
what is missing, even with --allow-different: its absent rows would read as a setting that differs or
as "no significant difference" on nothing. No device gets a verdict on 0 common samples. A run is
never compared with itself (the same folder, or a copy: the same run id): every ratio would be 1.00
and say nothing. Versions that differ between the runs (edgefarm, the runtime, Python) are named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from android_runner.backend import BACKEND_UNAVAILABLE_KINDS

from ..devices.units import split_unit
from ..errors import ConfigError
from ..stats import ALPHA
from ..telemetry.conditions import findings
from .facts import run_conditions
from .fidelity import device_fidelity
from .paired import flips_text, pair, ratio_text
from .settings import require_same, shared
from .types.device_row import DeviceRow
from .types.fidelity import DeviceFidelity
from .types.paired import Paired, PairedFigure
from .types.run_report import RunReport
from .types.sample_row import SampleRow


@dataclass(frozen=True)
class DeviceDelta:
    device: str
    paired: Paired  # A = this device in run A, B = in run B
    pass_a: float | None  # pass rate (%) over the common scored samples
    pass_b: float | None
    to_fail: tuple[str, ...]  # passed in A, fail in B
    to_pass: tuple[str, ...]
    # --fidelity in both runs: this device in B against itself in A (a runtime or driver update that
    # changes the arithmetic shows here); None when either run has no fidelity scores
    fidelity: DeviceFidelity | None = None

    @property
    def common(self) -> int:
        return self.paired.common

    @property
    def worse(self) -> int:
        """Significant changes for the worse (flips, figures): the table lists these devices first."""
        flips = self.paired.p_value < ALPHA and self.paired.a_only > self.paired.b_only
        return int(flips) + sum(
            1 for f in self.paired.figures if f.significant and (f.ratio > 1) != f.higher_is_better
        )

    def pass_text(self) -> str:
        a = "–" if self.pass_a is None else f"{self.pass_a:.1f}"
        b = "–" if self.pass_b is None else f"{self.pass_b:.1f}"
        return f"{a} → {b}; {flips_text(self.paired)}"

    def figure_text(self, field: str) -> str:
        f: PairedFigure | None = self.paired.figure(field)
        return "–" if f is None else ratio_text(f, "A", "B")


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    differences: tuple[str, ...]  # settings that differ (only with --allow-different)
    common_samples: int
    devices: tuple[DeviceDelta, ...]  # significant changes for the worse first
    only_a: tuple[str, ...] = ()  # devices in one run only
    only_b: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()  # what both runs share (token cap, threads, backend, runner, repeat)
    no_common: tuple[str, ...] = ()  # devices in both runs without a sample scored in both: not compared
    versions: tuple[str, ...] = ()  # `edgefarm 0.4.0 in A, 9.9.9 in B`: what the runs were made with differs
    # conditions that differed between the runs or were bad during one (telemetry/conditions.py rules)
    conditions: tuple[str, ...] = ()


def missing(r: RunReport) -> list[str]:
    """What a run lacks to be whole, one line per device ([] when every device ran every sample)."""
    ids = r.run.get("dataset", {}).get("sample_ids") if isinstance(r.run.get("dataset"), dict) else None
    expected = len(ids) if isinstance(ids, list) else None
    out = [] if r.devices else ["no device recorded in run.json"]
    for d in r.devices:
        if not_available(d):
            continue  # a matrix cell whose backend the device does not have: no resume finishes it
        short = expected is not None and d.samples < expected
        cause = d.error.splitlines()[0][:200] if d.error else ""
        if short or (expected is None and cause):
            have = f"{d.samples} of {expected} samples" if expected is not None else f"{d.samples} samples"
            out.append(f"{d.device}: {have}" + (f" ({cause})" if cause else ""))
    return out


def not_available(d: DeviceRow) -> bool:
    """A backend matrix's unit that did not run because its device does not have the backend (docs/matrix.md):
    the matrix says so in its cell; compare leaves it out instead of calling the run incomplete."""
    return bool(split_unit(d.device)[1]) and not d.samples and any(k in d.error for k in BACKEND_UNAVAILABLE_KINDS)


def require_complete(reports: Sequence[RunReport], command: str, folders: Sequence[str] = ()) -> None:
    """A ConfigError naming each run that is not whole and what it lacks (`folders`: the runs' paths,
    for the fix)."""
    said, fixes = [], []
    for n, r in enumerate(reports):
        if lacks := missing(r):
            said.append(f"incomplete run {r.run_id}: " + "; ".join(lacks))
            fixes.append(f"`edgefarm run --resume {folders[n] if n < len(folders) else 'runs/' + r.run_id}`")
    if said:
        raise ConfigError(
            " / ".join(said),
            where=command,
            fix=f"finish it with {' and '.join(fixes)}, or compare runs whose devices ran every sample; an "
            "incomplete run is never compared, not even with --allow-different",
        )


def require_two_runs(a: RunReport, b: RunReport, folders: Sequence[str] = ()) -> None:
    """A ConfigError when A and B are one run (the same run id: the same folder twice, or a copy)."""
    if a.run_id != b.run_id:
        return
    shown = " and ".join(folders) if len(set(folders)) > 1 else (folders[0] if folders else a.run_id)
    raise ConfigError(
        f"A and B are the same run ({a.run_id}): a run compared with itself gives 1.00 on every figure and "
        "tells nothing",
        where=f"edgefarm compare {shown}",
        fix="compare two different runs (re-run with the same flags for B), or measure A and B interleaved "
        "with `edgefarm ab`",
    )


def version_differences(a: RunReport, b: RunReport) -> list[str]:
    """`edgefarm 0.4.0 in A, 9.9.9 in B` for each package version (run.json `versions`) the runs differ in."""
    va, vb = a.stamp.versions, b.stamp.versions
    return [
        f"{k} {va.get(k) or 'not recorded'} in {a.run_id}, {vb.get(k) or 'not recorded'} in {b.run_id}"
        for k in dict.fromkeys([*va, *vb])
        if va.get(k) != vb.get(k)
    ]


def condition_findings(a: RunReport, b: RunReport) -> list[str]:
    """The conditions that differed between the runs, then what was bad during each (a loaded host, a
    device that started hot or throttled), by telemetry/conditions.py's rules."""
    return findings(run_conditions(a), run_conditions(b), (a.run_id, b.run_id))


def compare_runs(
    a: RunReport, b: RunReport, allow_different: bool = False, folders: Sequence[str] = ()
) -> Comparison:
    """B against A; `folders`: the two runs' paths, named in the fix when one is incomplete."""
    require_two_runs(a, b, folders)
    require_complete([a, b], "edgefarm compare", folders)
    diffs = require_same([a, b], "edgefarm compare", allow_different)
    ids_b = {s.id for s in b.samples}
    order = [s.id for s in a.samples if s.id in ids_b]
    names_a, names_b = [r.device for r in a.devices], [r.device for r in b.devices]
    rows = []
    for name in [n for n in names_a if n in names_b]:
        ca = {s.id: s.cells[name] for s in a.samples if name in s.cells and s.id in ids_b}
        cb = {s.id: s.cells[name] for s in b.samples if name in s.cells and s.id in ca}
        ca = {i: c for i, c in ca.items() if i in cb}
        p = pair(name, name, ca, cb)
        scored = [i for i in order if i in ca and ca[i].passed is not None and cb[i].passed is not None]
        to_fail = tuple(i for i in scored if ca[i].passed and not cb[i].passed)
        to_pass = tuple(i for i in scored if cb[i].passed and not ca[i].passed)

        def rate(cells, ids=scored):
            return round(100.0 * sum(bool(cells[i].passed) for i in ids) / len(ids), 1) if ids else None

        both = a.fidelity is not None and b.fidelity is not None
        fid = (
            device_fidelity("B", "A", [SampleRow(i, "", "", {"A": ca[i], "B": cb[i]}) for i in ca])
            if both
            else None
        )
        rows.append(DeviceDelta(name, p, rate(ca), rate(cb), to_fail, to_pass, fid))
    if not order or not any(d.common for d in rows):
        raise ConfigError(
            f"runs {a.run_id} and {b.run_id} have no sample in common on any device: there is nothing to compare",
            where="edgefarm compare",
            fix="compare runs made over the same samples (the same --limit / --modality selection) on the same "
            "devices",
        )
    none = tuple(d.device for d in rows if not d.common)
    rows = [d for d in rows if d.common]  # never a verdict on nothing
    rows.sort(key=lambda d: -d.worse)
    return Comparison(a.run_id, b.run_id, tuple(diffs), len(order), tuple(rows),
                      tuple(n for n in names_a if n not in names_b), tuple(n for n in names_b if n not in names_a),
                      tuple(shared([a, b])), none, tuple(version_differences(a, b)),
                      tuple(condition_findings(a, b)))  # fmt: skip


def comparison_lines(c: Comparison) -> Sequence[str]:
    """The flips and the devices in one run only, as plain lines (after the table)."""
    out = []
    for d in c.devices:
        if d.to_fail:
            out.append(
                f"{d.device}: {len(d.to_fail)} sample(s) passed in A and fail in B: {', '.join(d.to_fail)}"
            )
        if d.to_pass:
            out.append(
                f"{d.device}: {len(d.to_pass)} sample(s) failed in A and pass in B: {', '.join(d.to_pass)}"
            )
    for d in c.devices:
        f = d.fidelity
        if f is not None:
            said = f.verdict or f"— {f.reason}"
            figure = (
                ""
                if f.mean_abs_dlogp is None
                else f": mean |Δ log p| {f.mean_abs_dlogp:.4g}, max {f.max_abs_dlogp:.4g}"
            )
            worst = f" (largest: {', '.join(f.worst)})" if f.worst and f.max_abs_dlogp else ""
            out.append(f"{d.device}: fidelity B against A on {f.scored} sample(s){figure}: {said}{worst}")
    if c.only_a:
        out.append(f"only in {c.run_a}: {', '.join(c.only_a)}")
    if c.only_b:
        out.append(f"only in {c.run_b}: {', '.join(c.only_b)}")
    if c.no_common:
        out.append(f"not compared (no sample in common): {', '.join(c.no_common)}")
    return out
