"""What a resumed device's job holds and how much of a job is finished, in the unit it counts
(measure.expand_resumed, measure.Tally): what an interrupted run says and its resume does (issue 41)."""

from __future__ import annotations

from android_runner.contract import SampleResult
from orchestrator.datasets.types import Sample
from orchestrator.measure import Tally, base_id, describe, expand, expand_resumed, measured_count, split


def _samples(n: int) -> list[Sample]:
    return [
        Sample(id=f"T{i}", modality="text", task="qa", turns=(), reference="", references=())
        for i in range(n)
    ]


def test_a_resumed_job_keeps_every_pass_and_warms_up_again_after_the_earlier_warmups():
    samples = _samples(2)
    first = [s.id for s in expand(samples, repeat=3, warmup=2)]
    finished = set(first[:4])  # both warm-ups, T0 and T1 of pass 1
    job = [s.id for s in expand_resumed(samples, 3, 2, 1, finished)]
    assert job == ["T0@warmup1", "T1@warmup2", "T0@warmup3", "T1@warmup4", "T0", "T1", "T0@r2", "T1@r2",
                   "T0@r3", "T1@r3"]  # fmt: skip
    left = [i for i in job if i not in finished]
    assert left == ["T0@warmup3", "T1@warmup4", "T0@r2", "T1@r2", "T0@r3", "T1@r3"]


def test_a_resumed_job_with_nothing_left_makes_no_new_warmups():
    samples = _samples(2)
    finished = {s.id for s in expand(samples, repeat=2, warmup=1)}
    job = expand_resumed(samples, 2, 1, 1, finished)
    assert all(s.id in finished for s in job) and len(job) == len(finished)


def test_a_tally_counts_runs_under_repeat_and_samples_without():
    samples = _samples(20)
    done = {s.id for s in expand(samples, repeat=1000)[:20]}  # the first pass: 20 runs of 20,000
    t = Tally.of(samples, 1000, 1, done)
    assert (t.asked, t.done, t.left, t.complete, t.unit) == (20_000, 20, 19_980, 0, "runs")
    assert t.text() == "20 of 20,000 runs (20 samples x 1000 runs; 0 samples have all 1000)"
    plain = Tally.of(samples, 1, 1, {"T0", "T1", "T0@warmup1"})
    assert (plain.text(), plain.unit, plain.warmups) == ("2 of 20 samples", "samples", 1)


def test_a_tally_under_sustain_counts_each_pass():
    samples = _samples(3)
    done = {s.id for s in expand(samples, sustain=2)[:4]}
    t = Tally.of(samples, 1, 2, done)
    assert (t.asked, t.done, t.complete) == (6, 4, 1)


def test_the_report_says_how_many_of_the_asked_runs_its_figures_are_over():
    """An interrupted --repeat 1000 run: its figures are over the runs it has, and the report says so
    (it said "figures over 20000 runs" after 305)."""
    assert describe(20, 1000, 0, runs=305) == "305 of 20000 runs: 20 samples x 1000 (first run scored)"
    assert describe(20, 1000, 0, runs=20_000) == "20000 runs: 20 samples x 1000 (first run scored)"
    assert describe(6, 1, 0, sustain=2, runs=9).startswith("9 of 12 runs: 6 samples x 2 back-to-back passes")
    assert describe(6, 1, 0) == ""


def test_expand_puts_warmups_first_then_passes_and_split_takes_them_apart():
    samples = _samples(3)
    job = expand(samples, repeat=2, warmup=4)
    ids = [s.id for s in job]
    assert ids == [
        "T0@warmup1",
        "T1@warmup2",
        "T2@warmup3",
        "T0@warmup4",
        "T0",
        "T1",
        "T2",
        "T0@r2",
        "T1@r2",
        "T2@r2",
    ]
    assert len(job) == measured_count(3, 2, 4)
    rows = [SampleResult(id=i, status="ok") for i in reversed(ids)]
    first, repeats, warm = split(samples, rows)
    assert [r.id for r in first] == ["T0", "T1", "T2"]
    assert sorted(r.id for r in repeats) == ["T0@r2", "T1@r2", "T2@r2"]
    assert sorted(r.id for r in warm) == ["T0@warmup1", "T0@warmup4", "T1@warmup2", "T2@warmup3"]
    assert base_id("T1@r2") == "T1" and base_id("T0@warmup4") == "T0" and base_id("a@rb") == "a@rb"
    assert expand(samples) == tuple(samples) and describe(3, 1, 0) == ""
    assert describe(3, 2, 4) == "6 runs: 3 samples x 2 (first run scored); 4 warm-up run(s) not counted"
