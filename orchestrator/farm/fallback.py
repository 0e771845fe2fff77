"""Stand-in boards: a phone's remaining samples run on a board when the phone is not there.

A board stands in for the phones in its `fallback_for:` (devices.yaml); `--fallback BOARD` makes a
board stand in for every phone of the run. After the farm returns, each phone that was absent at
the start (declared in devices.yaml, not usable) or failed mid-run and did not answer again within
the wait gets its missing samples run on its first usable stand-in, as a separate session in
`devices/<board>-for-<phone>/` (its own job on the board, so nothing collides with the board's own
run). Every such row carries `stood_in_for: <phone>`. The rows are then merged into the phone's
folder (its results.jsonl and report.json: the phone's column, marked) and count in the board's
own figures (run.json `stand_ins`). A phone that comes back within the wait finishes its own
samples instead. Nothing runs twice: the board runs exactly the ids the phone has no row for.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from android_runner.contract import SampleResult

from ..datasets.types import Dataset, Sample
from ..devices.base import Device
from ..devices.kinds import KINDS, first_kind, kind_spec
from ..devices.types import DeviceInfo
from ..errors import ConfigError, EdgefarmError
from ..fsutil import write_json_atomic
from ..inventory import Inventory, select_devices
from .local import Farm
from .run_json import StandIn
from .rundir import device_folder, write_outcome
from .session import DeviceJob, write_results
from .types import DeviceOutcome, Score, StandIns

SERVER_PREFIX = "adb-server-"  # how discovery names an adb server that does not answer
POLL_S = 1.0


@dataclass(frozen=True)
class Need:
    """A phone whose samples (some or all) have no row: why, and which ids."""

    phone: str
    reason: str  # "absent at the start (...)" | "lost mid-run (...)"
    missing: tuple[str, ...]
    lost: bool  # failed mid-run (may come back within the wait); else absent from the start


def stand_in_boards(
    inv: Inventory, cli_boards: Sequence[str], listed: Mapping[str, Sequence[str]] | None = None
) -> dict[str, tuple[str, ...]]:
    """phone name -> the boards that stand in for it, in order: devices.yaml `fallback_for`, then
    every --fallback board (which stands in for any phone). `listed`: boards found elsewhere (a
    cluster's farm hosts: board -> the `fallback_for` of its host's devices.yaml), which --fallback
    may name too."""
    listed = listed or {}
    boards = {e["name"]: e for e in inv.entries if KINDS.get(e["kind"]).board and not e.get("disabled")}
    for name in cli_boards:
        if name not in boards and name not in listed:
            raise ConfigError(
                f"--fallback {name}: no such board in devices.yaml",
                where="--fallback",
                fix=f"name a board (kind: ssh) from devices.yaml: {', '.join(sorted({*boards, *listed})) or '(none declared)'}",
            )
    out: dict[str, list[str]] = {}
    for name, e in boards.items():
        for phone in e.get("fallback_for") or ():
            out.setdefault(str(phone), []).append(name)
    for name, phones in listed.items():
        for phone in phones:
            if name not in out.setdefault(str(phone), []):
                out[str(phone)].append(name)
    out.setdefault("*", [])
    out["*"] += [b for b in cli_boards if b not in out["*"]]
    return {k: tuple(v) for k, v in out.items()}


def boards_for(phone: str, table: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*table.get(phone, ()), *table.get("*", ())]))


def absent_named(
    inv: Inventory, spec: str, table: Mapping[str, Sequence[str]]
) -> tuple[str, tuple[DeviceInfo, ...]]:
    """`--devices NAME,...` naming phones that are not attached but have a stand-in: those names leave
    the list (the run goes ahead; they are 'absent at the start') and come back as DeviceInfo."""
    if spec in ("all", "local"):
        return spec, ()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not any(boards_for(n, table) for n in names):
        return spec, ()
    found = select_devices(inv, "all")  # discovery only: constructors do no I/O, adb lists phones
    attached = {d.name for d in found.devices}
    absent = {
        u.name: u for u in found.unusable if kind_spec(u.kind).phone and not u.name.startswith(SERVER_PREFIX)
    }
    gone = [n for n in names if n not in attached and n in absent and boards_for(n, table)]
    return ",".join(n for n in names if n not in gone), tuple(absent[n] for n in gone)


def needs(
    outcomes: Sequence[DeviceOutcome],
    unusable: Sequence[DeviceInfo],
    samples: Sequence[Sample],
    table: Mapping[str, Sequence[str]],
) -> list[Need]:
    """The phones (with a stand-in) that are missing rows: failed ones, then absent ones. Pure."""
    ids = [s.id for s in samples]
    out: list[Need] = []
    seen: set[str] = set()
    for o in outcomes:
        if not kind_spec(o.kind).phone or not o.error or o.interrupted or not boards_for(o.name, table):
            continue
        have = {r.id for r in o.results}
        missing = tuple(i for i in ids if i not in have)
        if missing:
            first = o.error.splitlines()[0]
            out.append(Need(o.name, f"lost mid-run ({first[:200]})", missing, lost=True))
            seen.add(o.name)
    for u in unusable:
        if not kind_spec(u.kind).phone or u.name in seen or u.name.startswith(SERVER_PREFIX):
            continue  # an adb server that is down is not a phone
        if not boards_for(u.name, table):
            continue
        out.append(Need(u.name, f"{u.state} at the start", tuple(ids), lost=False))
        seen.add(u.name)
    return out


def run_stand_ins(
    run: StandIns,
    outcomes: Sequence[DeviceOutcome],
    *,
    farm: Farm,
    console: Console,
    stop: threading.Event,
    clock: Callable[[], float] = time.monotonic,
) -> list[StandIn]:
    """Wait for lost phones, then run what is still missing on stand-in boards; returns what was done
    (the caller records it in run.json: `stand_ins`, and `devices`: stood_in_devices). Each
    session is a `DeviceJob` on the run's `farm` (a cluster's runs on the device's farm host), with the
    options the plan decides for the device (`run.options_for(device, run_id)`: RunPlan.options_for)."""
    dataset, samples, unusable, run_id, run_dir, score = (run.dataset, run.samples, run.unusable, run.run_id,
                                                          run.run_dir, run.score)  # fmt: skip

    def session(device: Any, todo: Sequence[Sample], session_id: str, folder: Path) -> DeviceOutcome:
        job = DeviceJob(device.name, dataset, tuple(todo), run.model, run.options_for(device, session_id),
                        run.job_opts, folder)  # fmt: skip
        return farm.run([device], {device.name: job}, Console(quiet=True), score, stop)[0]

    table = run.table
    todo = needs(outcomes, unusable, samples, table)
    if not todo:
        return []
    by_name = {d.name: d for d in run.selected}
    outcome_of = {o.name: o for o in outcomes}
    by_id = {s.id: s for s in samples}
    entries = {e["name"]: e for e in run.inventory.entries}
    boards: dict[str, Device | None] = {}
    done: list[StandIn] = []
    for need in todo:
        if stop.is_set():
            break
        if need.lost and _came_back(by_name.get(need.phone), run.wait_s, clock, stop, console, need.phone):
            phone = by_name[need.phone]
            console.print(f"{need.phone} is back: it finishes its own {len(need.missing)} sample(s)")
            again = session(phone, samples, run_id, device_folder(run_dir, phone.name))
            if not again.error:
                outcome_of[need.phone].error = ""
                continue
            need = replace(
                need, missing=tuple(i for i in need.missing if i not in {r.id for r in again.results})
            )
        board = _first_usable(boards_for(need.phone, table), boards, by_name, entries, console, need.phone)
        if board is None:
            continue
        folder = device_folder(run_dir, f"{board.name}-for-{need.phone}")
        console.print(
            f"[yellow]{need.phone}[/] {need.reason}: {board.name} stands in for its "
            f"{len(need.missing)} remaining sample(s)",
            highlight=False,
        )
        todo_samples = [by_id[i] for i in need.missing]
        got = session(board, todo_samples, f"{run_id}-for-{need.phone}", folder)
        rows = [replace(r, stood_in_for=need.phone) for r in got.results]
        got.results = rows
        write_results(got, dataset, todo_samples, folder, score)
        write_outcome(folder, got)
        _merge_into_phone(need, board.name, folder.name, rows, outcome_of.get(need.phone), unusable,
                          dataset, samples, run_dir, score)  # fmt: skip
        complete = {r.id for r in rows} >= set(need.missing)
        if got.error:
            console.print(f"[red]{board.name} (standing in for {need.phone}) failed:[/] {got.error}")
        done.append(StandIn(need.phone, board.name, folder.name, need.reason, need.missing, complete))
    if done:
        _board_folders(done, run_dir, boards)
    return done


def _came_back(
    phone: Device | None, wait_s: float, clock, stop: threading.Event, console: Console, name: str
) -> bool:
    if phone is None or wait_s <= 0:
        return False
    console.print(f"{name} was lost: waiting up to {wait_s:g} s for it to come back", highlight=False)
    deadline = clock() + wait_s
    while clock() < deadline and not stop.is_set():
        try:
            if phone.alive():
                return True
        except EdgefarmError:
            pass
        stop.wait(POLL_S)
    return False


def _first_usable(
    names: Sequence[str],
    cache: dict[str, Device | None],
    selected: Mapping[str, Device],
    entries: Mapping[str, Mapping[str, Any]],
    console: Console,
    phone: str,
) -> Device | None:
    """The first stand-in board that answers and can run (a board of the run is reused)."""
    for name in names:
        if name not in cache:
            dev = selected.get(name)
            if dev is None:
                try:
                    dev = KINDS.get(entries[name]["kind"]).make(entries[name])
                    dev.info()
                except EdgefarmError as e:
                    console.print(f"[yellow]{name} cannot stand in for {phone}:[/] {e}", highlight=False)
                    dev = None
            cache[name] = dev
        if cache[name] is not None:
            return cache[name]
    console.print(f"[red]{phone}: no stand-in board could run its samples[/]", highlight=False)
    return None


def _merge_into_phone(
    need: Need,
    board: str,
    folder: str,
    rows: Sequence[SampleResult],
    outcome: DeviceOutcome | None,
    unusable: Sequence[DeviceInfo],
    dataset: Dataset,
    samples: Sequence[Sample],
    run_dir: Path,
    score: Score,
) -> None:
    """The phone's folder gets the stand-in rows (its column, marked) and is scored again."""
    dev_dir = device_folder(run_dir, need.phone)
    dev_dir.mkdir(parents=True, exist_ok=True)
    if outcome is None:  # absent at the start: the phone's folder starts here
        info = next((u for u in unusable if u.name == need.phone), None)
        kind = info.kind if info is not None else first_kind("phone")  # a phone never seen: the phone kind
        outcome = DeviceOutcome(name=need.phone, kind=kind, info=info, error=need.reason)
        if info is not None:
            write_json_atomic(dev_dir / "device.json", dataclasses.asdict(info))
    order = {s.id: n for n, s in enumerate(samples)}
    merged = {r.id: r for r in outcome.results}
    for r in rows:
        merged.setdefault(r.id, r)  # the phone's own row wins: nothing is run or counted twice
    outcome.results = sorted(merged.values(), key=lambda r: order.get(r.id, len(order)))
    write_results(outcome, dataset, samples, dev_dir, score)
    outcome.stand_in = {"board": board, "folder": folder, "reason": need.reason, "samples": len(rows)}
    write_outcome(dev_dir, outcome)


def stood_in_devices(done: Sequence[StandIn]) -> tuple[str, ...]:
    """The devices the stand-ins add to run.json `devices`: each phone and its board, in order."""
    return tuple(dict.fromkeys(name for s in done for name in (s.phone, s.board)))


def _board_folders(done: Sequence[StandIn], run_dir: Path, boards: Mapping[str, Device | None]) -> None:
    """A board that ran only as a stand-in gets its own folder: its outcome, and the device.json of
    its stand-in folder."""
    for s in done:
        board_dir = device_folder(run_dir, s.board)
        if not (board_dir / "outcome.json").exists():  # ran only as a stand-in: its own figures' row
            board_dir.mkdir(parents=True, exist_ok=True)
            dev = boards.get(s.board)
            write_outcome(board_dir, DeviceOutcome(name=s.board, kind=dev.kind if dev else first_kind("board")))
            stand_dir = device_folder(run_dir, s.folder)
            if (stand_dir / "device.json").exists():
                (board_dir / "device.json").write_bytes((stand_dir / "device.json").read_bytes())
