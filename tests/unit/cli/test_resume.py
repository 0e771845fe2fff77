"""`--resume`'s flags (cli/resume.py): every flag RunRequest records is carried from run.json, typed
flags must agree, and a record it cannot honour is refused with the reason. The click context is the
real `edgefarm run` command's, parsed from a real command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.resume import describe, resumed_params
from orchestrator.cli.run import run as run_command
from orchestrator.errors import ConfigError
from orchestrator.run.types import RunRequest

RUN_DIR = Path("/tmp/runs/20260101-000000-abcd")


def _record(**flags) -> dict:
    request = RunRequest(device_spec="local", limit=6, model=Path("/m/tiny.litertlm"), dataset_spec="/d/set")
    recorded = {**request.flags(), **flags}
    return {"run_id": RUN_DIR.name, "flags": recorded, "model": {"path": "/m/tiny.litertlm"},
            "dataset": {"path": "/d/set"}}  # fmt: skip


def _resume(record: dict, *typed: str):
    ctx = run_command.make_context("run", ["--resume", str(RUN_DIR), *typed])
    return resumed_params(ctx, record, RUN_DIR)


def test_every_recorded_flag_is_carried_into_the_request():
    """The issue's repeat -> null: each measurement flag comes back at its recorded value."""
    asked = RunRequest(device_spec="local", limit=6, repeat=20, warmup=3, sustain=1, fidelity=True,
                       reference="this-host", max_output_tokens=64, max_num_tokens=512, backend="cpu",
                       threads=2, shard=True, parallel_local=True, fallback_boards=("pi-5",),
                       fallback_wait_s=5.0, modalities=("text",), sample_timeout_s=30.0, settle=True, settle_c=1.0)  # fmt: skip
    record = {"run_id": RUN_DIR.name, "flags": asked.flags(), "model": {"path": "/m/x.litertlm"},
              "dataset": {"path": "/d/set"}}  # fmt: skip
    resumed = _resume(record)
    params = {k: v for k, v in resumed.params.items() if k != "db"}
    again = RunRequest(**params)
    for f in RunRequest.recorded():
        if "." not in f.metadata["key"]:
            assert getattr(again, f.name) == getattr(asked, f.name), f.name
    assert again.model == Path("/m/x.litertlm") and again.dataset_spec == "/d/set"
    assert (
        "--repeat 20" in resumed.carried
        and "--warmup 3" in resumed.carried
        and "--fidelity" in resumed.carried
    )
    assert describe(resumed, RUN_DIR.name).startswith(
        f"resuming run {RUN_DIR.name} with its recorded flags: "
    )


def test_flags_and_recorded_are_one_list():
    """run.json `flags` holds exactly the recorded fields with a plain key: no second list to drift."""
    keys = [f.metadata["key"] for f in RunRequest.recorded() if "." not in f.metadata["key"]]
    assert list(RunRequest().flags()) == keys
    assert {"repeat", "warmup", "sustain", "fidelity", "threads", "backend", "max_output_tokens"} <= set(keys)


def test_a_default_written_as_null_reads_back_as_the_default():
    resumed = _resume(_record(repeat=None, warmup=None, sustain=None, fidelity=None))
    assert (
        resumed.params["repeat"] == 1
        and resumed.params["warmup"] == 0
        and resumed.params["fidelity"] is False
    )


def test_a_typed_flag_that_agrees_is_taken_one_that_differs_is_refused():
    assert _resume(_record(repeat=20), "--repeat", "20").params["repeat"] == 20
    with pytest.raises(ConfigError) as e:
        _resume(_record(repeat=20), "--repeat", "5")
    assert "--repeat 5 differs from this run's recorded --repeat 20" in str(e.value)
    assert e.value.where.endswith("run.json field 'repeat'") and e.value.exit_code == 2


def test_an_unknown_recorded_flag_is_refused_not_dropped():
    with pytest.raises(ConfigError) as e:
        _resume(_record(batch_size=8))
    assert "batch_size" in e.value.what and "field 'flags'" in e.value.where


def test_a_recorded_value_the_flag_does_not_take_is_refused():
    with pytest.raises(ConfigError) as e:
        _resume(_record(repeat="many"))
    assert "recorded --repeat many is not a valid value" in e.value.what


def test_a_flag_an_older_run_json_lacks_takes_its_default_and_is_said():
    record = _record(repeat=4)
    del record["flags"]["fallback_wait_s"]
    resumed = _resume(record)
    assert resumed.params["repeat"] == 4 and "--fallback-wait-s" in resumed.defaulted
    assert "at their defaults: --fallback-wait-s" in describe(resumed, RUN_DIR.name)


def test_out_elsewhere_than_the_runs_folder_is_refused_its_own_parent_is_fine():
    assert _resume(_record(), "--out", str(RUN_DIR.parent)).params["limit"] == 6
    with pytest.raises(ConfigError) as e:
        _resume(_record(), "--out", "/elsewhere")
    assert e.value.where == "--out"


def test_a_backend_matrix_is_carried_and_a_bad_recorded_backend_refused():
    """docs/matrix.md: a resumed matrix run runs the same units (run.json flags.backend 'cpu,gpu')."""
    resumed = _resume(_record(backend="cpu,gpu"))
    assert resumed.params["backend"] == "cpu,gpu" and "--backend cpu,gpu" in resumed.carried
    with pytest.raises(ConfigError) as e:
        _resume(_record(backend="cpu,tpu"))
    assert "recorded --backend cpu,tpu is not a valid value" in e.value.what
