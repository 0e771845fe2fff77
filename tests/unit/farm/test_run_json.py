"""run.json's record and its one codec (orchestrator/farm/run_json.py)."""

from __future__ import annotations

import json
from dataclasses import replace

from orchestrator.farm.run_json import DatasetStamp, ModelStamp, RunJson

FILE = {
    "schema_version": 1,
    "run_id": "20260101-000000-abcd",
    "started_at": "2026-01-01T00:00:00+00:00",
    "model": {
        "path": "m.litertlm",
        "sha256": "a" * 64,
        "size_bytes": 10,
        "modalities": ["text"],
        "max_context_tokens": 4096,
        "sections": [{"data_type": "tflite", "model_type": "prefill_decode", "size_bytes": 9}],
        "facts": {
            "sections": [
                {"weight_bytes": 1, "quantization": "fp32"},
                {"weight_bytes": 9, "quantization": "int4"},
            ]
        },
    },
    "dataset": {
        "path": "d",
        "name": "edgemm",
        "format": "edgemmeval",
        "sha256": "b" * 64,
        "samples_total": 9,
        "samples_run": 2,
        "sample_ids": ["s1", "s2"],
    },
    "devices": ["pixel", "pi-5"],
    "flags": {"repeat": 3, "threads": 2, "reference": "pi-5"},
    "versions": {"python": "3.11"},
    "host": {"hostname": "h", "platform": "linux"},
    "unusable": [{"name": "gone", "state": "offline"}],
    "notes": ["a note"],
    "stand_ins": [
        {
            "phone": "pixel",
            "board": "pi-5",
            "folder": "pi-5-for-pixel",
            "reason": "lost",
            "sample_ids": ["s2"],
            "completed": True,
        }
    ],
    "cluster": {"hosts": {}},
    "finished_at": "2026-01-01T00:01:00+00:00",
    "device_versions": {"pixel": {}},
    "merged_from": [{"run_id": "x"}],  # a key the record does not know: kept, written after the known ones
}


def test_a_run_json_file_decodes_and_encodes_to_the_same_document_key_for_key():
    run = RunJson.from_dict(FILE)
    assert json.dumps(run.to_dict()) == json.dumps(FILE)  # same keys, same order, same values
    assert (
        run.model.quantization == "int4" and run.dataset.samples_run == 2 and run.devices == ("pixel", "pi-5")
    )
    assert (
        run.int_flag("repeat", 1) == 3 and run.int_flag("warmup", 0) == 0 and run.flag("reference") == "pi-5"
    )


def test_the_run_start_leaves_out_what_only_its_end_and_stand_ins_write():
    start = RunJson(
        "20260101-000000-abcd", model=ModelStamp(path="m"), dataset=DatasetStamp(sample_ids=("s1",))
    )
    keys = list(start.to_dict())
    assert keys == ["schema_version", "run_id", "started_at", "model", "dataset", "devices", "flags", "versions",
                    "host", "unusable", "notes"]  # fmt: skip
    end = replace(start.with_note("head lost"), finished_at="t1", versions={"python": "3.11"})
    assert end.to_dict()["notes"] == ["head lost"] and list(end.to_dict())[-1] == "finished_at"
    assert start.notes == ()  # a record: the start is not changed by its end


def test_an_older_run_json_with_missing_or_mistyped_parts_decodes_with_them_empty():
    run = RunJson.from_dict({"run_id": "20260101-000000-abcd", "model": "m", "dataset": {"samples_run": "2"},
                             "flags": {"repeat": "x"}, "stand_ins": {"not": "a list"}})  # fmt: skip
    assert run.model == ModelStamp() and run.dataset.samples_run is None and run.dataset.sample_ids is None
    assert run.int_flag("repeat", 1) is None and run.stand_ins is None and run.model.quantization == ""


OLD_BENCH = {  # a bench's run.json as edgefarm wrote it before bench used this record (its own dict)
    "schema_version": 1,
    "kind": "bench",
    "run_id": "20260101-000000-beef",
    "started_at": "2026-01-01T00:00:00+00:00",
    "model": {
        "path": "m.litertlm",
        "sha256": "a" * 64,
        "size_bytes": 10,
        "max_context_tokens": 2048,
        "facts": None,
    },
    "bench": {
        "request": {
            "prompts": "16,32",
            "gens": "8",
            "depths": "0",
            "repetitions": 5,
            "backends": None,
            "threads": None,
            "max_num_tokens": None,
            "warmup": False,
            "sustain": 1,
        },  # fmt: skip
        "token_limit": 2048,
        "cluster": None,
        "cells": {"this-host": ["p16-n8-d0-cpu", "p32-n8-d0-cpu"]},
    },
    "devices": ["this-host"],
    "host": {"hostname": "h"},
    "versions": {"python": "3.11"},
    "unusable": [],
    "notes": [],
    "finished_at": "2026-01-01T00:01:00+00:00",
    "outcomes": {
        "this-host": {"error": "", "model_loads": 1, "wall_s": 2.5, "interrupted": False, "runner": {}}
    },
}


def test_a_bench_run_json_is_the_same_record_kind_bench_and_an_older_file_keeps_every_value():
    run = RunJson.from_dict(OLD_BENCH)
    assert run.kind == "bench" and run.bench is not None and run.bench.token_limit == 2048
    assert run.bench.request["prompts"] == "16,32" and run.bench.cells["this-host"] == (
        "p16-n8-d0-cpu",
        "p32-n8-d0-cpu",
    )
    assert run.outcomes["this-host"]["model_loads"] == 1 and run.other == {}  # every key known
    again = run.to_dict()
    assert {k: again[k] for k in OLD_BENCH if k != "model"} == {
        k: v for k, v in OLD_BENCH.items() if k != "model"
    }
    assert again["model"]["sha256"] == "a" * 64 and again["model"]["max_context_tokens"] == 2048
    assert RunJson.from_dict(json.loads(json.dumps(again))) == run  # the codec round-trips
    plain = RunJson.from_dict(FILE)
    assert plain.kind == "run" and "kind" not in plain.to_dict() and "bench" not in plain.to_dict()
    odd = RunJson.from_dict(
        {**OLD_BENCH, "bench": {"request": "x", "token_limit": True, "cells": {"a": "b"}}}
    )
    assert odd.bench.request == {} and odd.bench.token_limit is None and odd.bench.cells == {}
