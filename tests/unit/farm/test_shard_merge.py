"""--shard after the run (orchestrator/farm/shard_merge.py): the identical pair's rows become ONE
device folder, in dataset order, each row naming the device that ran it, one score over every sample,
the members' figures added and their shares in device.json; a member's failure is the group's.
The members' outcomes are a real run's (conftest.py: h1 and h2 of this host split three samples)."""

from __future__ import annotations

import json
from dataclasses import replace

from android_runner.contract import read_results
from orchestrator.farm.rundir import device_folder, read_outcome
from orchestrator.farm.shard_merge import merge_shards


def test_the_pair_is_one_folder_with_every_row_in_dataset_order_and_one_score(sharded_run, tmp_path):
    run = sharded_run
    shards = run.plan.shards
    assert [g.members for g in shards.groups] == [("h1", "h2")]
    assert [len(shards.assignment[m]) for m in ("h1", "h2")] == [2, 1]  # round-robin: samples 0, 2 | 1
    [merged] = merge_shards(shards, run.outcomes, run.plan.dataset, run.plan.samples, tmp_path, run.score)
    group = shards.groups[0]
    folder = device_folder(tmp_path, group.name)
    assert merged.name == group.name and group.name.endswith("-x2")
    rows = read_results(str(folder / "results.jsonl"))
    assert [r.id for r in rows] == [s.id for s in run.plan.samples]  # dataset order, every sample once
    ran_by = {r.id: o.name for o in run.outcomes for r in o.results}
    serial = dict(zip(group.members, group.serials, strict=True))
    assert [r.ran_on for r in rows] == [serial[ran_by[r.id]] for r in rows]
    report = json.loads((folder / "report.json").read_text())
    assert report["summary"]["total_scored"] == len(run.plan.samples)  # one score over all of them
    h1, h2 = run.outcomes
    assert merged.model_loads == h1.model_loads + h2.model_loads
    assert merged.model_push == h1.model_push + h2.model_push
    info = json.loads((folder / "device.json").read_text())
    assert info["name"] == group.name and info["serial"] == ", ".join(group.serials)
    assert [(s["name"], s["samples"]) for s in info["extra"]["shards"]] == [("h1", 2), ("h2", 1)]
    assert read_outcome(folder).to_dict() == merged.to_dict()


def test_a_members_failure_is_the_groups_with_its_name_and_the_others_rows_kept(sharded_run, tmp_path):
    run = sharded_run
    h1, h2 = run.outcomes
    lost = replace(h2, results=[], error="device lost: adb says offline", error_code=6)
    [merged] = merge_shards(
        run.plan.shards, [h1, lost], run.plan.dataset, run.plan.samples, tmp_path, run.score
    )
    assert merged.error == "h2: device lost: adb says offline" and merged.error_code == 6
    rows = read_results(str(device_folder(tmp_path, merged.name) / "results.jsonl"))
    assert [r.id for r in rows] == [r.id for r in h1.results]  # what h1 ran is kept, h2's share is missing
