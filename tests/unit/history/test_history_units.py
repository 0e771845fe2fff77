"""history knows the backend axis (docs/matrix.md): a matrix run's units are series of their own, each
keyed by its device and its own backend, whatever the run's --backend list says."""

from __future__ import annotations

from dataclasses import replace

from orchestrator.history.entry import run_entry


def test_each_unit_is_recorded_with_its_own_backend_and_config(matrix_report):
    rep = matrix_report({"pixel-8@cpu": [True] * 60, "pixel-8@gpu": [i >= 20 for i in range(60)]})
    rep = replace(rep, run={"flags": {"backend": "cpu,gpu"}})
    by = {d.device: d for d in run_entry(rep, "/runs/r", {}).devices}
    assert (by["pixel-8@gpu"].backend, by["pixel-8@gpu"].config["backend"]) == ("gpu", "gpu")
    assert (by["pixel-8@cpu"].backend, by["pixel-8@cpu"].config["backend"]) == ("cpu", "cpu")
    assert by["pixel-8@cpu"].config_key != by["pixel-8@gpu"].config_key
    assert by["pixel-8@gpu"].figures["pass_rate_pct"].value < by["pixel-8@cpu"].figures["pass_rate_pct"].value
