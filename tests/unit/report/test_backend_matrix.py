"""The backend matrix (report/matrix.py, pure): a GPU path that turns 20 of 60 verdicts is flagged every
time with those 20 samples listed; an unperturbed GPU path (the same verdicts, or rare flips both ways as
float noise gives) is never flagged over 10 seeded reruns; a unit that did not run is a cell with its
reason; a fallback is named; ★ only when the paired test separates."""

from __future__ import annotations

import random

from orchestrator.report.matrix import backend_matrix
from orchestrator.report.types.device_row import DeviceRow
from orchestrator.report.types.run_report import RunReport
from orchestrator.stats import paired_difference_ci

N = 60


def test_a_gpu_path_turning_20_of_60_is_flagged_with_every_flip_listed_on_every_seed(matrix_report):
    for seed in range(10):
        rng = random.Random(seed)
        cpu = [True] * N
        turned = set(rng.sample(range(N), 20))
        gpu = [i not in turned for i in range(N)]
        m = backend_matrix(matrix_report({"p@cpu": cpu, "p@gpu": gpu}))
        cell = m.cell("p", "gpu")
        assert cell.flagged and cell.p_value < 1e-5 and cell.diff_pts == -33.3
        assert {f.id for f in cell.flips} == {f"S{i:02d}" for i in turned}
        assert all(f.cpu_output == "right" and f.output == "drifted" for f in cell.flips)
        assert not m.cell("p", "cpu").flagged and m.cell("p", "cpu").against == ""


def test_an_unperturbed_gpu_path_is_never_flagged_over_10_seeded_reruns(matrix_report):
    false_flags = 0
    for seed in range(10):
        rng = random.Random(seed)
        cpu = [rng.random() < 0.7 for _ in range(N)]
        same = backend_matrix(matrix_report({"p@cpu": cpu, "p@gpu": list(cpu)})).cell("p", "gpu")
        assert same.p_value == 1.0 and same.flips == () and same.diff_pts == 0.0
        noisy = list(cpu)  # float noise: a near-tie decided the other way, as often one way as the other
        for i in rng.sample(range(N), 2):
            noisy[i] = not noisy[i]
        false_flags += backend_matrix(matrix_report({"p@cpu": cpu, "p@gpu": noisy})).cell("p", "gpu").flagged
    assert false_flags == 0


def test_a_backend_a_phone_cannot_run_is_its_cell_with_the_reason(matrix_report):
    err = (
        "s24@gpu (model m): the gpu backend is not available on this device (gpu_unavailable); the runtime "
        "said:\nFailed to initialize WebGPU environment: INTERNAL: No adapters found"
    )
    m = backend_matrix(matrix_report({"s24@cpu": [True] * N}, errors={"s24@gpu": err}))
    cell = m.cell("s24", "gpu")
    assert not cell.ran and cell.reason.startswith("gpu_unavailable: ") and m.not_run == (cell,)
    assert not cell.flagged and cell.p_value is None


def test_rows_that_ran_on_the_cpu_when_the_gpu_was_asked_are_a_fallback_not_a_gpu_cell(matrix_report):
    r = matrix_report({"p@cpu": [True] * N, "p@gpu": [True] * N})
    rows = tuple(row if row.device != "p@gpu" else DeviceRow(**{**row.__dict__, "backend": "cpu"})
                 for row in r.devices)  # fmt: skip
    cell = backend_matrix(RunReport(**{**r.__dict__, "devices": rows})).cell("p", "gpu")
    assert cell.ran and cell.reason == "backend_fallback: asked gpu, the runtime ran cpu"


def test_the_best_backend_is_starred_only_when_separated(matrix_report):
    cpu, gpu = [True] * N, [i >= 20 for i in range(N)]
    m = backend_matrix(matrix_report({"p@cpu": cpu, "p@gpu": gpu}))
    assert m.cell("p", "cpu").marks.get("pass_rate_pct") == "best" and not m.cell("p", "gpu").marks
    m = backend_matrix(matrix_report({"p@cpu": cpu, "p@gpu": list(cpu)}))
    assert not any(c.marks.get("pass_rate_pct") for c in m.cells)  # the same verdicts: nothing to star


def test_a_run_without_units_has_no_matrix_and_the_paired_interval_is_bounded(matrix_report, matrix_row):
    r = matrix_report({"p@cpu": [True] * N})
    assert (
        backend_matrix(RunReport(**{**r.__dict__, "devices": (matrix_row("plain", {}, backend="cpu"),)}))
        is None
    )
    lo, hi = paired_difference_ci(20, 0, 60)
    assert -0.46 < lo < hi < -0.2 and paired_difference_ci(0, 0, 0) is None


def test_the_matrix_of_4_phones_by_3_backends_fits_100_terminal_columns(wide_matrix_report):
    from orchestrator.report.matrix_views import cell_lines
    from orchestrator.report.terminal import to_text

    r = wide_matrix_report
    text = to_text(r, width=100)
    table = text.split("Backend matrix", 1)[1].split("Rows: devices", 1)[0]
    assert max(len(line) for line in table.splitlines()) <= 100
    for c in r.matrix.cells:  # every line of every cell shown whole (no ellipsis, no fold)
        for line in cell_lines(c):
            assert line in table, (c.unit, line)
    assert text.count("⚑ 20 verdict(s) differ") == 4 and "sm-s921b/npu did not run: npu_context_error" in text


def test_compare_leaves_out_a_cell_whose_backend_is_not_there_but_not_a_unit_that_stopped(matrix_report):
    from orchestrator.report.compare import missing

    err = "s24@gpu (model m): the gpu backend is not available on this device (gpu_unavailable); the runtime said: x"
    r = matrix_report({"s24@cpu": [True] * N}, errors={"s24@gpu": err, "s24@npu": "s24@npu: device lost"})
    assert missing(r) == ["s24@npu: 0 samples (s24@npu: device lost)"]


def test_a_unit_whose_every_row_is_the_runtimes_fallback_did_not_run_and_is_not_flagged(matrix_report):
    """The runners record a row that ran on another engine than asked as an error (lab: the x86 library's
    npu): not a flagged cell of wrong answers, a cell that did not run, saying it fell back."""
    r = matrix_report({"p@cpu": [True] * N, "p@npu": [False] * N})
    rows = tuple(
        row
        if row.device != "p@npu"
        else DeviceRow(**{**row.__dict__, "backend": "cpu", "status_counts": {"error": N}})
        for row in r.devices
    )
    cell = backend_matrix(RunReport(**{**r.__dict__, "devices": rows})).cell("p", "npu")
    assert not cell.ran and not cell.flagged and cell.flips == () and cell.p_value is None
    assert cell.reason == "backend_fallback: asked npu, the runtime ran cpu"


def test_a_units_row_says_the_backend_it_asked_not_the_runs_list(matrix_row):
    from orchestrator.farm.run_json import RunJson
    from orchestrator.report.combine import with_run_settings

    run = RunJson.from_dict({"run_id": "r", "flags": {"backend": "cpu,gpu"}})
    assert with_run_settings(matrix_row("p@gpu", {}, error="lost"), run).backend_requested == "gpu"
    assert with_run_settings(matrix_row("plain", {}, backend="cpu"), run).backend_requested == "cpu,gpu"
