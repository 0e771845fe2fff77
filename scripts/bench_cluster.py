#!/usr/bin/env python3
"""A farm bigger than one controller: N lab phones across 4 farm hosts, on Ray vs one controller.

    python scripts/bench_cluster.py [--phones 8,16,32] [--sample-ms 200] [--limit 20] [--json]

Needs root (a private network namespace, as the lab cluster: tests/lab/cluster) and the cluster
extra. In the namespace: 4 farm hosts, each a real Ray node (`farmhost:hN`) with its own real adb
server, cache folder and N/4 emulated phones (tests/lab/adb), and a Ray head. Every phone runs the
bundled dataset's first --limit samples with the fixed-time stand-in runner (scripts/fixed_time_runner.c:
--sample-ms per sample, the phone's compute, which costs the hosts nothing). Per N, the same run:

- cluster: `edgefarm run --cluster` (sessions on the farm hosts' agents), first run and a rerun;
- one controller: `edgefarm run` driving all phones through the 4 adb servers (`adb_servers`).

Figures per row: wall (rerun: the model already on the phones), efficiency = one phone's compute time
(limit x sample-ms) / wall (1.0 = nothing is added as phones are added), the controller's CPU seconds
and peak RSS (wait4 rusage of the `edgefarm` process tree) per device, and for the cluster the bytes
each farm host received on the first run and on the rerun (run.json `cluster`). On this 2-core lab
every farm host, phone and adb server shares the controller's cores: the walls are the lab's, the
bytes and the controller's per-device costs carry over to a real farm.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from bench_farm import build_standin, timed

from tests.lab.adb.conftest import Lab
from tests.lab.adb.sandbox import PIXEL_8
from tests.lab.adb.server import AdbServer
from tests.lab.cluster.conftest import HEAD_PORT, ray_start, wait_ready
from tests.lab.cluster.netns import NetNs

HOSTS = ("h1", "h2", "h3", "h4")


class ClusterBench:
    def __init__(self, work: Path, sample_ms: int) -> None:
        self.work, self.ns = work, NetNs()
        self.ray_tmp = Path(tempfile.mkdtemp(prefix="efray-", dir="/tmp"))
        servers = [self.ns.call(AdbServer(work / h / "adb").start) for h in HOSTS]
        self.lab = Lab(tmp=work, servers=servers)
        runner, lib = build_standin(work / "standin", sample_ms)
        self.env = self.lab.env(EDGEFARM_NATIVE_RUNNER=str(runner), EDGEFARM_RUNTIME_LIB=str(lib), CI="1",
                                RAY_USAGE_STATS_ENABLED="0")  # fmt: skip
        for key in ("EDGEFARM_INVENTORY", "EDGEFARM_PHONE_RUNNER"):
            self.env.pop(key, None)
        self.address = f"127.0.0.1:{HEAD_PORT}"
        ray_start(self.ns, work, "head", ["--head", f"--port={HEAD_PORT}", "--num-cpus=0",
                                          "--include-dashboard=false", f"--temp-dir={self.ray_tmp}"], self.env)  # fmt: skip
        for host, server in zip(HOSTS, servers):
            env = dict(
                self.env,
                EDGEFARM_CACHE_DIR=str(work / host / "cache"),
                ANDROID_ADB_SERVER_PORT=str(server.port),
            )
            ray_start(self.ns, work, host, [f"--address={self.address}", "--num-cpus=1",
                                            f"--resources={json.dumps({f'farmhost:{host}': 1})}"], env)  # fmt: skip
        self.controller = dict(self.env, EDGEFARM_CACHE_DIR=str(work / "controller-cache"))
        self.controller.pop("ANDROID_ADB_SERVER_PORT", None)
        wait_ready(self.ns, self.address, list(HOSTS), self.controller)
        self.inventory = work / "devices.yaml"
        self.inventory.write_text(
            "adb_servers: [" + ", ".join(f"127.0.0.1:{s.port}" for s in servers) + "]\n"
        )
        self.count = 0

    def phones(self, n: int) -> list[str]:
        labels = []
        for i in range(n):
            self.count += 1
            labels.append(f"p{self.count}")
            self.ns.call(self.lab.add_phone, labels[-1], PIXEL_8, server=i % len(HOSTS))
        return labels

    def unplug(self, labels: list[str]) -> None:
        for label in labels:
            self.ns.call(self.lab.remove_phone, label)

    def run(self, out: Path, *how: str, limit: int) -> tuple[dict, Path]:
        before = set(out.iterdir()) if out.is_dir() else set()
        argv = [sys.executable, "-m", "orchestrator", "run", "--devices", "all", "--out", str(out), "--limit",
                str(limit), "--modality", "text", "--sample-timeout", "60", *how]  # fmt: skip
        figures = self.ns.call(timed, argv, self.controller)
        (run_dir,) = set(out.iterdir()) - before
        return figures, run_dir

    def close(self) -> None:
        for phone in list(self.lab.phones.values()):
            phone.vanish()
        self.ns.close()
        shutil.rmtree(self.ray_tmp, ignore_errors=True)


def host_bytes(run_dir: Path) -> dict[str, int]:
    hosts = json.loads((run_dir / "run.json").read_text())["cluster"]["hosts"]
    return {h: v["bytes_received"] for h, v in hosts.items()}


def row(kind: str, n: int, fig: dict, compute_s: float, **extra) -> dict:
    return {"setup": kind, "phones": n, "wall_s": round(fig["wall_s"], 2),
            "efficiency": round(compute_s / fig["wall_s"], 3),
            "controller_cpu_s_per_device": round(fig["cpu_s"] / n, 3),
            "controller_peak_rss_mb_per_device": round(fig["peak_rss_mb"] / n, 2), **extra}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phones", default="8,16,32")
    ap.add_argument("--sample-ms", type=int, default=200)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    bench = ClusterBench(work, args.sample_ms)
    compute_s = args.limit * args.sample_ms / 1000
    rows = []
    try:
        for n in [int(x) for x in args.phones.split(",")]:
            labels = bench.phones(n)
            _, first = bench.run(work / f"cluster-{n}", "--cluster", bench.address, limit=args.limit)
            fig, again = bench.run(work / f"cluster-{n}", "--cluster", bench.address, limit=args.limit)
            rows.append(row("cluster", n, fig, compute_s, bytes_per_host_first=host_bytes(first),
                            bytes_per_host_rerun=host_bytes(again)))  # fmt: skip
            bench.run(work / f"one-{n}", "--inventory", str(bench.inventory), limit=args.limit)
            fig, _ = bench.run(work / f"one-{n}", "--inventory", str(bench.inventory), limit=args.limit)
            rows.append(row("one controller", n, fig, compute_s))
            bench.unplug(labels)
    finally:
        bench.close()
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{args.limit} samples x {args.sample_ms} ms per phone; 4 farm hosts; rerun figures (model on the phones)"
    )
    print(
        f"{'setup':<15} {'phones':>6} {'wall s':>7} {'eff':>6} {'ctl CPU s/dev':>13} {'ctl RSS MB/dev':>14}  bytes/host"
    )
    for r in rows:
        moved = ""
        if "bytes_per_host_first" in r:
            moved = f"first {sorted(set(r['bytes_per_host_first'].values()))} rerun {sorted(set(r['bytes_per_host_rerun'].values()))}"
        print(f"{r['setup']:<15} {r['phones']:>6} {r['wall_s']:>7} {r['efficiency']:>6} "
              f"{r['controller_cpu_s_per_device']:>13} {r['controller_peak_rss_mb_per_device']:>14}  {moved}")  # fmt: skip


if __name__ == "__main__":
    main()
