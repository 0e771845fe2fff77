"""--fidelity on the host (report/fidelity.py): each device's per-token |Δ log p| against the reference
device, identical greedy answers, the verdict, and how every view shows it."""

from __future__ import annotations

import csv
import io
import json
import random

from android_runner.contract import FidelityScores, SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.fidelity import DIFFERENT, MEAN_NOISE_NATS, SAME, default_reference
from orchestrator.report.printers import PRINTERS

RUN = {"run_id": "r", "devices": [], "flags": {"fidelity": True}}
N, TOKENS = 20, 12


def _base(seed: int = 1) -> dict[str, list[float]]:
    rng = random.Random(seed)
    return {f"s{i}": [rng.uniform(-14.0, -0.5) for _ in range(TOKENS)] for i in range(N)}


def _rows(
    logp: dict[str, list[float]], noise: float = 0.0, answers=None, backend="cpu", seed=7, runner="python"
):
    rng = random.Random(seed)
    out = []
    for i, (sid, lp) in enumerate(logp.items()):
        ids = tuple(answers(i)) if answers else (5, 6, 7, 8)
        f = FidelityScores(logp=tuple(x + rng.gauss(0.0, noise) for x in lp) if noise else tuple(lp),
                           target_tokens=len(lp), answer_ids=ids, answer_tokens=len(ids), score_ms=3.0)  # fmt: skip
        out.append(
            SampleResult(
                id=sid, status="ok", output=f"answer {i}", backend=backend, runner=runner, fidelity=f
            )
        )
    return out


def _report(per: dict[str, list[SampleResult]], run=RUN):
    pairs = {n: (rows, None) for n, rows in per.items()}
    devices = [
        device_row(DeviceInfo.from_dict({"name": n}), DeviceOutcome(name=n, kind=""), r, None)
        for n, r in per.items()
    ]
    return build_report(RunJson.from_dict(run), devices, sample_rows(pairs))


def test_two_devices_on_the_same_library_differ_by_exactly_zero():
    logp = _base()
    fr = _report({"a": _rows(logp), "b": _rows(logp)}).fidelity
    b = fr.devices[1]
    assert (fr.reference, b.device, b.scored, b.tokens) == ("a", "b", N, N * TOKENS)
    assert b.mean_abs_dlogp == 0.0 and b.max_abs_dlogp == 0.0 and b.verdict == SAME
    assert b.answers_identical == b.answers_compared == N and b.first_diff_median is None and b.worst == ()


def test_noise_on_the_scores_is_found_at_the_size_injected():
    """Gaussian noise of sd 0.5 nats on every score: mean |Δ| is sd * sqrt(2/pi) ~ 0.40 (inside the
    interval), far above the threshold; the verdict names the samples with the largest departures."""
    logp = _base()
    fr = _report({"a": _rows(logp), "noisy": _rows(logp, noise=0.5)}).fidelity
    d = fr.devices[1]
    lo, hi = d.intervals["mean_abs_dlogp"]
    assert d.verdict == DIFFERENT and lo <= 0.5 * (2 / 3.14159) ** 0.5 <= hi and lo > MEAN_NOISE_NATS
    worst = max(d.samples, key=lambda c: c.max_abs_dlogp)
    assert d.worst[0] == worst.id and len(d.worst) == 3 and d.max_abs_dlogp == worst.max_abs_dlogp


def test_noise_far_below_the_threshold_is_not_flagged():
    logp = _base()
    d = _report({"a": _rows(logp), "quiet": _rows(logp, noise=1e-3)}).fidelity.devices[1]
    assert 0.0 < d.mean_abs_dlogp < 0.01 and d.verdict == SAME


def test_answers_are_compared_token_by_token_from_the_first_difference():
    logp = _base()
    ref = _rows(logp)
    dev = _rows(logp, answers=lambda i: (5, 6, 9, 8) if i % 2 else (5, 6, 7, 8))  # half depart at token 2
    d = _report({"a": ref, "b": dev}).fidelity.devices[1]
    assert (d.answers_compared, d.answers_identical, d.first_diff_median) == (N, N // 2, 2.0)
    lo, hi = d.intervals["identical_pct"]
    assert lo < d.identical_pct == 50.0 < hi


def test_another_token_count_computes_differently():
    logp = _base()
    short = {k: v[:-1] for k, v in logp.items()}
    d = _report({"a": _rows(logp), "b": _rows(short)}).fidelity.devices[1]
    assert d.verdict == DIFFERENT and d.scored == 0 and len(d.mismatched) == N and d.mean_abs_dlogp is None


def test_a_runner_that_cannot_score_says_so_never_a_zero():
    logp = _base()
    upstream = [SampleResult(id=r.id, status="ok", output="x", runner="upstream") for r in _rows(logp)]
    unscored = [SampleResult(id=r.id, status="ok", output="x", fidelity=FidelityScores(
        unscored="RuntimeError: litert_lm_session_run_text_scoring failed")) for r in _rows(logp)]  # fmt: skip
    report = _report({"a": _rows(logp), "up": upstream, "broken": unscored})
    up, broken = report.fidelity.devices[1:]
    assert up.mean_abs_dlogp is None and "runner returned no scores" in up.reason and up.verdict == ""
    assert "run_text_scoring failed (20)" in broken.reason and broken.mean_abs_dlogp is None
    md = PRINTERS.get("md")(report)
    assert "| up | 0 | 0 | — | — |" in md and "—: the " in md
    rows = list(csv.DictReader(io.StringIO(PRINTERS.get("csv")(report))))
    up_row = next(r for r in rows if r["device"] == "up")
    assert up_row["fidelity_mean_abs_dlogp"] == "" and "no scores" in up_row["fidelity_unscored"]
    a_row = next(r for r in rows if r["device"] == "a")
    assert a_row["fidelity_reference"] == "a" and a_row["fidelity_mean_abs_dlogp"] == "0.0"


def test_the_reference_is_the_first_cpu_device_unless_named():
    logp = _base()
    per = {"gpu-phone": _rows(logp, backend="gpu"), "cpu-phone": _rows(logp), "board": _rows(logp, noise=0.5)}
    report = _report(per)
    assert report.fidelity.reference == "cpu-phone" == default_reference(report.devices)
    named = _report(per, {**RUN, "flags": {"fidelity": True, "reference": "board"}})
    assert named.fidelity.reference == "board" and named.fidelity.devices[0].device == "board"


def test_every_view_shows_the_verdict_and_the_worst_samples_side_by_side():
    logp = _base()
    report = _report({"a": _rows(logp), "noisy": _rows(logp, noise=0.5)})
    md, html, term = (PRINTERS.get(f)(report) for f in ("md", "html", "term"))
    worst = report.fidelity.devices[1].worst
    for text in (md, html, term):
        assert (
            "Fidelity against a" in text and "computes differently" in text and "Largest departures" in text
        )
        assert worst[0] in text
    assert "Fidelity vs a" in md and "DIFFERS, mean" in md
    data = json.loads(PRINTERS.get("json")(report))
    assert data["fidelity"]["devices"][1]["verdict"] == DIFFERENT
    assert data["samples"][0]["cells"]["a"]["fidelity"]["logp"] == logp["s0"]


def test_a_run_without_fidelity_has_no_section():
    rows = [SampleResult(id="s0", status="ok", output="x")]
    report = _report({"a": rows, "b": rows}, {"run_id": "r", "devices": []})
    assert report.fidelity is None and "Fidelity" not in PRINTERS.get("md")(report)


def test_compare_measures_each_device_in_run_b_against_itself_in_run_a():
    from dataclasses import replace

    from orchestrator.report.compare import compare_runs, comparison_lines

    def scored(report):  # every cell passed (a scorer's verdict): compare pairs scored samples only
        cells = lambda s: {n: replace(c, passed=True) for n, c in s.cells.items()}
        return replace(report, samples=tuple(replace(s, cells=cells(s)) for s in report.samples))

    logp = _base()
    run = {**RUN, "model": {"sha256": "a" * 64}, "dataset": {"sha256": "b" * 64}}
    a = scored(_report({"phone": _rows(logp), "board": _rows(logp)}, {**run, "run_id": "A"}))
    b = scored(_report({"phone": _rows(logp, noise=0.5), "board": _rows(logp)}, {**run, "run_id": "B"}))
    c = compare_runs(a, b)
    by = {d.device: d.fidelity for d in c.devices}
    assert by["phone"].verdict == DIFFERENT and by["board"].verdict == SAME and by["board"].max_abs_dlogp == 0
    lines = "\n".join(comparison_lines(c))
    assert (
        "phone: fidelity B against A on 20 sample(s)" in lines and "computes differently (largest: " in lines
    )
