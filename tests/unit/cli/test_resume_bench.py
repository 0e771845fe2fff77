"""`bench --resume` through the run's resume (cli/resume.py, issue 42): every field BenchRequest
records (its grid in run.json `bench.request`, --settle's in `bench.settle`, the cluster in
`bench.cluster`, the rest in `flags`) comes back from the run.json the bench's own plan writes; a typed
flag that differs is refused; each command resumes only its own kind of folder. The click contexts are
the real `edgefarm bench` and `edgefarm run` commands'."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.bench.plan import BenchRequest, plan_bench
from orchestrator.cli.bench import bench as bench_command
from orchestrator.cli.resume import resumed_params
from orchestrator.cli.run import run as run_command
from orchestrator.errors import ConfigError
from orchestrator.inventory import Selection
from orchestrator.models import ModelSummary

RUN_DIR = Path("/tmp/runs/20260101-000000-beef")
MODEL = ModelSummary(
    path=Path("/m/tiny.litertlm"),
    size_bytes=1,
    sha256="0" * 64,
    vision=False,
    audio=False,
    max_context_tokens=2048,
)


class _Dev:
    name, kind, backend, threads = "this-host", "local", "cpu", None


def _written(asked: BenchRequest) -> dict:
    """run.json as the bench writes it (its plan's record, the run's codec)."""
    plan = plan_bench(asked, MODEL, Selection((_Dev(),), (), ()), None)
    return plan.run_json(RUN_DIR.name, "2026-01-01T00:00:00+00:00", {}).to_dict()


def _resume(record: dict, *typed: str):
    ctx = bench_command.make_context("bench", ["--resume", str(RUN_DIR), *typed])
    return resumed_params(ctx, record, RUN_DIR, BenchRequest)


def test_every_recorded_bench_flag_comes_back_from_the_benchs_own_run_json():
    asked = BenchRequest(device_spec="local", inventory=Path("/inv/devices.yaml"), model=MODEL.path,
                         prompts="16,32", gens="0,8", depths="0-64+32", repetitions=7, threads="1,2",
                         max_num_tokens=1024, warmup=True, sample_timeout_s=30.0, parallel_local=True,
                         settle=False, settle_c=1.5)  # fmt: skip
    record = _written(asked)
    assert record["kind"] == "bench" and record["flags"]["devices"] == "local"
    assert record["bench"]["request"]["depths"] == "0-64+32" and record["bench"]["settle"]["settle_c"] == 1.5
    resumed = _resume(record)
    again = BenchRequest(**{k: v for k, v in resumed.params.items() if k not in ("db", "resume")})
    for f in BenchRequest.recorded():
        assert getattr(again, f.name) == getattr(asked, f.name), f.name
    assert "--n-prompt 16,32" in resumed.carried and "--repetitions 7" in resumed.carried
    assert "--warmup" in resumed.carried and "--no-settle" in resumed.carried and resumed.defaulted == ()


def test_a_typed_bench_flag_must_agree_and_the_session_flags_are_free():
    record = _written(BenchRequest(prompts="8", gens="4", repetitions=2))
    assert _resume(record, "-p", "8", "-o", "csv").params["output"] == "csv"  # -o: this session's stdout
    with pytest.raises(ConfigError, match="--n-prompt 16 differs from this run's recorded --n-prompt 8") as e:
        _resume(record, "-p", "16")
    assert e.value.where.endswith("field 'bench.request.prompts'")


def test_each_command_resumes_only_its_own_kind_of_folder():
    bench_record = _written(BenchRequest())
    ctx = run_command.make_context("run", ["--resume", str(RUN_DIR)])
    with pytest.raises(ConfigError, match="is an `edgefarm bench` folder") as e:
        resumed_params(ctx, bench_record, RUN_DIR)
    assert e.value.fix == f"continue it with `edgefarm bench --resume {RUN_DIR}`"
    run_record = {k: v for k, v in bench_record.items() if k not in ("kind", "bench")}
    with pytest.raises(ConfigError, match="is an `edgefarm run` folder") as e:
        _resume(run_record)
    assert e.value.fix == f"continue it with `edgefarm run --resume {RUN_DIR}`"
    with pytest.raises(ConfigError, match="a folder of kind 'ab'"):
        _resume({**bench_record, "kind": "ab"})
