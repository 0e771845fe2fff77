#!/usr/bin/env python3
"""A farm bigger than one controller: N lab phones across 4 farm hosts, on Ray vs one controller.

    python scripts/bench_cluster.py [--phones 8,16,32] [--sample-ms 500] [--limit 40] [--repeat 3] [--json]

Needs root (a private network namespace, as the lab cluster: tests/lab/cluster) and the cluster
extra. In the namespace: 4 farm hosts, each a real Ray node (`farmhost:hN`) with its own real adb
server, cache folder and emulated phones (tests/lab/adb, spread over the hosts), and a Ray head.
Every phone runs the bundled dataset's first --limit samples with the fixed-time stand-in runner
(scripts/fixed_time_runner.c: --sample-ms per sample, the phone's compute, which costs the hosts
nothing). The defaults look like a phone run: a real phone takes seconds per sample (docs/cluster.md),
so 40 samples x 500 ms is 20 s of phone compute, against which the run's fixed start and end show at
their true weight. For 1 phone and then each N, the same run through two paths:

- cluster: `edgefarm run --cluster` (sessions on the farm hosts' agents);
- one controller: `edgefarm run` driving the same phones through the 4 adb servers (`adb_servers`).

Each N's phones run once (the model reaches the phones and the hosts' caches), then --repeat more
times, the two paths alternating so both see the same load; every figure is the median of those
repeats. Per row: wall; efficiency = wall at 1 phone / wall at N through the SAME path (as
scripts/bench_farm.py: 1.0 = adding phones adds nothing; the fixed start and end are in both walls);
compute/wall = one phone's compute (limit x sample-ms) / wall, which charges every fixed cost
(interpreter, joining the cluster, the agents' start) to the run; the controller's CPU seconds and
peak RSS (wait4 rusage of the `edgefarm` process tree) per device; for the cluster the bytes each farm
host received on the first run and on the repeats (run.json `cluster.hosts`), and where the
cluster's wall went (run.json `cluster.phases`, the controller's clock). On a 2-core lab every farm
host, phone and adb server shares the controller's cores: the walls are the lab's, the bytes and
the controller's per-device costs carry over to a real farm.

--against DIR: before and after. A second lab cluster (its own namespace, adb servers, phones and Ray
nodes) runs the other checkout: its nodes are started with that checkout's .venv (whose Python runs
the farm hosts' agents, so they import its edgefarm) and its controller runs from it. Per N both
clusters get N phones; after a first run per checkout and path, --repeat rounds each run all four
(checkout x path), the checkouts' order turned every round, and each figure is given per path as
this / other / the median of the pairs' differences (scripts/bench_farm.py's `paired`): both
clusters idle on the same cores while either runs, so a pair's two runs see the same load.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from bench_farm import build_standin, paired, python_of, timed

from tests.lab.adb.conftest import Lab
from tests.lab.adb.sandbox import PIXEL_8
from tests.lab.adb.server import AdbServer
from tests.lab.cluster.conftest import HEAD_PORT, ray_start, wait_ready
from tests.lab.cluster.netns import NetNs

HOSTS = ("h1", "h2", "h3", "h4")


class ClusterBench:
    """A lab cluster in its own network namespace, driven by `checkout`'s edgefarm (its .venv)."""

    def __init__(self, work: Path, sample_ms: int, checkout: Path = REPO) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.work, self.ns, self.checkout = work, NetNs(), checkout
        self.python = python_of(checkout)
        bin_dir = Path(self.python).parent
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
                                          "--include-dashboard=false", f"--temp-dir={self.ray_tmp}"], self.env, bin_dir)  # fmt: skip
        for host, server in zip(HOSTS, servers):
            (work / host / "devices.yaml").write_text("devices: []\n")
            env = dict(
                self.env,
                EDGEFARM_CACHE_DIR=str(work / host / "cache"),
                ANDROID_ADB_SERVER_PORT=str(server.port),
                EDGEFARM_INVENTORY=str(work / host / "devices.yaml"),
            )
            ray_start(self.ns, work, host, [f"--address={self.address}", "--num-cpus=1",
                                            f"--resources={json.dumps({f'farmhost:{host}': 1})}"], env, bin_dir)  # fmt: skip
        # the checkout's own results database, in its folder (bench_farm.py Farm.run says why)
        self.controller = dict(self.env, EDGEFARM_CACHE_DIR=str(work / "controller-cache"),
                               EDGEFARM_DB=str(work / "history.sqlite"))  # fmt: skip
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
        self.name_phones()
        return labels

    def unplug(self, labels: list[str]) -> None:
        for label in labels:
            self.ns.call(self.lab.remove_phone, label)
        self.name_phones()

    def name_phones(self) -> None:
        """Each farm host's devices.yaml names its phones by their labels: identical phones on two
        hosts would otherwise share a name, which a cluster run refuses (docs/cluster.md)."""
        for index, host in enumerate(HOSTS):
            entries = [f"{{name: {label}, kind: adb, serial: '{serial}'}}" for label, serial in self.lab.serials.items()
                       if label in self.lab.phones and self.lab.owner.get(serial) == index]  # fmt: skip
            (self.work / host / "devices.yaml").write_text(f"devices: [{', '.join(entries)}]\n")

    def run(self, out: Path, *how: str, limit: int) -> tuple[dict, Path]:
        before = set(out.iterdir()) if out.is_dir() else set()
        argv = [self.python, "-m", "orchestrator", "run", "--devices", "all", "--out", str(out), "--limit",
                str(limit), "--modality", "text", "--sample-timeout", "60", *how]  # fmt: skip
        figures = self.ns.call(timed, argv, self.controller, self.checkout)
        (run_dir,) = set(out.iterdir()) - before
        return figures, run_dir

    def close(self) -> None:
        for phone in list(self.lab.phones.values()):
            phone.vanish()
        self.ns.close()
        shutil.rmtree(self.ray_tmp, ignore_errors=True)


def cluster_figures(run_dir: Path) -> tuple[dict[str, int], dict[str, float]]:
    """Bytes each farm host received, and where the wall went (run.json `cluster`)."""
    cluster = json.loads((run_dir / "run.json").read_text())["cluster"]
    return {h: v["bytes_received"] for h, v in cluster["hosts"].items()}, cluster.get("phases", {})


def median_of(figures: list[dict]) -> dict:
    return {
        k: statistics.median(f[k] for f in figures)
        for k in figures[0]
        if isinstance(figures[0][k], float | int)
    }


PATHS = ("cluster", "one controller")


def run_path(bench: ClusterBench, path: str, n: int, limit: int) -> tuple[dict, Path]:
    """One run of every phone attached through `path`: the cluster (`--cluster`) or one controller
    driving the same phones through the farm hosts' adb servers (`--inventory`)."""
    how = ("--cluster", bench.address) if path == "cluster" else ("--inventory", str(bench.inventory))
    return bench.run(bench.work / f"{path.replace(' ', '-')}-{n}", *how, limit=limit)


def measure(bench: ClusterBench, n: int, limit: int, repeat: int) -> list[dict]:
    """n new phones: a first run per path, then `repeat` runs alternating the paths; medians."""
    labels = bench.phones(n)
    _, first = run_path(bench, "cluster", n, limit)
    run_path(bench, "one controller", n, limit)
    runs: dict[str, list[dict]] = {"cluster": [], "one controller": []}
    moved, phases = [], []
    for _ in range(repeat):
        fig, again = run_path(bench, "cluster", n, limit)
        runs["cluster"].append(fig)
        got, where = cluster_figures(again)
        moved.append(max(got.values()))
        phases.append(where)
        runs["one controller"].append(run_path(bench, "one controller", n, limit)[0])
    bench.unplug(labels)
    rows = []
    for setup, figures in runs.items():
        walls = [f["wall_s"] for f in figures]
        mid = median_of(figures)
        rows.append({"setup": setup, "phones": n, "wall_s": round(mid["wall_s"], 2),
                     "wall_spread_s": round(max(walls) - min(walls), 2),
                     "controller_cpu_s_per_device": round(mid["cpu_s"] / n, 3),
                     "controller_peak_rss_mb_per_device": round(mid["peak_rss_mb"] / n, 2),
                     "load1": round(mid["load1"], 2), "idle_fraction": round(mid["idle_fraction"], 3)})  # fmt: skip
    rows[0].update(bytes_per_host_first=cluster_figures(first)[0], bytes_per_host_rerun_max=max(moved),
                   phases_s={k: round(v, 2) for k, v in median_of(phases).items()})  # fmt: skip
    return rows


def against(benches: dict[str, ClusterBench], n: int, limit: int, repeat: int) -> list[dict]:
    """n new phones on each checkout's cluster; a first run per checkout and path, then `repeat`
    rounds of all four, the checkouts' order turned every round; per path, paired medians."""
    labels = {side: bench.phones(n) for side, bench in benches.items()}
    for bench in benches.values():
        for path in PATHS:
            run_path(bench, path, n, limit)
    figs: dict[tuple[str, str], list[dict]] = {(side, path): [] for side in benches for path in PATHS}
    for i in range(repeat):
        for path in PATHS:
            for side in ("this", "other") if i % 2 == 0 else ("other", "this"):
                figs[side, path].append(run_path(benches[side], path, n, limit)[0])
    for side, bench in benches.items():
        bench.unplug(labels[side])
    rows = []
    for path in PATHS:
        row: dict = {"setup": path, "phones": n, "pairs": repeat}
        row.update(paired(figs["this", path], figs["other", path], ("wall_s", "cpu_s", "peak_rss_mb")))
        row["load1"] = round(statistics.median(f["load1"] for side in benches for f in figs[side, path]), 2)
        rows.append(row)
    return rows


def print_against(rows: list[dict], other: Path) -> None:
    print(f"this checkout / {other} / the pairs' median difference (medians of {rows[0]['pairs']} pairs)")
    for r in rows:
        w, c, m = r["wall_s"], r["cpu_s"], r["peak_rss_mb"]
        print(f"{r['setup']:<15} N={r['phones']:>2}: wall {w['this']:.2f} / {w['other']:.2f} / {w['diff']:+.2f} s, "
              f"controller CPU {c['this']:.2f} / {c['other']:.2f} / {c['diff']:+.2f} s, "
              f"RSS {m['this']:.0f} / {m['other']:.0f} MB, load1 {r['load1']}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--phones", default="8,16,32", help="phone counts after the 1-phone base, comma-separated"
    )
    ap.add_argument("--sample-ms", type=int, default=500, help="the stand-in runner's time per sample")
    ap.add_argument("--limit", type=int, default=40, help="samples per phone")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per N and path (medians reported)")
    ap.add_argument("--against", type=Path, default=None,
                    help="another checkout (with its own .venv): paired runs of both, each on its own lab cluster")  # fmt: skip
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    compute_s = args.limit * args.sample_ms / 1000
    sizes = [1] + [n for n in (int(x) for x in args.phones.split(",")) if n != 1]
    rows: list[dict] = []
    if args.against:
        benches: dict[str, ClusterBench] = {}
        try:
            benches["this"] = ClusterBench(work / "this", args.sample_ms)
            benches["other"] = ClusterBench(work / "other", args.sample_ms, args.against.resolve())
            for n in sizes:
                rows += against(benches, n, args.limit, args.repeat)
                print(f"N={n}: {rows[-2:]}", file=sys.stderr, flush=True)
        finally:
            for b in benches.values():
                b.close()
            shutil.rmtree(work, ignore_errors=True)
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            print_against(rows, args.against)
        return
    bench = ClusterBench(work, args.sample_ms)
    try:
        for n in sizes:
            rows += measure(bench, n, args.limit, args.repeat)
            print(f"N={n}: {rows[-2:]}", file=sys.stderr, flush=True)
    finally:
        bench.close()
        shutil.rmtree(work, ignore_errors=True)
    base = {r["setup"]: r["wall_s"] for r in rows if r["phones"] == 1}
    for r in rows:
        r["efficiency"] = round(base[r["setup"]] / r["wall_s"], 3)
        r["compute_over_wall"] = round(compute_s / r["wall_s"], 3)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{args.limit} samples x {args.sample_ms} ms per phone ({compute_s:g} s of phone compute); 4 farm hosts; "
          f"medians of {args.repeat} runs after a first one (the model on the hosts and phones)")  # fmt: skip
    print(f"{'setup':<15} {'phones':>6} {'wall s':>7} {'spread':>6} {'eff':>6} {'cmp/wall':>8} {'ctl CPU s/dev':>13} "
          f"{'ctl RSS MB/dev':>14}  bytes/host")  # fmt: skip
    for r in rows:
        moved = ""
        if "bytes_per_host_first" in r:
            moved = f"first {sorted(set(r['bytes_per_host_first'].values()))} rerun {r['bytes_per_host_rerun_max']}"
        print(f"{r['setup']:<15} {r['phones']:>6} {r['wall_s']:>7} {r['wall_spread_s']:>6} {r['efficiency']:>6} "
              f"{r['compute_over_wall']:>8} {r['controller_cpu_s_per_device']:>13} "
              f"{r['controller_peak_rss_mb_per_device']:>14}  {moved}")  # fmt: skip
    print("cluster phases (s, median): " + "; ".join(
        f"{r['phones']} phones: " + " ".join(f"{k[:-2]} {v}" for k, v in r["phases_s"].items())
        for r in rows if "phases_s" in r))  # fmt: skip


if __name__ == "__main__":
    main()
