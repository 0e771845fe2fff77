"""The upstream `litert_lm_advanced_main` on phones (`driver.sh upstream`): rendering and parsing.

The documented alternative to the native runner: one process, so one model load, PER SAMPLE, and
the binary takes no system message, tools or structured turns: the system message is prepended to
the first turn's text, and media go inline as `[image:/abs]` tags, which the binary parses out of
the prompt text (so a dataset prompt containing such a tag is read as media: the native runner has
no such hole). sh cannot parse JSON, so the host renders each JobItem into files (`samples/<n>/
prompt.txt` or `turns.txt`, `flags`, and one `index.tsv`; the run's settings are the job folder's
`settings` file, android_runner/settings.py); ids and prompts never reach a command
line. The driver appends `done.tsv` as it goes (a rerun resumes) and leaves per-sample stdout/
stderr/trace files that are parsed here into SampleResults. Pure: no device I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path, PurePosixPath

from android_runner.contract import JobItem, SampleResult, TurnFigures
from android_runner.status import SIGKILL, TIMEOUT_EXIT, classify, memory_pressure, signal_from_shell_status
from android_runner.threads import ThreadsRan

from ..telemetry.benchmark_output import parse_benchmark_output
from ..telemetry.energy import energy_fields, parse_power_tsv
from ..telemetry.phases import ttft_phases
from .android_snapshots import SNAPSHOT_FILES, conditions, dumpsys_power, power_record
from .base import RunOptions

RUNNER_NAME = "litert_lm_advanced_main"
RUNNER_KIND = "upstream"  # SampleResult.runner
SAMPLE_FILES = ("stdout", "stderr", "trace.tsv", "power.tsv", "pid", *SNAPSHOT_FILES)  # pid: the binary's


# ---------------------------------------------------------------- rendering (files only)


@dataclass(frozen=True)
class Rendered:
    n: int  # sample folder number, 1-based in job order
    id: str
    turns: int
    skip_reason: str = ""  # set: not run on the phone (status unsupported)
    max_output_tokens: int | None = None  # the cap written to this sample's flags file


def _flat(text: str) -> str:
    """One line per turn on stdin: newlines inside a turn become spaces."""
    return " ".join(text.splitlines())


def render_job(items: Sequence[JobItem], out: Path, device_job: PurePosixPath) -> list[Rendered]:
    """Write index.tsv and samples/<n>/ files under out; media as absolute device tags. The run's
    settings (model, backend, threads...) are the job folder's `settings` file, which driver.sh turns
    into the binary's flags; a sample's own output cap is its `flags` file's `--max_output_tokens`."""
    rendered: list[Rendered] = []
    index: list[str] = []
    for n, item in enumerate(items, 1):
        kinds = {p.kind for turn in item.turns for p in turn}
        if "video" in kinds:
            rendered.append(
                Rendered(n, item.id, len(item.turns), "litert_lm_advanced_main takes no video input")
            )
            continue
        texts = []
        for i, turn in enumerate(item.turns):
            parts = [f"[{p.kind}:{device_job / p.path}]" if p.kind != "text" else p.text for p in turn]
            text = " ".join(x for x in parts if x)
            if i == 0 and item.system:
                text = f"{item.system}\n\n{text}"  # the binary has no system-prompt flag
            texts.append(text)
        folder = out / "samples" / str(n)
        folder.mkdir(parents=True, exist_ok=True)
        multi = len(texts) > 1
        if multi:
            (folder / "turns.txt").write_text("".join(_flat(t) + "\n" for t in texts), encoding="utf-8")
        else:
            (folder / "prompt.txt").write_text(texts[0] if texts else "", encoding="utf-8")
        # The sample's own output cap, in upstream's flag (google-ai-edge/LiteRT-LM runtime/engine/
        # litert_lm_advanced_main.cc, --max_output_tokens). Constrained decoding (--constraint_regex)
        # stays off on every device kind, so a structured-output score measures the model itself.
        (folder / "flags").write_text(
            f"--max_output_tokens={int(item.max_output_tokens)}\n", encoding="utf-8"
        )
        index.append(f"{n}\t{1 if multi else 0}\n")
        rendered.append(Rendered(n, item.id, len(texts), max_output_tokens=int(item.max_output_tokens)))
    (out / "index.tsv").write_text("".join(index), encoding="utf-8")
    return rendered


# ---------------------------------------------------------------- parsing (pure)


@dataclass(frozen=True)
class TracePeaks:
    rss_mb: float | None = None
    hwm_mb: float | None = None
    swap_mb: float | None = None
    anon_mb: float | None = None
    file_mb: float | None = None
    rss_plus_swap_mb: float | None = None
    sample_ms: float | None = None  # median interval between trace rows


def parse_trace(text: str) -> TracePeaks:
    """trace.tsv rows (time in centiseconds, VmRSS, VmHWM, VmSwap, RssAnon, RssFile in kB) -> peaks in
    MB and the sampling interval (driver.sh `sample_status`, every $INTERVAL s)."""
    cols: list[list[int]] = [[], [], [], [], [], []]
    times: list[int] = []
    for line in text.splitlines():
        cells = line.split("\t")
        if len(cells) < 3:
            continue
        if cells[0].strip().isdigit():
            times.append(int(cells[0]))
        rss = swap = None
        for i, cell in enumerate(cells[1:6]):
            if cell.strip().isdigit():
                cols[i].append(int(cell))
                rss = int(cell) if i == 0 else rss
                swap = int(cell) if i == 2 else swap
        if rss is not None:
            cols[5].append(rss + (swap or 0))

    def mb(values: list[int]) -> float | None:
        return round(max(values) / 1024.0, 2) if values else None

    gaps = sorted(b - a for a, b in pairwise(times) if b > a)
    sample_ms = round(gaps[len(gaps) // 2] * 10.0, 1) if gaps else None
    return TracePeaks(mb(cols[0]), mb(cols[1]), mb(cols[2]), mb(cols[3]), mb(cols[4]), mb(cols[5]), sample_ms)


def build_result(
    r: Rendered,
    rc: int,
    wall_ms: float | None,
    files: Mapping[str, str],
    opts: RunOptions,
    available_mb: float | None = None,
) -> SampleResult:
    """One sample's driver outputs -> SampleResult. Peak = max(binary's figure, VmHWM, VmRSS+VmSwap).

    `available_mb`: the memory the phone had for the runner; a SIGKILL is `oom` only with evidence
    (the runtime's words, a kernel/lmkd record in the sample's logs, or a peak near this figure),
    else `killed` (android_runner/status.py).
    """
    stderr = files.get("stderr", "")
    bench = parse_benchmark_output(files.get("stdout", ""), stderr, opts.backend)
    peaks = parse_trace(files.get("trace.tsv", ""))
    output = bench.answer
    lines = output.splitlines()
    if r.turns > 1 and len(lines) == r.turns:  # one answer line per turn: keep the last turn's
        output = lines[-1]
    sig = signal_from_shell_status(rc)
    candidates = [v for v in (bench.peak_ram_mb, peaks.hwm_mb, peaks.rss_plus_swap_mb, peaks.rss_mb) if v]
    peak = max(candidates) if candidates else None
    pressure = (
        memory_pressure(peak, available_mb, stderr + "\n" + files.get("logcat", "")) if sig == SIGKILL else ""
    )
    heat = files.get("heat", "") if sig == SIGKILL else ""
    status = classify(None if sig else rc, sig, bench.failure, pressure, heat)
    error = ""
    if status != "ok":
        why = bench.failure or ("timed out" if rc == TIMEOUT_EXIT else f"exit code {rc}")
        if bench.failure and rc != 0:
            why += f" (exit code {rc})"
        if status == "thermal_stop":
            why += f"; stopped by the OS for heat: {heat}"
        elif sig == SIGKILL:
            seen = f"peak {peak:.0f} MB" if peak else "no memory reading"
            seen += f" of {available_mb:.0f} MB available" if available_mb else ""
            why += (
                f"; {pressure}"
                if pressure
                else f"; killed by SIGKILL without evidence of memory pressure ({seen})"
            )
        tail = "\n".join(stderr.strip().splitlines()[-8:])
        error = f"{why}: {bench.detail}" if bench.detail else why
        if tail and (not bench.detail or bench.detail not in tail):  # never lose the runtime's last words
            error += f"\n{tail}"
    turns = tuple(
        TurnFigures(prefill_tokens=p.tokens if p else None, prefill_tps=p.tps if p else None,
                    decode_tokens=d.tokens if d else None, decode_tps=d.tps if d else None)
        for p, d in _zip_longest(bench.prefill, bench.decode)
    )  # fmt: skip
    if status == "ok" and bench.warnings:  # ran as asked, a part fell back: flagged in the runtime's words
        error = f"warning: {', '.join(bench.warnings)}: {bench.backend_note}"
    power = power_record(parse_power_tsv(files.get("power.tsv", "")) or dumpsys_power(files, wall_ms), files)
    return SampleResult(
        id=r.id,
        status=status,
        output=output,
        error=error,
        exit_code=None if sig else rc,
        signal=sig,
        init_ms=bench.init_total_ms,
        ttft_ms=bench.ttft_ms,
        prefill_tokens=bench.prefill_tokens,
        prefill_tps=bench.prefill[-1].tps if bench.prefill else None,
        decode_tokens=bench.decode_tokens,
        decode_tps=bench.decode[-1].tps if bench.decode else None,
        infer_ms=bench.infer_ms,
        wall_ms=wall_ms,
        peak_rss_mb=peak,
        peak_hwm_mb=peaks.hwm_mb,
        peak_anon_mb=peaks.anon_mb,
        peak_file_mb=peaks.file_mb,
        peak_swap_mb=peaks.swap_mb,
        # one process per sample: its VmHWM covers exactly this sample
        peak_method="hwm_reset"
        if peaks.hwm_mb is not None
        else ("sampled" if peaks.rss_mb is not None else ""),
        mem_sample_ms=peaks.sample_ms,
        turns=turns,
        backend=bench.backend,
        backend_requested=opts.backend,
        threads=opts.threads,
        # the binary does not say: the rule (android_runner/threads.py), on the CPU backend
        threads_ran=ThreadsRan.of(opts.threads, None).count if opts.backend == "cpu" else None,
        threads_from=ThreadsRan.of(opts.threads, None).source if opts.backend == "cpu" else "",
        runner=RUNNER_KIND,
        max_output_tokens=r.max_output_tokens,
        trace=f"samples/{r.n}/trace.tsv",
        **conditions(files),
        power=power,
        ttft_phases_ms=ttft_phases(
            bench.ttft_ms, bench.prefill[0].duration_ms if bench.prefill else None, bench.mark_durations_ms
        ),
        **energy_fields(power, bench.decode_tokens),
    )


def _zip_longest(a, b):
    for i in range(max(len(a), len(b))):
        yield (a[i] if i < len(a) else None, b[i] if i < len(b) else None)
