"""This host's load over a run (telemetry/host_load.py) and the conditions' rules (telemetry/conditions.py):
parsers on /proc text captured on this host (tests/unit/fixtures/proc), the summary over ticks, the
record's codec, and when a run was loaded or two runs differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.telemetry.conditions import (
    DIFFER_CORES,
    LOADED_CORES,
    DeviceConditions,
    DeviceStart,
    RunConditions,
    differences,
)
from orchestrator.telemetry.host_load import (
    HostLoad,
    HostLoadSampler,
    Tick,
    parse_cpu_busy,
    parse_loadavg,
    parse_pid_stat,
    parse_start_probe,
    summary,
)

PROC = Path(__file__).resolve().parents[1] / "fixtures" / "proc"


def test_parsers_read_captured_proc_files():
    assert parse_loadavg((PROC / "loadavg").read_text()) == 7.79
    # cpu  154217 375 25131 350894 1024 0 408 195: user+nice+system+irq+softirq+steal, not idle/iowait
    assert parse_cpu_busy((PROC / "stat").read_text()) == 154217 + 375 + 25131 + 0 + 408 + 195
    # a command name holding ") (" and spaces: fields are counted after its last ')'
    assert parse_pid_stat((PROC / "pid_stat_paren").read_text()) == (393, 0)
    assert parse_loadavg("") is None and parse_loadavg("x 1 2") is None
    assert (
        parse_cpu_busy("") is None and parse_cpu_busy("cpu x y") is None and parse_cpu_busy("cpu 1 2") is None
    )
    assert parse_pid_stat("") is None and parse_pid_stat("1 (a) S x") is None


def test_summary_counts_other_processes_apart_from_the_runs_own_tree():
    hz = 100.0
    # 2 s: the host busy 300 ticks (1.5 cores), the run's tree 100 of them (0.5 core): others 1.0 core
    ticks = [Tick(0.0, 1.0, 0, 0), Tick(1.0, 2.0, 100, 50, frozenset({"t1"})), Tick(2.0, 3.0, 300, 100)]
    load = summary(ticks, 2, hz)
    assert load == HostLoad(2.0, 3, 2, 2.0, 3.0, 1.0, 1.5, 0.5)
    # t1's runner was alive at tick 1: the two intervals touching it
    assert summary(ticks, 2, hz, "t1") == load
    assert summary(ticks, 2, hz, "t2") is None and summary(ticks[:1], 2, hz) is None
    assert HostLoad.from_dict(load.to_dict()) == load
    assert "other processes 1.00 cores" in load.text() and "of 2 CPUs, over 2.0 s" in load.text()


def test_the_sampler_reads_a_proc_tree_and_finds_its_runners(tmp_path: Path):
    """A /proc of captured-shape files: edgefarm (pid 10), its runner (11, naming t1's job), another
    program (20). The tree's time is edgefarm's and the runner's; the runner marks t1 as running."""

    def proc(pid: int, ppid: int, ticks: int, cmd: str) -> None:
        d = tmp_path / str(pid)
        d.mkdir(exist_ok=True)
        (d / "stat").write_text(f"{pid} (x y) S {ppid} 1 1 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0\n")
        (d / "cmdline").write_text(cmd.replace(" ", "\0"))

    (tmp_path / "loadavg").write_text("0.50 0.40 0.30 1/100 42\n")
    (tmp_path / "stat").write_text("cpu  100 0 0 900 0 0 0 0 0 0\n")
    proc(10, 1, 30, "python -m orchestrator run")
    proc(11, 10, 20, "python /w/runner/entry.py --job /w/runs/R/t1/job --exit-on-stdin-eof")
    proc(20, 1, 50, "hog")
    s = HostLoadSampler({"t1": "/runs/R/t1/job ", "t2": "/runs/R/t2/job "}, proc=tmp_path, pid=10)
    tick = s.look()
    assert (tick.load1, tick.busy, tick.tree, tick.running) == (0.5, 100, 50, frozenset({"t1"}))


def test_the_sampler_runs_and_stops_on_this_host():
    s = HostLoadSampler(interval_s=0.05).start()
    try:
        sum(range(2_000_000))  # some CPU of our own
    finally:
        s.stop()
    s.stop()  # a second stop is harmless
    load = s.load()
    assert load is not None and load.ticks >= 2 and load.own_cores_mean is not None and load.cpus


def _run(cores: float | None, start: DeviceStart | None = None) -> RunConditions:
    host = None if cores is None else HostLoad(10.0, 21, 2, 1.0, 1.5, cores, cores + 0.1, 0.9)
    return RunConditions(host, {"pixel-8": DeviceConditions(None, start)})


def test_the_rules_name_a_loaded_run_a_hot_or_throttled_start_and_runs_that_differ():
    assert _run(0.1).problems() == [] and _run(LOADED_CORES).problems() == []
    loaded = _run(1.2).problems()
    assert len(loaded) == 1 and loaded[0].startswith("LOADED: this host: other processes used 1.20 cores")
    hot = _run(0.1, DeviceStart(47.0, 47.0, 3)).problems()
    assert [p.split(":")[0] for p in hot] == ["THROTTLED", "HOT"] and "severe (3" in hot[0]
    names = ("A", "B")
    assert differences(_run(0.1), _run(0.1 + DIFFER_CORES), names) == []
    assert differences(_run(0.1), _run(1.2), names) == [
        "this host: other processes 0.10 cores in A, 1.20 (loaded) in B"
    ]
    cool, warm = _run(0.1, DeviceStart(30.0, 30.0, 0)), _run(0.1, DeviceStart(41.0, 41.0, 1))
    assert differences(cool, warm, names) == [
        "pixel-8: started at 30.0 °C in A, 41.0 °C in B",
        "pixel-8: thermal status at start none in A, light in B",
    ]
    assert "not recorded in A" in differences(None, warm, names)[0]


@pytest.mark.parametrize(
    "snapshot,start",
    [
        ({"battery_temp_c": 31.5, "thermal_status": 1, "max_temp_c": 40.2}, DeviceStart(40.2, 31.5, 1)),
        ({"max_temp_c": 52.0, "zones": 3}, DeviceStart(52.0, None, None)),
        ({"cpu_mhz": 1800.0}, None),
        (None, None),
    ],
)
def test_a_devices_start_is_its_first_snapshot(snapshot, start):
    assert DeviceStart.of(snapshot) == start


def test_the_record_round_trips_and_an_older_run_has_none():
    c = _run(1.2, DeviceStart(40.0, 35.0, 2))
    back = RunConditions.from_dict(c.to_dict())
    assert back == c and "loaded:" in c.to_dict()["rules"]
    assert RunConditions.from_dict(None) is None
    assert back.lines() == [
        "this host: " + c.host.text(),
        "pixel-8: at its start 40.0 °C, thermal status moderate (2)",
    ]


def test_merged_runs_keep_each_devices_conditions_with_its_own_controllers_host():
    """`report --merge` of two controllers' runs: no one "this host"; each device gets its controller's."""
    from orchestrator.telemetry.conditions import merged

    a, b = _run(0.1, DeviceStart(30.0, 30.0, 0)), _run(1.2)
    m = merged([(a, {"pixel-8": "pixel-8@site-a"}), (b, {"pixel-8": "pixel-8@site-b"}), (None, {"x": "x"})])
    assert m.host is None and list(m.devices) == ["pixel-8@site-a", "pixel-8@site-b"]
    assert m.devices["pixel-8@site-a"] == DeviceConditions(a.host, DeviceStart(30.0, 30.0, 0))
    assert m.devices["pixel-8@site-b"].host == b.host
    said = "LOADED: the host while pixel-8@site-b ran: other processes used 1.20 cores on average (over 0.5"
    assert len(m.problems()) == 1 and m.problems()[0].startswith(said)
    assert merged([(None, {})]) is None


def test_ticks_come_fast_at_first_then_every_interval():
    s = HostLoadSampler()
    assert [s.wait_s(t) for t in (0.0, 2.0, 8.0, 600.0)] == [0.1, 0.2, 0.5, 0.5]


def test_a_devices_background_before_its_run_from_the_start_probe():
    """START_PROBE's reply captured on this host (2 CPUs): 39 busy ticks of 41 (2 iowait) in 0.2 s."""
    text = (PROC / "start_probe").read_text()
    assert parse_start_probe(text, 2) == {"background_cores": 1.9, "load1": 5.28}
    assert parse_start_probe(text, None) == {"load1": 5.28}  # cores unknown: no cores figure
    assert parse_start_probe("cpu  10 0 0 90 0 0 0 0\ncpu  15 0 0 185 0 0 0 0\n", 4) == {"background_cores": 0.2}
    assert parse_start_probe("", 4) == {} and parse_start_probe("sh: head: not found", 4) == {}


def test_a_busy_device_at_start_is_named_and_differs_from_a_quiet_one():
    busy = DeviceStart.of({"battery_temp_c": 30.0}, {"background_cores": 1.4, "load1": 6.0})
    assert busy == DeviceStart(30.0, 30.0, None, 1.4, 6.0)
    assert "background CPU 1.40 cores, load average 6.0, 30.0 °C" in busy.text()
    assert [p.split(":")[0] for p in _run(0.1, busy).problems()] == ["BUSY"]
    quiet = DeviceStart(30.0, 30.0, None, 0.1, 0.5)
    assert differences(_run(0.1, quiet), _run(0.1, busy), ("A", "B")) == [
        "pixel-8: background CPU at start 0.10 cores in A, 1.40 in B"
    ]
    assert DeviceStart.from_dict(busy.to_dict()) == busy


def test_a_loaded_run_of_several_host_devices_is_one_line_with_each_devices_own_window():
    def load(cores):
        return HostLoad(5.0, 11, 2, 1.0, 1.2, cores, cores, 0.5)

    c = RunConditions(load(1.5), {"host-t1": DeviceConditions(load(1.6)), "host-t2": DeviceConditions(load(1.4))})
    assert len(c.problems()) == 1 and "(while each device ran: host-t1 1.60, host-t2 1.40)" in c.problems()[0]
    quiet = RunConditions(load(0.3), {"host-t1": DeviceConditions(load(0.1)), "host-t2": DeviceConditions(load(0.6))})
    assert [p.split(" ran:")[0] for p in quiet.problems()] == ["LOADED: the host while host-t2"]


def test_findings_are_the_differences_then_what_was_bad_during_each_run():
    from orchestrator.telemetry.conditions import findings

    said = findings(_run(0.1), _run(1.2), ("A", "B"))
    assert said[0] == "this host: other processes 0.10 cores in A, 1.20 (loaded) in B"
    assert said[1].startswith("during B: LOADED: this host") and len(said) == 2
    assert findings(_run(0.1), _run(0.2), ("A", "B")) == []
