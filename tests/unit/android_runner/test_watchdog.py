"""The runner's single watchdog thread: a sample past its deadline is recorded once, as a timeout, and
the process exits 124; a sample done in time is the main loop's to record, never both."""

from __future__ import annotations

import threading
import time

from android_runner.contract import SampleResult
from android_runner.litert_runner import Watchdog
from android_runner.status import TIMEOUT_EXIT


class FakeMemory:
    peak_method = "hwm_reset"  # the high-water mark was reset when the sample started
    interval_ms = 5.0

    def peaks(self) -> dict[str, float]:
        return {"VmRSS": 123.456, "VmHWM": 150.0}


class Recorder:
    """record() and os._exit stand-ins; exit only notes the code (the thread then ends)."""

    def __init__(self) -> None:
        self.records: list[SampleResult] = []
        self.exits: list[int] = []
        self.exited = threading.Event()

    def record(self, r: SampleResult) -> None:
        self.records.append(r)

    def exit(self, code: int) -> None:
        self.exits.append(code)
        self.exited.set()


def test_a_sample_past_its_deadline_is_one_timeout_record_and_exit_124():
    rec = Recorder()
    dog = Watchdog(0.05, rec.record, FakeMemory(), exit_process=rec.exit)
    dog.arm("a")
    assert dog.disarm()  # the first sample finished in time
    dog.arm("slow")
    assert rec.exited.wait(5.0)
    assert not dog.disarm()  # the runtime call came back too late: the watchdog has it
    assert rec.exits == [TIMEOUT_EXIT]
    (r,) = rec.records
    assert (r.id, r.status, r.exit_code) == ("slow", "timeout", TIMEOUT_EXIT)
    assert r.error == "no answer within 0.05 s (sample timeout)"
    assert (r.peak_rss_mb, r.peak_hwm_mb, r.peak_method, r.mem_sample_ms) == (150.0, 150.0, "hwm_reset", 5.0)


def test_samples_finishing_in_time_are_never_recorded_by_the_watchdog():
    rec = Recorder()
    dog = Watchdog(0.03, rec.record, FakeMemory(), exit_process=rec.exit)
    for i in range(5):  # each sample well inside its own deadline, the run far longer than one timeout
        dog.arm(str(i))
        time.sleep(0.01)
        assert dog.disarm()
    time.sleep(0.1)  # idle past every deadline armed so far
    assert rec.records == [] and rec.exits == []
    dog.close()
    dog._thread.join(2.0)
    assert not dog._thread.is_alive()


def test_a_sample_finishing_just_at_its_deadline_is_recorded_exactly_once():
    timeout = 0.002
    for trial in range(60):  # finish around the deadline: either side may win, never both, never none
        rec = Recorder()
        dog = Watchdog(timeout, rec.record, FakeMemory(), exit_process=rec.exit)
        main_recorded = []
        dog.arm(f"s{trial}")
        time.sleep(timeout * (0.5 + (trial % 10) / 10))
        if dog.disarm():
            main_recorded.append(f"s{trial}")
        dog.close()
        dog._thread.join(2.0)
        assert len(main_recorded) + len(rec.records) == 1
        assert rec.exits == ([TIMEOUT_EXIT] if rec.records else [])
