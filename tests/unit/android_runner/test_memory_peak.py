"""One definition of the per-sample peak (android_runner/contract.py): VmHWM reset per sample via
/proc/self/clear_refs where the kernel allows ("hwm_reset"), else the sampled maximum ("sampled")."""

from __future__ import annotations

import mmap

from android_runner.memory import RSS_PLUS_SWAP, MemorySampler, parse_status, reset_hwm, sample_peaks_mb


def _touch(mb: int) -> mmap.mmap:
    """mb MB of anonymous memory, every page written (resident)."""
    m = mmap.mmap(-1, mb << 20)
    for off in range(0, mb << 20, 4096):
        m[off] = 1
    return m


def test_the_high_water_mark_is_per_sample_after_a_reset():
    """Sample 1 touches 64 MB and frees it; sample 2 touches nothing. Without the reset, sample 2's
    VmHWM would be sample 1's peak: with it, sample 2's peak is its own."""
    memory = MemorySampler(interval_s=10.0)  # no background sampling: only the reads below
    memory.reset()
    assert memory.peak_method == "hwm_reset"  # this kernel lets a process reset its own VmHWM
    big = _touch(64)
    first = sample_peaks_mb(memory.peaks(), memory.peak_method)
    big.close()
    memory.reset()
    second = sample_peaks_mb(memory.peaks(), memory.peak_method)
    assert first["peak_hwm_mb"] - second["peak_hwm_mb"] > 48  # the 64 MB spike is not sample 2's
    with open("/proc/self/status", "rb") as f:
        whole_life_hwm = parse_status(f.read())["VmHWM"]
    assert whole_life_hwm < first["peak_hwm_mb"] + 1  # reset: the process's mark moved down too


def test_a_spike_between_two_readings_is_caught_by_the_reset_mark_not_by_sampling():
    memory = MemorySampler(interval_s=10.0)
    memory.reset()
    spike = _touch(48)
    spike.close()  # gone before any reading
    peaks = memory.peaks()
    figures = sample_peaks_mb(peaks, memory.peak_method)
    assert peaks[RSS_PLUS_SWAP] < figures["peak_hwm_mb"] - 32  # sampling missed it
    assert figures["peak_rss_mb"] == figures["peak_hwm_mb"]  # the row's peak has it


def test_without_a_reset_only_the_sampled_maximum_is_reported():
    peaks = {"VmRSS": 100.0, "VmHWM": 900.0, "VmSwap": 20.0, RSS_PLUS_SWAP: 120.0, "RssAnon": 60.0, "RssFile": 40.0}
    f = sample_peaks_mb(peaks, "sampled")
    assert f["peak_hwm_mb"] is None  # the whole process's mark is not this sample's
    assert (f["peak_rss_mb"], f["peak_anon_mb"], f["peak_file_mb"], f["peak_swap_mb"]) == (120.0, 60.0, 40.0, 20.0)
    assert reset_hwm(pid=999999999) is False  # no such process: refused, never raises


class _CountingSampler(MemorySampler):
    """The real sampler, counting its readings of /proc/self/status."""

    reads = 0

    def _read(self) -> bytes:
        self.reads += 1
        return super()._read()


def test_a_paused_sampler_reads_nothing_in_the_block_and_resumes_after():
    """bench's timed turns run with no sampler thread beside them (android_runner/bench.py)."""
    import time

    memory = _CountingSampler(interval_s=0.001)
    memory.start()
    time.sleep(0.05)
    assert memory.reads >= 3  # sampling in the background
    with memory.paused():
        during = memory.reads
        time.sleep(0.2)  # ~200 readings' worth
        assert memory.reads - during <= 1  # at most one reading already under way
    after = memory.reads
    time.sleep(0.1)
    assert memory.reads - after >= 3  # sampling again
    with memory.paused():
        t0 = time.perf_counter()
        memory.stop()  # a paused thread still ends at once
        assert time.perf_counter() - t0 < 0.5
        assert memory._thread is not None and not memory._thread.is_alive()
