"""The cluster lab: a Ray head and 3 farm hosts on this machine, inside a private network namespace.

Each farm host is a real `ray start --address=... --resources='{"farmhost:NAME": 1}'` node (as
docs/cluster.md tells a user to start one) with its own cache folder (EDGEFARM_CACHE_DIR) and its
own real adb server with lab phones (tests/lab/adb), handed to the node's processes through the
environment exactly as a farm host's local adb server would be. Everything (Ray, adb servers,
phones, the `edgefarm` commands under test) lives in one network namespace with only loopback, so
no connection leaves this machine and no port clashes with anyone else's; teardown kills exactly
the processes in that namespace (never `ray stop`, which would stop every Ray of the user).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from orchestrator.farm.rundir import device_folder

from ..adb.conftest import Lab
from ..adb.sandbox import GALAXY_S24, PIXEL_8, REDMI_NOTE_13
from ..adb.server import AdbServer, adb_binary
from .netns import NetNs

HEAD_PORT = 6379  # Ray's default: free inside the private namespace
OBJECT_STORE_BYTES = 100 * 1024 * 1024  # the note's bound: 2 cores and 6 other people on this box
HOST_PHONES = {"h1": [("pixel8", PIXEL_8), ("s24", GALAXY_S24)], "h2": [("redmi", REDMI_NOTE_13)], "h3": []}
READY_S = 180.0  # a busy 2-core box needs ~30 s for 4 Ray nodes; generous so it never flakes
BIN = Path(sys.executable).parent
# What the lab's nodes leave out: nothing edgefarm reads, each a steady cost per node on a 2-core box
# (4 nodes per cluster, two clusters at once in the suite; measured in docs/testing.md). The log monitor
# tails every Ray log for drivers that asked for it (edgefarm's connect with log_to_driver=False);
# metrics are exported for a dashboard the lab does not start; the memory monitor guards against OOM,
# which no lab story provokes.
LEAN_START = ["--include-log-monitor=false"]
LEAN_ENV = {"RAY_enable_metrics_collection": "0", "RAY_memory_monitor_refresh_ms": "0"}


@dataclass
class FarmHostLab:
    name: str
    cache: Path
    adb: AdbServer
    phones: list[str]
    start: list[str]  # its `ray start` arguments
    env: dict[str, str]
    inventory: Path  # the host's own devices.yaml ($EDGEFARM_INVENTORY there; its agent reads it per listing)
    node: subprocess.Popen | None = None


@dataclass
class ClusterLab:
    ns: NetNs
    tmp: Path
    address: str
    hosts: dict[str, FarmHostLab]
    phones: Lab
    _listed: dict | None = field(default=None, repr=False)  # the last `edgefarm devices --cluster --json`

    def python(self, script: Path, *args: str, timeout_s: float = 300) -> subprocess.CompletedProcess:
        """A controller-side Python script, run inside the namespace."""
        return self.ns.run([sys.executable, str(script), *args], capture_output=True, text=True,
                           timeout=timeout_s, env=self.controller_env())  # fmt: skip

    def edgefarm(self, *args: str, timeout_s: float = 300, **env: str) -> subprocess.CompletedProcess:
        """The real CLI, run inside the namespace (the controller)."""
        return self.ns.run([str(BIN / "edgefarm"), *args], capture_output=True, text=True,
                           timeout=timeout_s, env=self.controller_env(**env))  # fmt: skip

    def listing(self, *, fresh: bool = False) -> dict:
        """`edgefarm devices --cluster --json` (each farm host once). The lab's phones and names are the
        same from story to story, and a listing is a whole controller's start (~5 s): it is made once
        and kept, and made again when asked (`fresh`: a story that changed a host's devices.yaml or
        phones and reads what the hosts now say) or after a farm host was started again."""
        if fresh or self._listed is None:
            p = self.edgefarm("devices", "--cluster", self.address, "--json")
            assert p.returncode == 0, p.stderr[-3000:]
            listed = json.loads(p.stdout)
            hosts = [h["host"] for h in listed["hosts"]]
            assert hosts == sorted(set(hosts)), hosts  # a host that joined again is listed once
            self._listed = listed
        return self._listed

    def phones_by_host(self, *, fresh: bool = False) -> dict[str, list[str]]:
        """Farm host -> the names of its phones, as `edgefarm devices --cluster --json` lists them."""
        return {h["host"]: [i["name"] for i in h["infos"]] for h in self.listing(fresh=fresh)["hosts"]}

    def agents(self, host: str = "") -> list[int]:
        """Pids of the farm hosts' agent actors (any process in the namespace running FarmHostAgent);
        with `host`, only that farm host's (in its Ray node's process tree)."""
        tree = self.tree(host) if host else None
        found = []
        for pid in self.ns.pids():
            try:
                if b"FarmHostAgent" in Path(f"/proc/{pid}/cmdline").read_bytes() and (
                    tree is None or pid in tree
                ):
                    found.append(pid)
            except OSError:
                continue
        return found

    def tree(self, host: str) -> set[int]:
        """The farm host's Ray node and every process below it (raylet, workers, agents)."""
        tree, grew = {self.hosts[host].node.pid}, True
        while grew:
            kids = {pid for pid in self.ns.pids() if _ppid(pid) in tree}
            grew = not kids <= tree
            tree |= kids
        return tree

    def running_run(
        self,
        devices: list[str],
        limit: int,
        out: Path,
        first_row_of: str = "",
        *,
        extra: tuple[str, ...] = (),
        plain_on: str = "",
    ) -> subprocess.Popen:
        """`edgefarm run --cluster` in the background (stderr to out/../stderr.txt, a file: nobody reads
        a pipe meanwhile), returned once a row of `first_row_of` (any device when empty) streamed back.
        `extra`: more `run` flags; `plain_on=HOST`: a plain run (no cluster) from a controller whose
        local adb server is that farm host's."""
        how = ["--cluster", self.address] if not plain_on else []
        argv = [str(BIN / "edgefarm"), "run", *how, "--devices", ",".join(devices), "--limit", str(limit),
                "--modality", "text", "--max-output-tokens", "8", "--out", str(out), *extra]  # fmt: skip
        env = self.controller_env(
            **({"ANDROID_ADB_SERVER_PORT": str(self.hosts[plain_on].adb.port)} if plain_on else {})
        )
        with open(out.parent / "stderr.txt", "w") as err:
            proc = self.ns.popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline and proc.poll() is None:
            streams = out.glob(f"*/devices/{device_folder(Path(), first_row_of).name if first_row_of else '*'}/"
                               "results.stream.jsonl")  # fmt: skip
            if any(p.read_text().count("\n") >= 1 for p in streams):
                return proc
            time.sleep(0.2)
        proc.kill()
        raise AssertionError(
            f"no row streamed back while the run went on: {(out.parent / 'stderr.txt').read_text()[-3000:]}"
        )

    def kill_host(self, name: str) -> None:
        """The farm host dies: SIGKILL its Ray node's whole process tree (ray start, raylet, workers)."""
        host = self.hosts[name]
        for pid in self.tree(name):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        host.node.wait()

    def start_host(self, name: str) -> None:
        """Start the host's Ray node again (same resource, same cache and adb server)."""
        host = self.hosts[name]
        host.node = ray_start(self.ns, self.tmp, name, host.start, host.env)
        wait_ready(self.ns, self.address, list(self.hosts), self.controller_env())
        self._listed = None  # the next story lists the hosts again

    def controller_env(self, **extra: str) -> dict[str, str]:
        env = self.phones.env(
            EDGEFARM_CACHE_DIR=str(self.tmp / "controller-cache"), RAY_USAGE_STATS_ENABLED="0"
        )
        env.pop("ANDROID_ADB_SERVER_PORT", None)  # the controller has no phones of its own
        env.update(extra)
        return env


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def ray_start(
    ns: NetNs, tmp: Path, name: str, args: list[str], env: dict[str, str], bin_dir: Path = BIN
) -> subprocess.Popen:
    """`ray start --block` for one node (`bin_dir`'s ray: a venv's, whose Python runs the node's
    workers and so imports that venv's edgefarm), waiting until it says it is up. Nodes start one at a
    time, and a node that times out in Ray's fixed 30 s registration (a loaded 2-core box) is started
    again. (Started side by side, the farm hosts of two labs at once timed out 1-2 of their 3 nodes each
    on the loaded box, and each retry cost more than it saved: measured, not kept.)"""
    for attempt in range(3):
        log_path = tmp / f"ray-{name}-{time.monotonic_ns()}.log"
        log = open(log_path, "wb")  # noqa: SIM115 - lives as long as the node
        proc = ns.popen([str(bin_dir / "ray"), "start", "--block", "--disable-usage-stats",
                         f"--object-store-memory={OBJECT_STORE_BYTES}", *LEAN_START, *args],
                        env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + READY_S
        while proc.poll() is None and time.monotonic() < deadline:
            if b"will now block" in log_path.read_bytes():
                return proc
            time.sleep(0.5)
        proc.kill()
        proc.wait()
    raise RuntimeError(f"Ray node {name} did not start 3 times: {log_path.read_text()[-3000:]}")


def wait_ready(ns: NetNs, address: str, hosts: list[str], env: dict[str, str]) -> None:
    code = (
        "import json, sys, time, ray\n"
        f"ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False)\n"
        f"want = {sorted(f'farmhost:{h}' for h in hosts)!r}\n"
        f"deadline = time.monotonic() + {READY_S}\n"
        "while time.monotonic() < deadline:\n"
        "    have = sorted({k for n in ray.nodes() if n['Alive'] for k in n['Resources'] if k.startswith('farmhost:')})\n"
        "    if have == want: sys.exit(0)\n"
        "    time.sleep(0.5)\n"
        "print('farm hosts seen:', have, file=sys.stderr); sys.exit(1)\n"
    )
    p = ns.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=READY_S + 60)
    if p.returncode != 0:
        raise RuntimeError(f"the lab cluster did not come up: {p.stderr[-3000:]}")


@pytest.fixture(scope="package")
def cluster_lab(tmp_path_factory):
    """A head and 3 farm hosts (h1: 2 phones, h2: 1 phone, h3: none), for tests/lab/cluster: torn down
    when its last test has run, so its Ray processes take no CPU from the rest of the suite."""
    for tool, package in (("bwrap", "bubblewrap"), ("ip", "iproute2")):  # a missing tool fails, never skips
        if not shutil.which(tool):
            pytest.fail(f"`{tool}` is missing: `apt-get install {package}`; the cluster lab needs it")
    try:
        adb_binary()
    except RuntimeError as e:
        pytest.fail(str(e))
    tmp = tmp_path_factory.mktemp("cluster-lab")
    # Ray's unix sockets live under its temp dir: keep that path short (sun_path is 108 bytes).
    ray_tmp = Path(tempfile.mkdtemp(prefix="efray-", dir="/tmp"))
    ns = NetNs()
    lab = None
    try:
        servers = {h: ns.call(AdbServer(tmp / h / "adb").start) for h in HOST_PHONES}
        lab = Lab(tmp=tmp, servers=list(servers.values()))
        for i, (host, phones) in enumerate(HOST_PHONES.items()):
            for label, spec in phones:
                ns.call(lab.add_phone, label, spec, server=i)
        address = f"127.0.0.1:{HEAD_PORT}"
        base = lab.env(RAY_USAGE_STATS_ENABLED="0", **LEAN_ENV)
        ray_start(ns, tmp, "head", ["--head", f"--port={HEAD_PORT}", "--num-cpus=0",
                                     "--include-dashboard=false", f"--temp-dir={ray_tmp}"], base)  # fmt: skip
        hosts = {}
        for host, phones in HOST_PHONES.items():
            cache, inventory = tmp / host / "cache", tmp / host / "devices.yaml"
            inventory.write_text("devices: []\n")
            env = dict(base, EDGEFARM_CACHE_DIR=str(cache), ANDROID_ADB_SERVER_PORT=str(servers[host].port),
                       EDGEFARM_INVENTORY=str(inventory))  # fmt: skip
            start = [
                f"--address={address}",
                "--num-cpus=1",
                f"--resources={json.dumps({f'farmhost:{host}': 1})}",
            ]
            hosts[host] = FarmHostLab(host, cache, servers[host], [label for label, _ in phones], start, env,
                                      inventory)  # fmt: skip
            hosts[host].node = ray_start(ns, tmp, host, start, env)
        cl = ClusterLab(ns=ns, tmp=tmp, address=address, hosts=hosts, phones=lab)
        wait_ready(ns, address, list(hosts), cl.controller_env())
        yield cl
    finally:
        for phone in list(lab.phones.values()) if lab else []:
            phone.vanish()
        ns.close(grace_s=1.0)  # every process in the namespace: Ray nodes, their workers, adb servers, bwrap
        shutil.rmtree(ray_tmp, ignore_errors=True)
