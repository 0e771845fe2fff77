"""`edgefarm run --cluster ADDRESS`: the devices of every farm host, and the farm that runs them there.

`ClusterFarm.select(spec)` answers like `inventory.select_usable` (same `Selection`, each device a
`RemoteDevice` naming its host); `ClusterFarm.run_farm(...)` takes `farm.run_farm`'s arguments and
returns its outcomes, so the run command swaps one for the other and nothing else changes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from ..devices.types import Inventory
from ..errors import ConfigError
from ..fallback import stand_in_boards
from ..inventory import Selection
from ..run.types import DeviceOutcome
from .connect import Joined, join, listing
from .farm import run_on_cluster
from .types import ClusterError, HostDevices, Received, RemoteDevice, refuse_clashes


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
        found_at = listing(self.joined or join(self.address))
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
        devices = tuple(
            RemoteDevice(n, found[n][1].kind, found[n][0], agent=agent_of[found[n][0]]) for n in names
        )
        # boards a farm host lists can stand in for a lost phone (--fallback BOARD; fallback.py)
        self.boards = {i.name: RemoteDevice(i.name, i.kind, h.host, agent=agent_of[h.host],
                                            fallback_for=h.fallback_for.get(i.name, ()))
                       for h in self.hosts for i in h.infos if i.kind == "ssh"}  # fmt: skip
        # the listing's agents of the selected devices' (and boards') hosts run them; the others end
        # with their handles
        keep = {d.host for d in devices} | {b.host for b in self.boards.values()}
        self.agents = {h: agent_of[h] for h in sorted(keep)}
        return Selection(devices, unusable, notes, tuple(found[n][1] for n in names))

    def stand_in_table(self, inventory: Inventory, cli_boards: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """fallback.stand_in_boards with the boards the farm hosts list (their devices.yaml's
        `fallback_for`; a --fallback may name one); a --fallback name two farm hosts give is refused
        as a device's is."""
        listed = {name: board.fallback_for for name, board in self.boards.items()}
        table = stand_in_boards(inventory, cli_boards, listed=listed)
        refuse_clashes(self.hosts, cli_boards, where="--fallback")  # one board per name
        return table

    def run_farm(self, devices: Sequence[RemoteDevice], *args, **kwargs) -> list[DeviceOutcome]:
        """`farm.run_farm`'s arguments after `devices` (cluster/farm.run_on_cluster)."""
        outcomes, self.taken, phases = run_on_cluster(self.agents, devices, *args, **kwargs)
        self.phases.update(phases)
        return outcomes

    def stand_in(self, device: RemoteDevice, dataset, samples, model, opts, backend, threads, job_opts,
                 dev_dir: Path, score, stop, clock) -> DeviceOutcome:  # fmt: skip
        """fallback.py's session, on the device's farm host: a board standing in for a lost phone (into
        `dev_dir`, `devices/<board>-for-<phone>/`), or the phone when it came back. The model crosses
        to that host once, as for the run."""
        outcomes, taken, _ = run_on_cluster(
            self.agents, [device], dataset, samples, model, {device.name: opts.for_device(device, backend, threads)},
            job_opts, dev_dir.parents[1], Console(quiet=True), score, stop, folders={device.name: dev_dir},
        )  # fmt: skip
        for host, got in taken.items():
            self.taken.setdefault(host, []).extend(got)
        return outcomes[0]

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
