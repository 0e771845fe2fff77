"""Host side of the on-phone sh driver (android_runner/driver.sh) running litert_lm_advanced_main.

sh cannot parse JSON, so the host renders each JobItem into files (`samples/<n>/prompt.txt` or
`turns.txt`, `flags`, and one `index.tsv`); ids and prompts never reach a command line. The driver
appends `done.tsv` as it goes (a rerun resumes), prints `EDGEFARM BEGIN/END` lines the host
streams, and leaves per-sample stdout/stderr/trace files that are parsed here into SampleResults.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from android_runner.contract import JobItem, SampleResult, TurnFigures

from ..devices.base import Device
from ..devices.types import DeviceInfo
from ..errors import DeviceError
from ..models import ModelSummary
from ..telemetry import android as tel
from ..telemetry.benchmark_output import parse_benchmark_output
from .base import RunnerEvents, RunOptions, Staged

DRIVER = Path(__file__).resolve().parents[2] / "android_runner" / "driver.sh"
RUNNER_NAME = "litert_lm_advanced_main"
STORAGE_MARGIN_MB = 64.0  # runner, libs, media and outputs next to the model
RAM_FRACTION = 0.8  # a model larger than this share of RAM will not run (weights + KV cache + OS)
TIMEOUT_RC = 124
SAMPLE_FILES = ("stdout", "stderr", "trace.tsv", "battery_before", "battery_after", "thermal_before",
                "thermal_after", "cooldown_ms")  # fmt: skip


# ---------------------------------------------------------------- preflight (pure)


def preflight(info: DeviceInfo, model_bytes: int, *, model_on_device: bool = False) -> str:
    """Why this phone cannot take the model ("" when it can)."""
    model_mb = model_bytes / 2**20
    need_mb = STORAGE_MARGIN_MB + (0.0 if model_on_device else model_mb)
    if info.free_storage_mb is not None and info.free_storage_mb < need_mb:
        return (f"needs {need_mb:.0f} MB free in /data/local/tmp for the model and runner, "
                f"the phone has {info.free_storage_mb:.0f} MB")  # fmt: skip
    if info.ram_mb is not None and model_mb > info.ram_mb * RAM_FRACTION:
        return f"the model ({model_mb:.0f} MB) cannot fit in this phone's RAM ({info.ram_mb:.0f} MB)"
    return ""


# ---------------------------------------------------------------- rendering (files only)


@dataclass(frozen=True)
class Rendered:
    n: int  # sample folder number, 1-based in job order
    id: str
    turns: int
    skip_reason: str = ""  # set: not run on the phone (status unsupported)


def _flat(text: str) -> str:
    """One line per turn on stdin: newlines inside a turn become spaces."""
    return " ".join(text.splitlines())


def render_job(
    items: Sequence[JobItem], out: Path, device_job: PurePosixPath, common_flags: Sequence[str]
) -> list[Rendered]:
    """Write index.tsv, common_flags and samples/<n>/ files under out; media as absolute device tags."""
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
        # No per-sample flags today: constrained decoding (--constraint_regex) stays off on every device
        # kind, so a structured-output score measures the model itself, comparably across devices.
        (folder / "flags").write_text("", encoding="utf-8")
        index.append(f"{n}\t{int(item.max_output_tokens)}\t{1 if multi else 0}\n")
        rendered.append(Rendered(n, item.id, len(texts)))
    (out / "index.tsv").write_text("".join(index), encoding="utf-8")
    (out / "common_flags").write_text("".join(f + "\n" for f in common_flags), encoding="utf-8")
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


def parse_trace(text: str) -> TracePeaks:
    """trace.tsv rows (uptime_ms, VmRSS, VmHWM, VmSwap, RssAnon, RssFile in kB) -> peaks in MB."""
    cols: list[list[int]] = [[], [], [], [], [], []]
    for line in text.splitlines():
        cells = line.split("\t")
        if len(cells) < 3:
            continue
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

    return TracePeaks(mb(cols[0]), mb(cols[1]), mb(cols[2]), mb(cols[3]), mb(cols[4]), mb(cols[5]))


def _thermal(battery_text: str, thermal_text: str) -> dict | None:
    if not battery_text and not thermal_text:
        return None
    b, t = tel.parse_battery(battery_text), tel.parse_thermal(thermal_text)
    return {"battery_temp_c": b.temperature_c, "battery_pct": b.level_pct, "thermal_status": t.status,
            "max_temp_c": t.max_temp_c}  # fmt: skip


def build_result(
    r: Rendered, rc: int, wall_ms: float | None, files: Mapping[str, str], opts: RunOptions
) -> SampleResult:
    """One sample's driver outputs -> SampleResult. Peak = max(binary's figure, VmHWM, VmRSS+VmSwap)."""
    bench = parse_benchmark_output(files.get("stdout", ""), files.get("stderr", ""))
    peaks = parse_trace(files.get("trace.tsv", ""))
    output = bench.answer
    lines = output.splitlines()
    if r.turns > 1 and len(lines) == r.turns:  # one answer line per turn: keep the last turn's
        output = lines[-1]
    sig = rc - 128 if 128 < rc < 160 else None
    if rc == TIMEOUT_RC:
        status = "timeout"
    elif bench.failure == "oom" or sig == 9:
        status = "oom"
    elif sig is not None or bench.failure == "opencl_crash":
        status = "crash"
    elif rc != 0 or bench.failure:
        status = "error"
    else:
        status = "ok"
    error = ""
    if status != "ok":
        why = bench.failure or ("timed out" if status == "timeout" else f"exit code {rc}")
        if bench.failure and rc != 0:
            why += f" (exit code {rc})"
        tail = "\n".join(files.get("stderr", "").strip().splitlines()[-8:])
        error = f"{why}: {bench.detail}" if bench.detail else why
        if tail and bench.detail not in tail:
            error += f"\n{tail}"
    turns = tuple(
        TurnFigures(prefill_tokens=p.tokens if p else None, prefill_tps=p.tps if p else None,
                    decode_tokens=d.tokens if d else None, decode_tps=d.tps if d else None)
        for p, d in _zip_longest(bench.prefill, bench.decode)
    )  # fmt: skip
    candidates = [v for v in (bench.peak_ram_mb, peaks.hwm_mb, peaks.rss_plus_swap_mb, peaks.rss_mb) if v]
    backend = opts.backend
    if "gpu_unavailable" in bench.warnings and backend == "gpu":
        backend = "gpu->cpu"  # the binary fell back: say so on the row
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
        peak_rss_mb=max(candidates) if candidates else None,
        peak_hwm_mb=peaks.hwm_mb,
        peak_anon_mb=peaks.anon_mb,
        peak_file_mb=peaks.file_mb,
        peak_swap_mb=peaks.swap_mb,
        turns=turns,
        backend=backend,
        threads=opts.threads,
        trace=f"samples/{r.n}/trace.tsv",
        thermal_before=_thermal(files.get("battery_before", ""), files.get("thermal_before", "")),
        thermal_after=_thermal(files.get("battery_after", ""), files.get("thermal_after", "")),
        cooldown_s=_cooldown_s(files.get("cooldown_ms", "")),
    )


def _cooldown_s(text: str) -> float | None:
    """The driver's `cooldown_ms` file: milliseconds waited, absent when no cooldown was asked."""
    text = text.strip()
    return int(text) / 1000.0 if text.isdigit() else None


def _zip_longest(a, b):
    for i in range(max(len(a), len(b))):
        yield (a[i] if i < len(a) else None, b[i] if i < len(b) else None)


# ---------------------------------------------------------------- the adapter (effects)


class AndroidDriverRunner:
    """RunnerAdapter for phones: stage -> run driver.sh streaming its lines -> collect."""

    name = "android"

    def __init__(self, device: Device) -> None:
        self.device = device
        self.rendered: list[Rendered] = []

    def _binary(self, device: Device) -> Path:
        binary = getattr(device, "runner_binary", None)
        if binary is None or not Path(binary).is_file():
            raise DeviceError(
                f"no {RUNNER_NAME} binary for this phone" + (f" (not found: {binary})" if binary else ""),
                where=device.name,
                fix=f"build {RUNNER_NAME} (bazel --config=android_arm64) and set `runner:` for the phone in "
                "devices.yaml, or EDGEFARM_ANDROID_RUNNER=/path/to/it",
            )
        return Path(binary)

    def stage(self, device: Device, bundle: Path, model: ModelSummary, opts: RunOptions) -> Staged:
        binary = self._binary(device)
        root = PurePosixPath(str(device.workdir))
        model_remote = root / "models" / model.sha256[:16] / model.path.name
        remote_sha = getattr(device, "remote_sha256", None)
        on_device = bool(remote_sha) and remote_sha([model_remote]).get(str(model_remote)) == model.sha256
        reason = preflight(device.info(), model.size_bytes, model_on_device=on_device)
        if reason:
            raise DeviceError(f"skipped: {reason}", where=device.name,
                              fix="free storage/RAM on the phone or choose a smaller model")  # fmt: skip
        model_push = device.push(model.path, model_remote)
        job = root / "runs" / opts.run_id / "job"
        other = device.push(binary, root / "bin" / RUNNER_NAME)
        for lib in getattr(device, "libs", ()):
            lib = Path(lib)
            other += device.push(lib, root / "lib" / lib.name if lib.is_file() else root / "lib")
        other += device.push(DRIVER, root / "driver" / "driver.sh")
        items = [
            JobItem.from_json(ln)
            for ln in (bundle / "job.jsonl").read_text("utf-8").splitlines()
            if ln.strip()
        ]
        flags = [f"--model_path={model_remote}", f"--backend={opts.backend}",
                 f"--cache_dir={root / 'cache' / model.sha256[:16]}"]  # fmt: skip
        if model.vision:
            flags.append("--vision_backend=cpu")
        if model.audio:
            flags.append("--audio_backend=cpu")
        if opts.threads:
            flags.append(f"--num_cpu_threads={opts.threads}")
        if opts.max_num_tokens:
            flags.append(f"--max_num_tokens={opts.max_num_tokens}")
        with tempfile.TemporaryDirectory() as tmp:
            self.rendered = render_job(items, Path(tmp), job, flags)
            # always written, so a resumed run without --cooldown-c does not inherit an old gate
            gate = (
                f"{round(opts.cooldown_c * 10)} {opts.cooldown_max_s:.0f}\n"
                if opts.cooldown_c is not None
                else "off\n"
            )
            (Path(tmp) / "cooldown").write_text(gate, encoding="utf-8")
            other += device.push(Path(tmp), job)
        if (bundle / "media").is_dir():
            other += device.push(bundle / "media", job / "media")
        cache = root / "cache" / model.sha256[:16]
        ex = device.run(["sh", "-c", 'chmod 755 "$1" && mkdir -p "$2"', "sh", str(root / "bin" / RUNNER_NAME),
                         str(cache)], timeout_s=30)  # fmt: skip
        if ex.code != 0:
            raise DeviceError(f"cannot prepare the runner: {ex.output_tail.strip()}", where=device.name,
                              fix="check that /data/local/tmp is writable and not mounted noexec on this phone")  # fmt: skip
        return Staged(root=root, model=model_remote, job=job, model_push=model_push, other_push=other)

    def _fetch(self, device: Device, staged: Staged, n: int) -> dict[str, str]:
        """The small per-sample files, in ONE shell call (a random marker separates them)."""
        marker = f"@@EDGEFARM-{secrets.token_hex(8)}@@"
        folder = staged.job / "samples" / str(n)
        script = "".join(f'echo "{marker} {f}"; cat "{folder / f}" 2>/dev/null; echo; ' for f in SAMPLE_FILES)
        lines: list[str] = []
        ex = device.run(["sh", "-c", script], timeout_s=60, on_line=lines.append)
        if ex.code != 0:
            raise DeviceError(f"cannot read the outputs of sample {n}", where=device.name,
                              fix="check the phone's storage; rerun with --resume")  # fmt: skip
        files: dict[str, list[str]] = {}
        current = None
        for line in lines:
            if line.startswith(marker + " "):
                current = line[len(marker) + 1 :]
                files[current] = []
            elif current is not None:
                files[current].append(line)
        return {k: "\n".join(v[:-1] if v and v[-1] == "" else v) for k, v in files.items()}

    def _done(self, device: Device, staged: Staged) -> dict[int, tuple[int, float | None]]:
        lines: list[str] = []
        device.run(["cat", str(staged.job / "done.tsv")], timeout_s=60, on_line=lines.append)
        done = {}
        for line in lines:
            cells = line.split("\t")
            if len(cells) >= 2 and cells[0].isdigit() and cells[1].lstrip("-").isdigit():
                wall = float(cells[2]) if len(cells) > 2 and cells[2].isdigit() else None
                done[int(cells[0])] = (int(cells[1]), wall)
        return done

    def execute(self, device: Device, staged: Staged, items: Sequence[JobItem], opts: RunOptions,
                events: RunnerEvents) -> list[SampleResult]:  # fmt: skip
        by_n = {r.n: r for r in self.rendered} if self.rendered else {
            n: Rendered(n, it.id, len(it.turns)) for n, it in enumerate(items, 1)}  # fmt: skip
        results: dict[str, SampleResult] = {}

        def finish(n: int, rc: int, wall_ms: float | None) -> None:
            r = by_n.get(n)
            if r is None:
                return
            res = build_result(r, rc, wall_ms, self._fetch(device, staged, n), opts)
            results[r.id] = res
            events.result(res)

        for r in by_n.values():
            if r.skip_reason:
                results[r.id] = SampleResult(
                    id=r.id, status="unsupported", error=r.skip_reason, backend=opts.backend
                )
                events.result(results[r.id])
        for n, (rc, wall) in sorted(self._done(device, staged).items()):
            finish(n, rc, wall)
        left = [r for r in by_n.values() if r.id not in results]
        if left:
            events.ready(None)

            def on_line(line: str) -> None:
                parts = line.split()
                if len(parts) >= 3 and parts[0] == "EDGEFARM" and parts[1] == "BEGIN" and parts[2].isdigit():
                    r = by_n.get(int(parts[2]))
                    if r:
                        events.begin(r.id)
                elif len(parts) >= 4 and parts[:2] == ["EDGEFARM", "END"] and parts[2].isdigit():
                    wall = float(parts[4]) if len(parts) > 4 and parts[4].isdigit() else None
                    finish(int(parts[2]), int(parts[3]), wall)
                elif parts[:2] == ["EDGEFARM", "NOTE"]:
                    events.note(line.split("NOTE", 1)[1].strip())

            argv = [
                "sh",
                str(staged.root / "driver" / "driver.sh"),
                str(staged.job),
                str(staged.root / "bin" / RUNNER_NAME),
                f"{opts.sample_timeout_s:g}",
                str(staged.root / "lib"),
            ]
            per_sample_s = opts.sample_timeout_s + opts.cooldown_wait_s + 30
            ex = device.run(argv, timeout_s=120 + len(left) * per_sample_s, on_line=on_line)
            if ex.code != 0:
                raise DeviceError(f"the on-phone driver failed ({'timed out' if ex.timed_out else ex.code}): "
                                  f"{ex.output_tail.strip()[-600:]}", where=device.name,
                                  fix="see the message above; rerun with --resume to continue")  # fmt: skip
            for n, (rc, wall) in sorted(self._done(device, staged).items()):  # END lines lost in transit
                if by_n.get(n) and by_n[n].id not in results:
                    finish(n, rc, wall)
        return [results[it.id] for it in items if it.id in results]

    def collect(self, device: Device, staged: Staged, out_dir: Path) -> None:
        """Pull done.tsv and every sample's stdout/stderr/trace into out_dir (traces at the end)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            device.pull(staged.job / "done.tsv", out_dir / "done.tsv")
        except DeviceError:
            return
        (out_dir / "ids.tsv").write_text("".join(f"{r.n}\t{r.id}\n" for r in self.rendered), encoding="utf-8")
        for r in self.rendered:
            for name in ("stdout", "stderr", "trace.tsv"):
                try:
                    device.pull(
                        staged.job / "samples" / str(r.n) / name, out_dir / "samples" / str(r.n) / name
                    )
                except DeviceError:
                    continue
