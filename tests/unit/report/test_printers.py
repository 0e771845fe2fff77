"""The combined report's records and printers on a hand-built three-device run: disagreements, the
agreement matrix, the chart tables, the exports and compare's common-sample rule."""

from __future__ import annotations

import csv
import io
import json

import pytest

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.errors import ConfigError
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.compare import compare_runs
from orchestrator.report.merge import merge_reports
from orchestrator.report.printers import PRINTERS
from orchestrator.report.terminal import to_text

RUN = {
    "run_id": "20260101-000000-abcd",
    "started_at": "2026-01-01T00:00:00+00:00",
    "model": {"path": "m.litertlm", "sha256": "a" * 64, "size_bytes": 2_000_000},
    "dataset": {
        "path": "d",
        "format": "edgemmeval",
        "sha256": "b" * 64,
        "samples_run": 3,
        "samples_total": 9,
    },
    "host": {"hostname": "lab"},
    "versions": {"edgefarm": "0.1.0"},
    "flags": {"limit": 3},
}


def _r(i, out="yes", status="ok", **kw):
    return SampleResult(
        id=i,
        status=status,
        output=out if status == "ok" else "",
        error="" if status == "ok" else "boom",
        ttft_ms=10.0,
        prefill_tps=100.0,
        decode_tps=20.0,
        peak_rss_mb=90.0,
        peak_anon_mb=30.0,
        peak_file_mb=60.0,
        backend=kw.pop("backend", "cpu"),
        **kw,
    )


def _score(passed: dict[str, bool]) -> dict:
    rows = [
        {
            "test_id": i,
            "modality": "text",
            "task": "qa",
            "metric": "bleu1",
            "score": float(p),
            "passed": p,
            "reference": "yes",
        }
        for i, p in passed.items()
    ]
    n, ok = len(rows), sum(passed.values())
    return {
        "scorer": "edgemmeval",
        "summary": {
            "total_scored": n,
            "total_passed": ok,
            "overall_avg": ok / n,
            "pass_rate_pct": 100.0 * ok / n,
            "verdict": "",
            "skipped": [],
        },
        "by_modality": {"text": {"passed": ok, "total": n, "avg_score": ok / n}},
        "samples": rows,
    }


def _report(run=RUN, ids=("s1", "s2", "s3")):
    per = {
        "a": ([_r(i) for i in ids], _score({i: True for i in ids})),
        "b": ([_r(i, backend="gpu") for i in ids], _score({i: True for i in ids})),
        "c": (
            [_r(ids[0]), _r(ids[1], out="no"), _r(ids[2], status="crash")],
            _score({ids[0]: True, ids[1]: False, ids[2]: False}),
        ),
    }
    rows = [
        device_row(
            DeviceInfo.from_dict({"name": n, "kind": "adb", "model": f"Phone {n}"}),
            DeviceOutcome.from_dict({"wall_s": 1.0}),
            *per[n],
        )
        for n in per
    ]
    return build_report(
        RunJson.from_dict(run), rows, sample_rows(per), finished_at="2026-01-01T00:01:00+00:00"
    )


def test_disagreements_and_agreement_matrix():
    rep = _report()
    d = rep.disagreements
    assert [(x.id, x.passed_on, x.failed_on) for x in d.samples] == [
        ("s2", ("a", "b"), ("c",)),
        ("s3", ("a", "b"), ("c",)),
    ]
    worst = d.worst_pair()
    assert worst.b == "c" and worst.verdict_pct == 33.3 and worst.output_pct == 50.0
    assert d.fails_by_backend == {} and d.fails_by_hardware == {"Phone c": 2}
    pair_ab = next(p for p in d.pairs if (p.a, p.b) == ("a", "b"))
    assert pair_ab.verdict_pct == 100.0 and pair_ab.output_pct == 100.0


def test_markdown_has_the_stamp_the_chart_tables_and_the_matrix():
    md = PRINTERS.get("md")(_report())
    assert "sha256 " + "a" * 64 in md and "3 run of 9" in md and "→ 2026-01-01T00:01:00+00:00" in md
    for title in ("## Latency and speed distributions", "## Peak memory per device", "## Disagreements"):
        assert title in md
    assert "| a | · | 100% / 100% | 33% / 50% |" in md
    assert "| a | 90 | 60 | 30 |" in md  # peak memory: RSS, file-backed, anonymous


def test_csv_and_jsonl_one_row_per_device_and_sample():
    rows = list(csv.DictReader(io.StringIO(PRINTERS.get("csv")(_report()))))
    assert len(rows) == 9 and {r["device"] for r in rows} == {"a", "b", "c"}
    crash = next(r for r in rows if r["status"] == "crash")
    assert (crash["device"], crash["sample_id"], crash["passed"], crash["error"]) == (
        "c",
        "s3",
        "False",
        "boom",
    )
    lines = [json.loads(x) for x in PRINTERS.get("jsonl")(_report()).splitlines()]
    assert len(lines) == 9 and lines[0]["ttft_ms"] == 10.0 and lines[0]["reference"] == "yes"


def test_json_is_the_whole_record():
    data = json.loads(PRINTERS.get("json")(_report()))
    assert data["schema_version"] == 3 and data["stamp"]["model_sha256"] == "a" * 64
    assert data["samples"][0]["reference"] == "yes" and len(data["disagreements"]["samples"]) == 2


def test_html_is_self_contained_with_charts_and_filters():
    page = PRINTERS.get("html")(_report())
    assert (
        page.count("<svg") == 5 and "Content-Security-Policy" in page
    )  # accuracy-latency, pass, dist, mem, run
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    assert page.count("class='cell'") == 9 and "id='f-device'" in page and "id='agreement'" in page


def test_term_names_the_worst_pair():
    assert "least agreement: a vs c" in PRINTERS.get("term")(_report())


def test_compare_refuses_other_samples_and_compares_the_common_ones_when_allowed():
    a = _report()
    b = _report(run={**RUN, "run_id": "20260102-000000-abcd"}, ids=("s2", "s3", "s4"))
    with pytest.raises(ConfigError) as e:
        compare_runs(a, b)
    assert "dataset slice: 3 samples (s1, s2, s3" in str(e.value) and "--allow-different" in str(e.value)
    c = compare_runs(a, b, allow_different=True)
    assert c.common_samples == 2 and c.differences and c.differences[0].startswith("dataset slice")
    dev_a = next(d for d in c.devices if d.device == "a")
    assert dev_a.common == 2 and dev_a.to_fail == () and dev_a.pass_a == dev_a.pass_b == 100.0
    again = _report(run={**RUN, "run_id": "20260103-000000-abcd"})  # the same figures, another run
    same = compare_runs(a, again)
    assert same.differences == () and same.versions == () and all(d.worse == 0 for d in same.devices)
    assert all("no significant difference" in d.pass_text() for d in same.devices)


def test_compare_refuses_a_run_against_itself_and_names_versions_that_differ():
    a = _report()
    with pytest.raises(ConfigError) as e:  # the same run twice (a folder and its copy share the run id)
        compare_runs(a, a, folders=("runs/x", "copy/x"))
    assert "A and B are the same run (" in str(e.value) and "runs/x and copy/x" in str(e.value)
    assert "edgefarm ab" in str(e.value) and e.value.exit_code == 2
    newer = {**RUN, "run_id": "20260104-000000-abcd", "versions": {**RUN.get("versions", {}), "edgefarm": "9.9.9"}}
    c = compare_runs(a, _report(run=newer))
    ours = RUN.get("versions", {}).get("edgefarm") or "not recorded"
    assert c.versions == (f"edgefarm {ours} in {a.run_id}, 9.9.9 in 20260104-000000-abcd",)


@pytest.mark.parametrize(
    "change,named",
    [
        ({"flags": {**RUN["flags"], "max_output_tokens": 2}}, "token cap"),
        ({"flags": {**RUN["flags"], "threads": 4}}, "threads: 4 in B, default in A"),
        ({"flags": {**RUN["flags"], "backend": "gpu"}}, "backend: gpu in B, default in A"),
        ({"flags": {**RUN["flags"], "repeat": 3}}, "repeat: 3 in B, 1 in A"),
        (
            {"model": {**RUN["model"], "sha256": "c" * 64}},
            "model: cccccccccccccccc in B, aaaaaaaaaaaaaaaa in A",
        ),
    ],
)
def test_compare_and_merge_refuse_runs_whose_settings_differ_naming_both_values(change, named):
    b = _report(run={**RUN, "run_id": "B", **change})
    a = _report(run={**RUN, "run_id": "A"})
    for command in (lambda: compare_runs(b, a), lambda: merge_reports([b, a])):
        with pytest.raises(ConfigError) as e:
            command()
        text = str(e.value)
        if named != "token cap":
            assert named in text, text
    if named == "token cap":  # run-level cap when the rows carry none: both values named
        with pytest.raises(ConfigError) as e:
            compare_runs(b, a)
        assert "token cap: 2 in B, not recorded in A" in str(e.value) or "token cap: 2 in B" in str(e.value)


def test_runner_identity_from_outcome_is_in_the_row_and_the_stamp():
    outcome = {
        "runner": {
            "runner": "native",
            "runner_sha256": "f" * 64,
            "runtime_lib": "/x/liblitert-lm.so",
            "runtime_version": "0.18.1",
            "runtime_sha256": "e" * 64,
        },
        "model_loads": 1,
    }
    row = device_row(
        DeviceInfo.from_dict({"name": "p"}),
        DeviceOutcome.from_dict(outcome),
        [_r("s1")],
        _score({"s1": True}),
    )
    assert (row.runner, row.runner_sha256, row.model_loads) == ("native", "f" * 64, 1)
    assert row.runtime == "liblitert-lm.so 0.18.1 sha256 eeeeeeeeeeee"
    rep = build_report(RunJson.from_dict(RUN), [row], sample_rows({"p": ([_r("s1")], _score({"s1": True}))}))
    assert "p: native sha256 ffffffffffff, runtime liblitert-lm.so 0.18.1" in PRINTERS.get("md")(rep)
    py = device_row(
        DeviceInfo.from_dict({"name": "h"}),
        DeviceOutcome.from_dict(
            {
                "runner": {
                    "runner": "python",
                    "runner_sha256": "a1",
                    "runtime": "litert-lm-api",
                    "runtime_version": "0.18.1",
                }
            }
        ),
        [],
        None,
    )
    assert (py.runner, py.runtime) == ("python", "litert-lm-api 0.18.1")


def test_energy_chart_and_table_when_a_device_reports_trusted_energy():

    def row(i, j, unreliable=""):
        return SampleResult(
            id=i,
            status="ok",
            output="yes",
            ttft_ms=10.0,
            energy_j=j,
            energy_mj_per_token=j * 100,
            energy_unreliable=unreliable,
        )

    per = {
        "phone": (
            [row("s1", 1.0), row("s2", 3.0), row("s3", 50.0, unreliable="charging")],
            _score({"s1": True}),
        )
    }
    r = device_row(
        DeviceInfo.from_dict({"name": "phone"}), DeviceOutcome(name="phone", kind=""), *per["phone"]
    )
    assert r.energy_j_p50 == 2.0 and r.energy_mj_per_token_p50 == 200.0  # the charging row is left out
    rep = build_report(RunJson.from_dict(RUN), [r], sample_rows(per))
    md = PRINTERS.get("md")(rep)
    assert "## Energy per sample and per generated token" in md and "| phone | 1.20 | 2.00 | 2.80 |" in md
    page = PRINTERS.get("html")(rep)
    energy_figure = page.split("<figure id='chart-energy'", 1)[1].split("</figure>", 1)[0]
    assert "<svg" in energy_figure and "Energy per sample (J)" in energy_figure
    plain = PRINTERS.get("md")(_report())
    assert "no device of this run reported a trusted power reading" in plain


def test_disagreements_list_only_verdict_flips_and_fold_the_answer_only_differences_into_one_line():
    """issue 36: every device fails every sample, each with its own answer: no sample flips, so no
    table of them; the differing answers are one folded line, the agreeing samples another."""
    ids = [f"s{i}" for i in range(40)]
    per = {
        n: ([_r(i, out=f"{n} says {i}") for i in ids], _score({i: False for i in ids})) for n in ("a", "b")
    }
    per["c"] = (
        [_r(i, out="a says " + i) if i == "s0" else _r(i, out="same") for i in ids],
        _score({i: i == "s0" for i in ids}),
    )
    rows = [
        device_row(
            DeviceInfo.from_dict({"name": n, "kind": "adb"}),
            DeviceOutcome.from_dict({"wall_s": 1.0}),
            *per[n],
        )
        for n in per
    ]
    report = build_report(RunJson.from_dict(RUN), rows, sample_rows(per))
    page = PRINTERS.get("html")(report)
    flips = page[page.index("id='disagreeing'") :].split("</table>")[0]
    assert flips.count("<tr>") == 2  # the header and s0: passes on c, fails on a and b
    assert (
        "<summary>39 sample(s) with the same verdict on every device but different answers</summary>" in page
    )
    assert "0 sample(s): the same verdict and the same answer" in page
    md = PRINTERS.get("md")(report)
    assert "1 sample(s) pass on one device and fail on another:" in md
    assert "39 sample(s) with the same verdict on every device but different answers: s1, s2," in md


@pytest.mark.parametrize("width", [100, 160])
def test_term_never_cuts_a_cell_to_fit_it_drops_columns_instead(width):
    """A long hardware name (this host's CPU) made the table 'fit' 160 columns only by rich cutting
    every cell to `Pa…`, `this-ho…`: a fit is the table at its natural width, not a crushed one."""
    per = {"this-host": ([_r(i) for i in ("s1", "s2")], _score({"s1": True, "s2": True}))}
    info = DeviceInfo.from_dict({"name": "this-host", "kind": "local",
                                 "soc": "AMD EPYC 9B14 96-Core Processor with a long marketing name"})  # fmt: skip
    rows = [device_row(info, DeviceOutcome.from_dict({"wall_s": 1.0}), *per["this-host"])]
    report = build_report(
        RunJson.from_dict(RUN), rows, sample_rows(per), finished_at="2026-01-01T00:01:00+00:00"
    )
    text = to_text(report, width)
    assert "…" not in text and "this-host" in text and "Pass" in text, text
    assert max(len(line) for line in text.splitlines()) <= width
