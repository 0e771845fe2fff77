"""Host side of phones: stage the runner and job, run `driver.sh`, stream results, stop it for certain.

Two runners run under the same driver (android_runner/driver.sh):
- `native` (the default when built): edgefarm's C runner on LiteRT-LM's C API, ONE model load per
  run, the same conversation JSON as every other device (android_native.py);
- `upstream`: the upstream `litert_lm_advanced_main`, one process per sample (android_upstream.py).
Every remote command takes paths as positional arguments: nothing derived from a run or a
dataset is pasted into a command string.

Size: over 400 lines because staging, the driver command, its stop path and collecting share the
phone's paths and the runner choice; reading each runner's output is in android_native.py and
android_upstream.py.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from android_runner.backend import BACKEND_UNAVAILABLE_KINDS, engine_failure
from android_runner.contract import JobItem, JobPart, SampleResult, loads_bounded
from android_runner.conversation import MEDIA_KINDS, unsupported_reason
from android_runner.settings import SETTINGS_FILE
from android_runner.status import MODEL_UNLOADABLE_EXIT, SIGABRT, SIGKILL, Status, signal_from_shell_status

from ..bundled import REPO_ROOT
from ..devices.files import cached_sha256, push_pairs
from ..devices.types import DeviceInfo, Exit, PushStats
from ..devices.units import job_folder
from ..errors import DeviceError, ModelError, backend_unavailable
from ..models import ModelSummary
from ..telemetry.energy import settle
from ..telemetry.pass_energy import pass_energy
from . import android_native as native
from . import android_serve
from . import android_upstream as upstream
from .android_choice import (
    Phone,
    RunnerChoice,
    choose_runner,
    phone_checks,
    preflight,
    runner_places,
    runtime_version,
    version_stamp,
)
from .android_files import marked_files, new_marker, read_phone_files
from .android_kills import available_mb, kill_evidence
from .android_snapshots import SNAPSHOT_FILES
from .android_storage import Halt, keep_recorded, refused_sample, refused_write, storage_full
from .base import Check, Need, RunnerEvents, RunOptions, Staged
from .serve_link import FolderRequests

DRIVER = REPO_ROOT / "android_runner" / "driver.sh"


class AndroidRunner:
    """RunnerAdapter for phones: stage -> `driver.sh native|upstream` streaming its lines -> collect."""

    name = "android"

    def __init__(self, device: Phone) -> None:
        self.device = device
        self.choice: RunnerChoice | None = None
        self.numbers: dict[int, JobItem] = {}  # n -> item sent to the phone
        self.host_rows: dict[str, SampleResult] = {}  # decided on the host: unsupported, refused
        self.rendered: list[upstream.Rendered] = []
        # id -> (result line, its row from the line alone): the snapshots are added at the end
        self.native_lines: dict[str, tuple[dict, SampleResult]] = {}
        self.collected: dict[str, str] | None = None  # the phone's files read at the end of execute
        self.streamed: set[int] = set()  # sample numbers whose RESULT line came over stdout (native)
        self.available_mb: float | None = None  # the phone's MemAvailable when execute started
        self._events_note: Callable[[str], None] = lambda _text: None

    # ---------------------------------------------------------------- checks

    def checks(self, info: DeviceInfo, need: Need, env: Mapping[str, str]) -> tuple[Check, ...]:
        """What a run needs on this phone beyond answering (android_choice.phone_checks)."""
        return phone_checks(self.device, info, need, env)

    # ---------------------------------------------------------------- stage

    def stage(self, device: Phone, bundle: Path, model: ModelSummary, opts: RunOptions) -> Staged:
        choice = self.choice = choose_runner(device)
        root = PurePosixPath(str(device.workdir))
        model_remote = root / "models" / model.sha256[:16] / model.path.name
        job = root / "runs" / opts.run_id / job_folder(device.name)
        cache = root / "cache" / model.sha256[:16]
        bin_remote, lib_dir = runner_places(device, choice)
        items = [
            JobItem.from_json(ln)
            for ln in (bundle / "job.jsonl").read_text("utf-8").splitlines()
            if ln.strip()
        ]
        if self.choice.kind != "native" and any(it.bench for it in items):
            raise DeviceError("the upstream litert_lm_advanced_main binary has no bench mode (fixed shapes, "
                              "exact token counts)", where=device.name,
                              fix="bench this phone with edgefarm's native runner (drop `runner: upstream`)")  # fmt: skip
        items, media = shared_media(items, bundle, root / "media")
        with tempfile.TemporaryDirectory() as tmp:
            out, keep = Path(tmp) / "job", Path(tmp) / "cache.keep"
            out.mkdir()
            keep.write_bytes(b"")  # pushed into the runtime's cache folder, which then exists
            self._render(items, out, job, model, opts.backend)
            # the runner's settings, one file for the runner and the driver (cooldown gate, the upstream
            # binary's flags); always written, so a resumed run never inherits an old run's settings
            lib = lib_dir / choice.lib.name if choice.kind == "native" and choice.lib is not None else None
            settings = opts.runner_settings(model=model_remote, cache=cache, vision=model.vision,
                                            audio=model.audio, lib=lib, allow_runtime=choice.allow_runtime)  # fmt: skip
            (out / SETTINGS_FILE).write_text(settings.render(), encoding="utf-8")
            # model, runner, libraries, driver, job files and media: one hash check, one sync connection
            pushes = [(model.path, model_remote), (choice.binary, bin_remote)]
            if choice.lib is not None:  # the library and, ALWAYS, its VERSION (the runner checks what it names)
                stamp = version_stamp(choice.lib, Path(tmp))
                pushes += [(choice.lib, lib_dir / choice.lib.name), (stamp, lib_dir / "VERSION")]
            pushes += [(lib, lib_dir / lib.name if lib.is_file() else lib_dir) for lib in device.libs]
            pushes += [(DRIVER, root / "driver" / "driver.sh"), (out, job), *media]
            pushes.append((keep, cache / ".edgefarm"))  # no `mkdir` call of its own
            # ONE sha256sum over every target, the model included: the preflight asks whether the model
            # is there already, the push what to skip (a multi-GB model is hashed on the phone once)
            have = device.remote_sha256(
                [dst for local, remote in pushes for _, dst in push_pairs(local, remote, device.name)]
            )
            notes = _model_copies(device, model, have.get(str(model_remote)), model_remote)
            tokens = opts.max_num_tokens or model.max_context_tokens
            floor = model.facts.floor_bytes(tokens) if model.facts else None
            on_device = have.get(str(model_remote)) == model.sha256
            # what push_many will send besides the model: runner, ~130 MB library, media, job files
            others = [pair for local, remote in pushes[1:] for pair in push_pairs(local, remote, device.name)]
            to_push = sum(
                src.stat().st_size for src, dst in others if have.get(str(dst)) != cached_sha256(src)
            )
            reason = preflight(device.info(), model.size_bytes, model_on_device=on_device, floor_bytes=floor,
                               media_bytes=to_push)  # fmt: skip
            if reason:
                raise DeviceError(f"skipped: {reason}", where=device.name,
                                  fix="free storage/RAM on the phone or choose a smaller model")  # fmt: skip
            stats = device.push_many(pushes, have=have)
        model_push, other = stats[0], sum(stats[1:], PushStats())
        identity = {
            "runner": choice.kind,
            "runner_path": str(choice.binary),
            "runner_sha256": cached_sha256(choice.binary),
        }
        if choice.lib is not None:
            identity |= {"runtime_lib": str(choice.lib), "runtime_sha256": cached_sha256(choice.lib),
                         "runtime_version": runtime_version(choice.lib)}  # fmt: skip
        return Staged(root=root, model=model_remote, job=job, model_push=model_push, other_push=other,
                      runner=identity, notes=notes)  # fmt: skip

    def _render(self, items, out: Path, job: PurePosixPath, model: ModelSummary, backend: str) -> None:
        """Write the job files of the chosen runner under out; host-decided rows go to host_rows."""
        assert self.choice is not None
        self.numbers, self.host_rows = {}, {}
        for n, item in enumerate(items, 1):
            why = item.refused or unsupported_reason(item, vision=model.vision, audio=model.audio)
            if why:
                status = Status.ERROR if item.refused else Status.UNSUPPORTED
                self.host_rows[item.id] = SampleResult(id=item.id, status=status, error=why, backend=backend)
            else:
                self.numbers[n] = item
        if self.choice.kind == "native":
            (out / native.JOB_FILE).write_bytes(native.render_job(sorted(self.numbers.items()), job))
            return
        by_id = {it.id: it for it in self.numbers.values()}
        self.rendered = upstream.render_job(list(by_id.values()), out, job)  # numbers them 1..k
        self.numbers = {r.n: by_id[r.id] for r in self.rendered}

    # ---------------------------------------------------------------- device files

    def _fetch(self, device: Phone, folder: PurePosixPath, names: Sequence[str]) -> dict[str, str]:
        """Small files of one folder in ONE shell call; a random marker line separates them."""
        marker = new_marker()
        script = 'm=$1; d=$2; shift 2; for f in "$@"; do echo "$m $f"; cat "$d/$f" 2>/dev/null; echo; done'
        lines: list[str] = []
        ex = device.run(
            ["sh", "-c", script, "sh", marker, str(folder), *names], timeout_s=60, on_line=lines.append
        )
        if ex.code != 0:
            raise DeviceError(f"cannot read {folder}", where=device.name,
                              fix="check the phone's storage; rerun with --resume")  # fmt: skip
        return marked_files(lines, marker)

    def _lines(self, device: Phone, path: PurePosixPath) -> list[str]:
        lines: list[str] = []
        device.run(["cat", str(path)], timeout_s=60, on_line=lines.append)
        return lines

    def stop(self, device: Phone, staged: Staged) -> Exit:
        """Stop this job's driver and runner on the phone, for certain (Ctrl-C, a lost connection)."""
        assert self.choice is not None
        argv = [
            "sh",
            str(staged.root / "driver" / "driver.sh"),
            "stop",
            str(staged.job),
            self.choice.binary.name,
        ]
        return device.run(argv, timeout_s=30)

    # ---------------------------------------------------------------- serve

    def serve(self, device: Phone, staged: Staged, opts: RunOptions, events: RunnerEvents,
              requests: FolderRequests) -> Exit:  # fmt: skip
        """`edgefarm serve`: the native runner loaded until events.stop (runners/android_serve.py), taking
        `requests` from its request folder; one that stops before its model is ready raises as in a run (a
        backend the phone lacks: BackendUnavailable)."""
        assert self.choice is not None
        fatal: list[str] = []
        loads: list[float | None] = []

        def ready(init_ms: float | None) -> None:
            loads.append(init_ms)
            events.ready(init_ms)

        ex = android_serve.serve(device, staged, self.choice, opts, replace(events, ready=ready), _json_record,
                                 fatal.append)  # fmt: skip
        if not loads and not events.stop.is_set():
            self._fail(device, staged, ex, fatal, opts.backend)
        return ex

    @staticmethod
    def serve_requests(device: Phone, staged: Staged, scratch: Path) -> FolderRequests:
        """How the serving runner gets its requests: job files of one sample in its request folder."""
        return FolderRequests(device, staged.job, lambda item: android_serve.request_file(item, staged), scratch)

    # ---------------------------------------------------------------- execute

    def execute(self, device: Phone, staged: Staged, items: Sequence[JobItem], opts: RunOptions,
                events: RunnerEvents) -> list[SampleResult]:  # fmt: skip
        assert self.choice is not None
        self._events_note, self.streamed = events.note, set()
        self.cut: int | None = None  # the phone's storage refused a write at this sample: none from it on
        results: dict[str, SampleResult] = {}
        for row in self.host_rows.values():
            results[row.id] = row
            events.result(row)
        native_mode = self.choice.kind == "native"
        finish = self._native_finisher(device, staged, opts, results, events) if native_mode else \
            self._upstream_finisher(device, staged, opts, results, events)  # fmt: skip
        self._before_start(device, staged, finish)  # the phone's MemAvailable; what it recorded before
        left = [it for it in self.numbers.values() if it.id not in results]
        if not left or events.stop.is_set():
            self._finish_from_files(device, staged, opts, results, finish)
            return self._settled(staged, [results[it.id] for it in items if it.id in results])
        fatal: list[str] = []
        halt, full = Halt(events.stop), []  # the first note of a refused write (android_storage.py)

        def on_line(line: str) -> None:
            kind, _, rest = (
                line.partition(" ")[2].partition(" ") if line.startswith("EDGEFARM ") else ("", "", "")
            )
            if kind == "BEGIN" and rest.strip().isdigit() and int(rest) in self.numbers:
                events.begin(self.numbers[int(rest)].id)
            elif kind == "READY":
                ready = _json_record(rest)
                events.ready(ready.get("init_ms"))
                applied = ready.get("settings")  # what the runner gave the runtime (its settings file's)
                if isinstance(applied, dict) and isinstance(staged.runner, dict):
                    staged.runner["applied_settings"] = applied
            elif kind == ("RESULT" if native_mode else "END"):
                n = finish(rest)
                if native_mode and n is not None and (self.cut is None or n < self.cut):
                    self.streamed.add(n)
            elif kind == "NOTE":
                events.note(rest.strip())
                if not full and refused_write(rest):
                    full.append(rest.strip())
                    named = refused_sample(rest)
                    self.cut = named if named is not None else 0  # 0: no row recorded from now on
                    halt.full.set()
            elif kind == "FATAL":
                fatal.append(rest.strip())

        argv = ["sh", str(staged.root / "driver" / "driver.sh"), self.choice.kind, str(staged.job),
                str(staged.root / "bin" / self.choice.binary.name), str(staged.root / "lib")]  # fmt: skip
        per_sample_s = opts.sample_timeout_s + opts.cooldown_wait_s + 30
        ex = device.run(argv, timeout_s=120 + opts.settle_wait_s + len(left) * per_sample_s, on_line=on_line,
                        cancel=halt)
        if full:  # the phone's storage is full: stop there, keep what finished before it
            self.stop(device, staged)
            self._finish_from_files(device, staged, opts, results, finish)
            if not native_mode:  # its lines are whole rows; done.tsv's point at files that may be cut short
                keep_recorded(device, staged.job / "done.tsv", (self.collected or {}).get("done.tsv", ""),
                              lambda n: n in self.numbers and self.numbers[n].id in results)  # fmt: skip
            for row in results.values():
                events.result(row)  # the kept rows with what the phone's files add (snapshots)
            raise storage_full(device, staged.job, full[0])
        if events.stop.is_set():
            self.stop(device, staged)
        elif ex.code != 0:
            self._fail(device, staged, ex, fatal, opts.backend)
        self._finish_from_files(device, staged, opts, results, finish)  # the phone's files are the truth
        return self._settled(staged, [results[it.id] for it in items if it.id in results])

    @staticmethod
    def _settled(staged: Staged, rows: list[SampleResult]) -> list[SampleResult]:
        """Energy decided once for the phone (its gauge's unit and period over the whole pass), and the
        pass's energy from the gauge's coulomb counter in run.json's runner record."""
        rows = settle(rows)
        whole = pass_energy(rows)
        if whole is not None and isinstance(staged.runner, dict):
            staged.runner["pass_energy"] = whole.to_json()
        return rows

    def _fail(self, device: Phone, staged: Staged, ex: Exit, fatal: list[str], backend: str) -> None:
        tail = ex.output_tail.strip()[-600:]
        runtime_log = self._lines(device, staged.job / "runner.log")[-400:] if self.choice.kind == "native" else []
        log = "\n".join(runtime_log[-12:])
        said = [_json_record(f) for f in fatal]  # the runner's FATAL lines: {"error", "fix", "exit_code"}
        runtime = next((d for d in said if d.get("exit_code") == RUNTIME_EXIT), None)
        if self.choice.kind == "native" and runtime is not None:
            raise DeviceError(str(runtime.get("error", ""))[:2000], where=device.name,
                              fix=str(runtime.get("fix") or "push the pinned runtime library"))  # fmt: skip
        words = [str(d.get("error") or "") or f for d, f in zip(said, fatal)]
        unloadable = (
            ex.code == MODEL_UNLOADABLE_EXIT or signal_from_shell_status(ex.code) == SIGABRT or bool(fatal)
        )
        if self.choice.kind == "native" and unloadable:
            kind, said = engine_failure("\n".join([*words, *runtime_log]), backend)
            if kind in BACKEND_UNAVAILABLE_KINDS:  # the backend asked, not the model (as python_runner.py)
                raise backend_unavailable(backend, kind, said, f"{device.name} (model {staged.model})")
            raise ModelError(
                "the model could not be loaded on the phone"
                + (f": {words[-1]}" if words else f" (exit {ex.code})")
                + (f"\nruntime said:\n{log}" if log else ""),
                where=f"{device.name} (model {staged.model})",
                fix="check that the model file is a complete, valid .litertlm for this runtime "
                "(run `litert-lm-peek` on it, or rebuild/re-download it)",
            )
        raise DeviceError(f"the on-phone driver failed ({'timed out' if ex.timed_out else ex.code}): {tail}",
                          where=device.name, fix="see the message above; rerun with --resume to continue")  # fmt: skip

    def _before_start(self, device: Phone, staged: Staged, finish: Callable[[str], int | None]) -> None:
        """ONE shell call before the runner starts: the phone's MemAvailable now (what a runner started
        now can have: a kill's cause, android_kills.py) and what the phone already recorded (an earlier
        run, or lines lost in transit), fed to finish."""
        name = "results.jsonl" if self.choice.kind == "native" else "done.tsv"
        marker = new_marker()
        script = 'cat /proc/meminfo 2>/dev/null; echo "$1"; cat "$2" 2>/dev/null; true'
        lines: list[str] = []
        device.run(
            ["sh", "-c", script, "sh", marker, str(staged.job / name)], timeout_s=60, on_line=lines.append
        )
        cut = lines.index(marker) if marker in lines else len(lines)
        self.available_mb = available_mb("\n".join(lines[:cut]))
        for line in lines[cut + 1 :]:
            finish(line if name == "results.jsonl" else line.replace("\t", " "))

    def _native_finisher(self, device, staged, opts, results, events) -> Callable[[str], int | None]:
        """Each result line becomes its row at once; the hook's snapshot files are read for all rows in
        one call at the end (`_finish_from_files`), so no per-sample device call delays the stream.
        The finisher returns the line's sample number (None: a torn or foreign line), parsed once."""
        self.native_lines = {}

        def finish(text: str) -> int | None:
            line = native.parse_line(text)
            if line is None:
                return None
            item = self.numbers.get(line["n"])
            if item is None or item.id in results or (self.cut is not None and line["n"] >= self.cut):
                return line["n"]  # a row at or after a refused write is not recorded: it runs again
            tail = heat = ""
            if line.get("status") == native.DIED:
                tail = "\n".join(self._lines(device, staged.job / "runner.log")[-8:])
                pid, code = line.get("pid"), line.get("exit_code")  # the driver's own died line
                if (
                    isinstance(code, int)
                    and signal_from_shell_status(code) == SIGKILL
                    and isinstance(pid, int)
                ):
                    records, heat = kill_evidence(device, pid)
                    tail = "\n".join(x for x in (tail, records) if x)
            row = native.line_row(
                line, item.id, opts, tail, self.available_mb, item.max_output_tokens, heat
            )  # built once
            results[item.id] = native.with_snapshots(row, line, opts, {})
            self.native_lines[item.id] = (line, row)
            events.result(results[item.id])
            return line["n"]

        return finish

    def _end_files(self, device: Phone, staged: Staged) -> dict[str, str]:
        """ONE shell call at the end of a run (android_files.py): the runner's records (results, log,
        loads; done.tsv for the upstream binary) and every sample's files (the hook's snapshots;
        upstream: stdout, stderr, trace)."""
        if self.choice.kind == "native":
            top = ["results.jsonl", "runner.log", "loads.tsv"]
            return read_phone_files(device, staged.job, top, SNAPSHOT_FILES)
        return read_phone_files(device, staged.job, ["done.tsv"], ["stdout", "stderr", "trace.tsv"])

    def _finish_from_files(self, device: Phone, staged: Staged, opts: RunOptions, results, finish) -> None:
        """The end of a run from the phone's files (one call): result lines lost in transit are replayed,
        native rows get their hook snapshots, and collect() keeps the records without asking again."""
        files = self._end_files(device, staged)
        native_mode = self.choice.kind == "native"
        on_phone: set[int] = set()
        torn = 0
        for line in files.get("results.jsonl" if native_mode else "done.tsv", "").splitlines():
            n = finish(line if native_mode else line.replace("\t", " "))
            if n is not None:
                on_phone.add(n)
            elif line.strip():
                torn += 1
        self.collected = files
        if native_mode:
            self._check_phone_copy(on_phone, torn)
        if not native_mode or not self.native_lines:
            return
        log = native.backend_lines(files.get("runner.log", ""))
        for item_id, (line, row) in self.native_lines.items():
            mine = {f: files.get(f"samples/{line['n']}/{f}", "") for f in SNAPSHOT_FILES}
            results[item_id] = native.with_snapshots(row, line, opts, mine, log)
        self.native_lines = {}

    def _check_phone_copy(self, on_phone: set[int], torn: int) -> None:
        """The phone's results file (the sample numbers of its lines, and how many lines were torn)
        against what came over stdout: a row missing there (storage full, a torn line) is said once, as
        a note on the outcome, so a later resume from the phone is not trusted blindly. The rows
        themselves are kept (they came over stdout)."""
        missing = sorted(self.streamed - on_phone)
        if missing or torn:
            shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
            self._events_note(
                f"warning: the phone's results file lacks {len(missing)} row(s) that came over stdout"
                + (f" (samples {shown})" if missing else "")
                + (f" and has {torn} torn line(s)" if torn else "")
                + ": its storage may be full; the rows here are complete, but the phone's copy cannot be resumed from"
            )

    def _upstream_finisher(self, device, staged, opts, results, events) -> Callable[[str], None]:
        by_n = {r.n: r for r in self.rendered}

        def finish(text: str) -> None:
            cells = text.split()
            if len(cells) < 2 or not cells[0].isdigit() or not cells[1].lstrip("-").isdigit():
                return
            r = by_n.get(int(cells[0]))
            if r is None or r.id in results or (self.cut is not None and r.n >= self.cut):
                return  # a sample at or after a refused write is not recorded (its files may be cut short)
            wall = float(cells[2]) if len(cells) > 2 and cells[2].isdigit() else None
            rc = int(cells[1])
            files = self._fetch(device, staged.job / "samples" / str(r.n), upstream.SAMPLE_FILES)
            pid = files.get("pid", "").strip()
            if signal_from_shell_status(rc) == SIGKILL and pid.isdigit():  # the phone's record of the kill
                records, heat = kill_evidence(device, int(pid))
                files = {**files, "logcat": records, "heat": heat}
            results[r.id] = upstream.build_result(r, rc, wall, files, opts, self.available_mb)
            events.ready(results[r.id].init_ms)  # one model load per sample
            events.result(results[r.id])

        return finish

    # ---------------------------------------------------------------- collect

    def collect(self, device: Phone, staged: Staged, out_dir: Path) -> None:
        """Keep the runner's records in out_dir (traces of the upstream runner too): read at the end of
        execute, or now in one call."""
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "ids.tsv").write_text("".join(f"{n}\t{it.id}\n" for n, it in sorted(self.numbers.items())),
                                         encoding="utf-8")  # fmt: skip
        files = self.collected
        if files is None:
            try:
                files = self._end_files(device, staged)
            except DeviceError:
                return  # the rows are already in the device folder
        keep = {"results.jsonl", "runner.log", "loads.tsv", "done.tsv"}
        for name, text in files.items():
            if name in keep or (self.choice.kind == "upstream" and name.startswith("samples/")):
                path = out_dir / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text + "\n" if text else "", encoding="utf-8")


def shared_media(
    items: Sequence[JobItem], bundle: Path, folder: PurePosixPath
) -> tuple[list[JobItem], list[tuple[Path, PurePosixPath]]]:
    """Media by content: each file lives on the phone as FOLDER/<sha256 prefix><ext> (a neutral name),
    pushed once, ever: a rerun of the same dataset pushes no media. The items point there (absolute
    device paths); returns them and the (host file, device path) pairs to push."""
    pushes: dict[PurePosixPath, Path] = {}

    def moved(part: JobPart) -> JobPart:
        local = bundle / part.path
        if part.kind not in MEDIA_KINDS or not part.path or not local.is_file():
            return part
        remote = folder / f"{cached_sha256(local)[:32]}{local.suffix.lower()}"
        pushes[remote] = local
        return replace(part, path=str(remote))

    out = [replace(it, turns=tuple(tuple(moved(p) for p in turn) for turn in it.turns)) for it in items]
    return out, [(local, remote) for remote, local in pushes.items()]


RUNTIME_EXIT = 3  # the native runner: runtime library unusable or not the pinned one (edgefarm_runner.c)
LINE_MAX_BYTES, LINE_MAX_DEPTH = 64 * 1024, 8  # a READY or FATAL line's JSON: small and flat


def _json_record(text: str) -> dict[str, Any]:
    """A device-supplied protocol line's JSON object, parsed under bounds; {} for anything else."""
    try:
        data = loads_bounded(text, LINE_MAX_BYTES, LINE_MAX_DEPTH)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _model_copies(
    device: Phone, model: ModelSummary, on_phone: str | None, remote: PurePosixPath
) -> tuple[str, ...]:
    """The model this host pushes must be the run's (run.json's sha256), and a copy the phone holds
    under the run's name that is not is said (the push then replaces it): a cache is trusted only
    once checked."""
    here = cached_sha256(model.path)
    if here != model.sha256:
        raise DeviceError(
            f"the model file {model.path} does not hash to the run's {model.sha256[:16]}… (it changed since "
            "the run read it)",
            where=device.name,
            fix="restore the model file the run started with, then rerun with --resume",
        )
    if on_phone is not None and on_phone != model.sha256:
        said = f"the phone's copy of the model ({remote}) did not hash to the run's {model.sha256[:16]}…"
        return (said + " (damaged on the phone): pushed again",)
    return ()
