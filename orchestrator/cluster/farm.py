"""The farm over a Ray cluster: every device's session runs on its farm host's agent; the controller
hands each host the model and media once, and writes what streams back into its run folder.

The Ray implementation of `farm.Farm` (through cluster/controller.ClusterFarm): the same
`DeviceJob`s in, the same outcomes out, and the same files in each device's folder: the
results stream file grows one line per finished sample as it arrives (what `--resume` reads after
a crash), then the session's own files replace it. A farm host or agent that dies makes its
devices' outcome a DeviceLost naming the host; the rows that arrived are kept."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import ray
from rich.console import Console
from rich.markup import escape

from android_runner.contract import SampleResult

from ..datasets.types import Sample
from ..devices.lock import controller_id
from ..errors import DeviceLost, EdgefarmError
from ..farm.local import drive, job_unit
from ..farm.rundir import write_outcome
from ..farm.session import STREAM_FILE, DeviceJob, write_results
from ..farm.types import DeviceOutcome, Phase, Score
from ..fsutil import make_dir, output_errors, write_bytes_atomic
from ..interrupt import Interrupted
from ..jobs import write_bundle
from ..models import ModelSummary
from .blob import describe
from .connect import farm_hosts
from .transfer import hand_over
from .types import Blob, Received, RemoteDevice

AGENT_RESTARTS = 1  # an agent that dies on a live host is restarted once per device and run
AGENT_RESTART_WAIT_S = 30.0  # how long a restarted agent may take to answer on a live host
# A farm host whose Ray node the head has marked dead (Ray's heartbeat detector: ~14 s in the lab) will
# never answer again: the controller stops waiting for its agent then, not at AGENT_RESTART_WAIT_S. The
# head is asked in a thread for at most NODES_ASK_S (with the head gone, Ray's call would wait for it).
NODES_ASK_S = 2.0


def stage_files(model: ModelSummary, samples: Sequence[Sample], agents: Mapping[str, object]) -> tuple[
        dict[str, Blob], dict[str, list[Received]]]:  # fmt: skip
    """The model and every medium, handed to each host once: the blobs by controller path, and
    what each host took in (0 bytes for what its cache held)."""
    paths = [model.path] + sorted({p.path for s in samples for p in s.media if p.path is not None})
    blobs = {str(p): describe(Path(p)) for p in paths}
    taken: dict[str, list[Received]] = {h: [] for h in agents}
    for path, blob in blobs.items():
        for host, got in hand_over(Path(path), blob, agents).items():
            taken[host].append(got)
    return blobs, taken


def _host_gone(host: str) -> bool:
    """Does the head say no live Ray node offers `host`'s resource? False when the head does not answer."""
    found: list = []
    asking = threading.Thread(target=lambda: found.append(farm_hosts()), name="nodes", daemon=True)
    asking.start()
    asking.join(NODES_ASK_S)
    return bool(found) and not any(h.name == host and h.alive for h in found[0])


def _answers(agent, host: str) -> bool:
    """The (restarting) agent answers within AGENT_RESTART_WAIT_S; never when it died for good (its
    host is gone, or its restarts are used up): a host the head has marked dead ends the wait at once."""
    deadline = time.monotonic() + AGENT_RESTART_WAIT_S
    while time.monotonic() < deadline:
        try:
            return bool(ray.get(agent.hello.remote(), timeout=5.0))
        except ray.exceptions.ActorDiedError:
            return False
        except (ray.exceptions.ActorUnavailableError, ray.exceptions.GetTimeoutError):
            if _host_gone(host):
                return False
            time.sleep(1.0)  # restarting: calls fail at once until it is back
    return False


# Ray's errors for a device's agent, in the project's words (its own texts are RPC internals)
_LOST_WORDS = (
    (ray.exceptions.ActorDiedError, "its agent died and could not be restarted"),
    (ray.exceptions.ActorUnavailableError, "its agent could not be reached"),
    (ray.exceptions.NodeDiedError, "its Ray node left the cluster"),
)


def _lost(name: str, host: str, e: BaseException, run_dir: Path) -> DeviceLost:
    why = next((words for kind, words in _LOST_WORDS if isinstance(e, kind)),
               "the connection to it broke (its Ray node, or the Ray head, is gone)")  # fmt: skip
    return DeviceLost(
        f"farm host {host} stopped answering during the run: {why}",
        where=f"{name} (on farm host {host})",
        fix=f"check the host (`ray status` on the head); then `edgefarm run --resume {run_dir}` runs the "
        "samples it did not finish",
    )


def run_on_cluster(
    agents: Mapping[str, object],
    devices: Sequence[RemoteDevice],
    jobs: Mapping[str, DeviceJob],
    console: Console,
    score: Score,
    stop: threading.Event,
) -> tuple[list[DeviceOutcome], dict[str, list[Received]], dict[str, float]]:
    """Every device's job runs on its host's agent (worker.run_job there), all at once. Also returns
    what each host took in and where the wall went, in seconds on the controller's clock: the
    hand-over, each device's wait for its first row and its tail (last row to the session's end),
    the longest of each, and the sessions as a whole."""
    if not devices:
        return [], {}, {}
    t0 = time.monotonic()
    host_of = {d.name: d.host for d in devices}
    kind_of = {d.name: d.kind for d in devices}
    names = list(host_of)
    hosts = {host_of[d] for d in names}
    samples = list({s.id: s for n in names for s in jobs[n].samples}.values())
    blobs, taken = stage_files(jobs[names[0]].model, samples, {h: agents[h] for h in hosts})
    repaired = {
        h: [r.note for r in got if r.note] for h, got in taken.items()
    }  # damaged copies fetched again
    for note in (n for notes in repaired.values() for n in notes):
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    t_staged = time.monotonic()
    first_row: dict[str, float] = {}
    last_row: dict[str, float] = {}
    ended: dict[str, float] = {}  # the device's stream ended (its session's files arrived)
    states = {d: jobs[d].progress() for d in names}

    def work(name: str) -> DeviceOutcome:
        host, job = host_of[name], jobs[name]
        dev_dir = job.folder
        outcome = DeviceOutcome(name=name, kind=kind_of[name])
        t0 = time.monotonic()
        rows: dict[str, SampleResult] = {}  # a restarted session replays the phone's rows: each kept once
        notes: list[str] = list(repaired.get(host, ()))
        try:
            make_dir(dev_dir)
            # the job's media, linked here as on one controller
            write_bundle(job.items, dev_dir / "job", job.job_opts, stop)
            job = replace(job, controller=controller_id())  # the farm host's lock names this controller
            stream = dev_dir / STREAM_FILE
            restarts = 0
            while True:
                try:
                    with output_errors(stream), open(stream, "a", encoding="utf-8") as out:
                        for ref in agents[host].run.options(num_returns="streaming").remote(job, blobs):
                            event = ray.get(ref)
                            if event[0] == "result" and event[1].id not in rows:
                                rows[event[1].id] = event[1]
                                last_row[name] = time.monotonic()
                                first_row.setdefault(name, last_row[name])
                                out.write(event[1].to_json() + "\n")
                                out.flush()
                                states[name].record(event[1])
                            elif event[0] == "phase":
                                states[name].phase, states[name].detail = event[1], event[2]
                            elif event[0] == "outcome":
                                outcome = event[1]  # the worker added --resume's earlier figures
                            elif event[0] == "file" and ".." not in Path(event[1]).parts:
                                write_bytes_atomic(dev_dir / event[1], event[2])
                    ended[name] = time.monotonic()
                    break
                except ray.exceptions.RayActorError as e:  # the agent died: Ray restarts it on a live host
                    if restarts >= AGENT_RESTARTS or stop.is_set() or not _answers(agents[host], host):
                        raise
                    restarts += 1
                    notes.append(f"the agent on farm host {host} died ({type(e).__name__}) and was restarted; "
                                 "the phone resumed from the samples it had finished")  # fmt: skip
            outcome.notes = [*notes, *outcome.notes]
            outcome.sessions += restarts  # a crashed agent's session counts too (its figures died with it)
            if (dev_dir / "results.jsonl").exists():
                stream.unlink(missing_ok=True)
        except Interrupted:  # Ctrl-C while its job was written: nothing ran
            outcome.interrupted = True
        except EdgefarmError as e:
            outcome.error, outcome.error_code = str(e), e.exit_code
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if isinstance(e.cause, EdgefarmError) else None
            outcome.error = str(cause) if cause else f"internal error on farm host {host}: {e}"
            outcome.error_code = cause.exit_code if cause else 1
        except ray.exceptions.RayError as e:  # the agent or its node died
            err = _lost(name, host, e, dev_dir.parents[1])  # runs/<run-id>/devices/<folder>
            outcome.error, outcome.error_code = str(err), err.exit_code
        if outcome.error:
            states[name].at(Phase.FAILED)
            outcome.wall_s = outcome.wall_s or time.monotonic() - t0
        try:
            if outcome.error and not outcome.results and rows:  # no session outcome came: keep what did
                outcome.results = [rows[s.id] for s in job.samples if s.id in rows]
            if outcome.results or not outcome.error:  # the agent sends rows; they are scored here
                write_results(outcome, job.dataset, job.samples, dev_dir, score)
                (dev_dir / STREAM_FILE).unlink(missing_ok=True)
            write_outcome(dev_dir, outcome)
        except EdgefarmError as e:
            outcome.error = outcome.error or str(e)
        return outcome

    def watch_stop() -> None:
        stop.wait()
        for name in names:
            agents[host_of[name]].stop.remote(name)

    threading.Thread(target=watch_stop, daemon=True).start()
    outcomes = drive(
        [(n,) for n in names], work, states, console, stop, kind_of, {n: job_unit(jobs[n]) for n in names}
    )
    phases = {"hand_over_s": t_staged - t0, "sessions_s": time.monotonic() - t_staged,
              "first_row_s": max((t - t_staged for t in first_row.values()), default=0.0),
              "tail_s": max((ended[d] - last_row[d] for d in ended if d in last_row), default=0.0)}  # fmt: skip
    return [outcomes[n] for n in names], taken, phases
