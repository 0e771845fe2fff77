"""Join a Ray cluster as its controller, find its farm hosts, start one agent on each.

The only module (with transfer.py) that imports Ray at module level; only `--cluster` imports it."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from dataclasses import dataclass

import ray

from .agent import LEASE_S, RENEW_S, FarmHostAgent
from .probe import require_head
from .types import FARMHOST_PREFIX, ClusterError, FarmHost, HostDevices

AGENT_START_S = 120.0  # an agent's worker process starts on its host; a busy host is slow
# Each run's agent asks for a sliver of its host's `farmhost:` resource: it pins the agent to the host
# and lets runs from several controllers share a host (a team on one farm). What two runs must not
# share, a phone, is kept apart by the phone's own lock, which the agent takes (`remote_session`).
AGENT_SHARE = 0.01
NAMESPACE = "edgefarm"
AGENT_THREADS = 64  # an agent serves its phones' sessions and the transfers side by side


def _events_to_stderr() -> None:
    """Ray's driver prints the cluster's error events (a node marked dead, a raylet that crashed) on
    sys.stdout from a background thread (ray/_private/worker.py at 2.60.0: listen_error_messages ->
    print_to_stdstream with is_err False). edgefarm's stdout carries its results (`devices --json`,
    the report's path), so those lines go to stderr with the other logs. Ray is pinned exactly, so
    this one private hook is checked by the cluster lab (a `--json` listing after a host died)."""
    worker = ray._private.worker
    printer = worker.print_to_stdstream
    if getattr(printer, "edgefarm_stderr", False):
        return

    def to_stderr(data, ignore_prefix: bool) -> None:
        printer({**data, "is_err": True}, ignore_prefix)

    to_stderr.edgefarm_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


# Ray's driver ends its own process (exit 1, no word on the screen) when it has not reached the head's
# GCS for `gcs_rpc_server_reconnect_timeout_s` (60 s at 2.60.0). A run whose head dies mid-way goes on
# (the agents stream to the controller directly), so the controller waits as long as a run may take,
# and says at the end that the head is gone (ClusterFarm.end).
CONTROLLER_GCS_WAIT_S = 7 * 24 * 3600


def connect(address: str) -> None:
    """Join the cluster at `address` (host:port of its head) as a driver."""
    _events_to_stderr()
    require_head(address)
    os.environ.setdefault("RAY_gcs_rpc_server_reconnect_timeout_s", str(CONTROLLER_GCS_WAIT_S))
    try:
        ray.init(address=address, namespace=NAMESPACE, logging_level=logging.WARNING,
                 log_to_driver=False, configure_logging=False)  # fmt: skip
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ClusterError(
            f"cannot join the Ray cluster at {address}: {e}",
            where=f"--cluster {address}",
            fix="start the head with `ray start --head --port=6379` and give its address; "
            "the controller's Python and Ray versions must equal the cluster's (docs/cluster.md)",
        ) from e


def farm_hosts() -> list[FarmHost]:
    """Every node that offers a `farmhost:NAME` resource, alive or dead (dead ones say so), once per name."""
    found = []
    for node in ray.nodes():
        for key in node.get("Resources", {}) or {}:
            if key.startswith(FARMHOST_PREFIX):
                name = key[len(FARMHOST_PREFIX) :]
                found.append(
                    FarmHost(name, node["NodeID"], node.get("NodeManagerAddress", ""), bool(node["Alive"]))
                )
    # a host that left and joined again is two nodes with one name: the live one counts
    by_name: dict[str, FarmHost] = {}
    for h in found:
        if h.name not in by_name or (h.alive and not by_name[h.name].alive):
            by_name[h.name] = h
    return [by_name[name] for name in sorted(by_name)]


class Lease:
    """The controller's side of its agents' lease (agent.py LEASE_S): every RENEW_S each kept agent is
    told the controller is there, one renewal in flight per agent (a host that is slow or gone gets
    no pile of calls). Calls go straight to the agents' processes, so they reach them with the head gone.

    Its thread is stopped and joined before Ray shuts down at this process's exit (`stop`, registered
    with atexit after ray.init's own shutdown, so it runs first): a call into Ray after that shutdown
    makes Ray's core worker end the process with exit code 1, whatever the run's own (a Ctrl-C'd
    cluster run exited 1, not 130, when a renewal fell in that window on a loaded machine)."""

    def __init__(self, agents: dict[str, object]) -> None:
        self._agents = dict(agents)
        self._sent: dict[str, object] = {}  # host -> its renewal in flight
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="agents-lease", daemon=True)
        self._thread.start()
        atexit.register(self.stop)

    def keep(self, hosts: set[str] | list[str]) -> None:
        """Only these hosts' agents are renewed (the others end with their handles)."""
        self._agents = {h: a for h, a in self._agents.items() if h in hosts}

    def _renew(self) -> None:
        try:
            while not self._stopped.is_set():
                for host, agent in list(self._agents.items()):
                    sent = self._sent.get(host)
                    if sent is not None:
                        done, _ = ray.wait([sent], timeout=0)
                        if not done:
                            continue
                        try:
                            ray.get(done[0])
                        except ray.exceptions.RayError:
                            pass  # the agent died or its host left: the run says so where it uses it
                    self._sent[host] = agent.renew.remote()
                self._stopped.wait(RENEW_S)
        except Exception:  # noqa: BLE001 - Ray is shutting down with the process: the leases then lapse, as meant
            return

    def stop(self, wait_s: float = 10.0) -> None:
        """No renewal from now on: the thread ends its round and is joined (its calls return at once;
        `wait_s` bounds a Ray call stuck on a gone host)."""
        self._stopped.set()
        if self._thread is not threading.current_thread():
            self._thread.join(wait_s)

    def leave(self, wait_s: float = 5.0) -> None:
        """The run is over and the head gone (Ray cannot end the agents): each agent ends now."""
        self.stop()
        agents, self._agents = self._agents, {}
        asked = [a.leave.remote() for a in agents.values()]
        ray.wait(asked, num_returns=len(asked), timeout=wait_s)  # sent before this process ends


def create_agents(hosts: list[str], *, max_restarts: int = 2) -> tuple[dict[str, object], Lease]:
    """One agent actor per farm host, pinned by its resource; asked for, not waited for (each is a
    new worker process on its host: `await_agents`), each holding a lease its controller renews."""
    if not hosts:
        raise ClusterError(
            "the cluster has no farm host",
            where="--cluster",
            fix="on each USB host: `ray start --address=HEAD:6379 --resources='{\"farmhost:NAME\": 1}'`",
        )
    remote = ray.remote(FarmHostAgent)
    agents = {
        h: remote.options(
            resources={f"{FARMHOST_PREFIX}{h}": AGENT_SHARE},
            num_cpus=0,
            max_restarts=max_restarts,
            max_concurrency=AGENT_THREADS,
        ).remote(h, lease_s=LEASE_S)
        for h in hosts
    }
    return agents, Lease(agents)


def await_agents(agents: dict[str, object]) -> dict[str, object]:
    """Wait until every agent answers (AGENT_START_S at most)."""
    pending = {agent.hello.remote(): h for h, agent in agents.items()}
    ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=AGENT_START_S)
    late = sorted(pending[r] for r in pending if r not in ready)
    if late:
        raise ClusterError(
            f"no agent started on farm host(s) {', '.join(late)} within {AGENT_START_S:.0f} s",
            where="--cluster",
            fix="the host may be down or out of memory for a new worker process: `ray status` on the head "
            "lists the nodes and their resources",
        )
    ray.get(ready)
    return agents


def start_agents(hosts: list[str], *, max_restarts: int = 2) -> dict[str, object]:
    """One agent actor per farm host, pinned by its resource; waits until each answers."""
    agents, _ = create_agents(hosts, max_restarts=max_restarts)  # its lease renews them while we live
    return await_agents(agents)


@dataclass(frozen=True)
class Joined:
    """The cluster joined and an agent asked for on every live farm host, not yet waited for: the
    controller reads its model and dataset while the agents start (`listing` waits)."""

    hosts: list[FarmHost]
    agents: dict[str, object]
    join_s: float  # ray.init and the node list
    asked_at: float  # time.monotonic() when the agents were asked for
    lease: Lease | None  # renews the agents while this controller lives (None: no live farm host)


def join(address: str) -> Joined:
    t0 = time.monotonic()
    connect(address)
    hosts = farm_hosts()
    t1 = time.monotonic()
    alive = [h.name for h in hosts if h.alive]
    agents, lease = create_agents(alive) if alive else ({}, None)
    return Joined(hosts, agents, t1 - t0, t1, lease)


@dataclass(frozen=True)
class Listing:
    """What the controller found: every farm host and its devices, the live hosts' agents, and the
    seconds each step took on the controller's clock (run.json `cluster.phases`)."""

    hosts: list[HostDevices]
    agents: dict[str, object]
    phases: dict[str, float]


def listing(joined: Joined) -> Listing:
    """Every farm host and the devices its agent finds (a host whose node is down is listed with
    that reason and no devices). A run keeps the agents of its hosts rather than starting new ones:
    an agent's start is a new worker process on its host importing edgefarm and Ray."""
    t1 = time.monotonic()
    agents = await_agents(joined.agents)
    t2 = time.monotonic()
    alive = list(agents)
    found = dict(zip(alive, ray.get([agents[h].devices.remote() for h in alive])))
    down = ("farm host down: its Ray node left the cluster (`ray status` on the head)",)
    phases = {
        "join_s": joined.join_s,
        "agents_s": t2 - t1,  # the wait for the agents after the controller's own start-up work
        "agents_started_s": t2 - joined.asked_at,
        "listing_s": time.monotonic() - t2,
    }
    hosts = [found.get(h.name) or HostDevices(h.name, (), (), down) for h in joined.hosts]
    return Listing(hosts, agents, phases)


def cluster_devices(address: str) -> list[HostDevices]:
    """`edgefarm devices --cluster`: every farm host and the devices its agent finds."""
    return listing(join(address)).hosts
