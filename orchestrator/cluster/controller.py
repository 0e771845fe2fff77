"""`edgefarm run --cluster ADDRESS`: the devices of every farm host, and the farm that runs them there.

`ClusterFarm.select(spec)` answers like `inventory.select_usable` (same `Selection`, each device a
`RemoteDevice` naming its host and carrying its host's devices.yaml pins); `ClusterFarm` is the Ray
implementation of `farm.Farm`, so the run (and its stand-in boards) hands it the same `DeviceJob`s
as the local farm and nothing else changes."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import ray
from rich.console import Console

from ..devices.kinds import kind_spec
from ..devices.types import DeviceInfo, Inventory
from ..errors import ConfigError
from ..farm.fallback import stand_in_boards
from ..farm.session import DeviceJob
from ..farm.types import DeviceOutcome, Score
from ..inventory import Selection
from ..runners.base import Check, Need
from ..runners.readiness import Readiness, refuse
from .connect import Joined, join, listing
from .farm import run_on_cluster
from .probe import head_problem
from .types import ClusterError, HostDevices, Pins, Received, RemoteDevice, refuse_clashes


def remote_device(host: HostDevices, info: DeviceInfo, agent: object) -> RemoteDevice:
    """A device a farm host listed, with its host's devices.yaml pins and (a board) the phones it
    stands in for."""
    pins = host.pins.get(info.name, Pins())
    return RemoteDevice(info.name, info.kind, host.host, backend=pins.backend, threads=pins.threads,
                        memory_bandwidth_gbs=pins.memory_bandwidth_gbs, agent=agent,
                        fallback_for=host.fallback_for.get(info.name, ()))  # fmt: skip



HEAD_GONE_PROBE_S = 3.0
# the checks of one host's devices (each device call has its own timeout; a phone's checks take ~1 s)
READINESS_S = 120.0  # at the run's end: a head that does not answer the probe within this is gone


@dataclass
class ClusterFarm:
    address: str
    hosts: list[HostDevices] = field(default_factory=list)
    agents: dict[str, object] = field(default_factory=dict)
    taken: dict[str, list[Received]] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)  # where the wall went (run.json)
    boards: dict[str, RemoteDevice] = field(default_factory=dict)  # every farm host's boards, by name
    joined: Joined | None = None
    unjoined: ClusterError | None = None  # why `begin` could not join: raised by `select`

    def begin(self) -> None:
        """Join the cluster and ask every live farm host for its agent, without waiting: the
        controller reads its model and dataset while the agents start (`select` waits for them). A
        cluster that cannot be joined is said by `select`, after the model's and dataset's errors."""
        try:
            self.joined = join(self.address)
        except ClusterError as e:
            self.unjoined = e

    def select(self, spec: str) -> Selection:
        """`all` | NAME,... over every farm host's usable devices."""
        if self.unjoined is not None:
            raise self.unjoined
        self.joined = self.joined or join(self.address)
        found_at = listing(self.joined)
        self.hosts, self.phases = found_at.hosts, dict(found_at.phases)
        found = {i.name: (h.host, i) for h in self.hosts for i in h.infos}
        unusable = tuple(u for h in self.hosts for u in h.unusable)
        notes = tuple(f"{h.host}: {n}" for h in self.hosts for n in h.notes)
        names = sorted(found) if spec == "all" else [n.strip() for n in spec.split(",") if n.strip()]
        refuse_clashes(self.hosts, names, where=f"--devices {spec} --cluster {self.address}")
        missing = [n for n in names if n not in found]
        if missing or not names:
            raise ConfigError(
                f"no such device on the cluster's farm hosts: {', '.join(missing) or '(none found)'}",
                where=f"--devices {spec} --cluster {self.address}",
                fix=f"use names from `edgefarm devices --cluster {self.address}`: {', '.join(sorted(found))}",
            )
        agent_of = found_at.agents
        remote = {i.name: remote_device(h, i, agent_of[h.host]) for h in self.hosts for i in h.infos}
        devices = tuple(remote[n] for n in names)
        # boards a farm host lists can stand in for a lost phone (--fallback BOARD; fallback.py)
        self.boards = {n: d for n, d in remote.items() if kind_spec(d.kind).board}
        # the listing's agents of the selected devices' (and boards') hosts run them; the others end
        # with their handles
        keep = {d.host for d in devices} | {b.host for b in self.boards.values()}
        self.agents = {h: agent_of[h] for h in sorted(keep)}
        if self.joined.lease is not None:
            self.joined.lease.keep(keep)
        return Selection(devices, unusable, notes, tuple(found[n][1] for n in names))

    def readiness(self, sel: Selection, need: Need) -> list[Readiness]:
        """Each selected device's checks (runners/readiness.py), made by its farm host's agent, all
        hosts at once, in the selection's order. A host that does not answer within READINESS_S makes
        its devices not ready, saying so."""
        at: dict[str, list[int]] = {}
        for k, d in enumerate(sel.devices):
            at.setdefault(d.host, []).append(k)
        asked = {h: self.agents[h].readiness.remote([sel.infos[k] for k in ks], need) for h, ks in at.items()}
        found: dict[int, Readiness] = {}
        for host, ref in asked.items():
            try:
                got = ray.get(ref, timeout=READINESS_S)
            except ray.exceptions.RayError as e:  # its agent died, its host left, or it is stuck
                why = Check("reachable", False, f"farm host {host} did not answer the checks ({type(e).__name__})",
                            "`ray status` on the head lists the hosts; `edgefarm devices --cluster` what each sees")  # fmt: skip
                got = [Readiness(sel.infos[k], (why,)) for k in at[host]]
            found.update(zip(at[host], got))
        return [found[k] for k in range(len(sel.devices))]

    def refuse_unready(self, sel: Selection, need: Need) -> Selection:
        """The selection without the devices that cannot run, as on one controller, checked on their hosts."""
        return refuse(sel, self.readiness(sel, need))

    def stand_in_table(self, inventory: Inventory, cli_boards: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """fallback.stand_in_boards with the boards the farm hosts list (their devices.yaml's
        `fallback_for`; a --fallback may name one); a --fallback name two farm hosts give is refused
        as a device's is."""
        listed = {name: board.fallback_for for name, board in self.boards.items()}
        table = stand_in_boards(inventory, cli_boards, listed=listed)
        refuse_clashes(self.hosts, cli_boards, where="--fallback")  # one board per name
        return table

    def run(
        self,
        devices: Sequence[RemoteDevice],
        jobs: Mapping[str, DeviceJob],
        console: Console,
        score: Score | None,
        stop: threading.Event,
    ) -> list[DeviceOutcome]:
        """`farm.Farm.run` on the devices' farm hosts (cluster/farm.run_on_cluster): the run's devices,
        then fallback.py's sessions (a board standing in for a lost phone, or the phone when it came
        back). What each host took in adds up; the phases are the run's own (its first call)."""
        outcomes, taken, phases = run_on_cluster(self.agents, devices, jobs, console, score, stop)
        for host, got in taken.items():
            self.taken.setdefault(host, []).extend(got)
        for key, seconds in phases.items():
            self.phases.setdefault(key, seconds)
        return outcomes

    def end(self) -> list[str]:
        """The run's end on the cluster: a head that stopped answering during the run is said (the run's
        notes: run.json and the report), and the agents are told to end (Ray would end them through
        the head when this controller exits; without it they would outlive the run)."""
        gone = head_problem(self.address, timeout_s=HEAD_GONE_PROBE_S)
        if not gone:
            return []
        if self.joined is not None and self.joined.lease is not None:
            self.joined.lease.leave()
        note = (f"the Ray head at {self.address} stopped answering during the run ({gone}): every sample "
                "that finished is kept here; start the head again (`ray start --head` there) and each farm "
                "host (`ray start --address=...`), then `edgefarm devices --cluster` shows them")  # fmt: skip
        return [note]

    def record(self) -> dict:
        """For run.json: the cluster and what crossed the network to each host in this run."""
        return {
            "address": self.address,
            "hosts": {
                h: {
                    "bytes_received": sum(r.bytes_received for r in got),
                    "files_sent": sum(not r.already_held for r in got),
                    "files_held": sum(r.already_held for r in got),
                }
                for h, got in sorted(self.taken.items())
            },
            "phases": {k: round(v, 3) for k, v in self.phases.items()},
        }
