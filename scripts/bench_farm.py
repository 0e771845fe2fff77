#!/usr/bin/env python3
"""Farm scale: what the HOST adds when N phones run the same job, in the device lab.

    python scripts/bench_farm.py [--phones 1,4,8,16] [--sample-ms 100] [--limit N] [--repeat 2] [--json]

N emulated phones (real adb servers, two of them, phones split between them; mksh + toybox) run the
bundled dataset with a stand-in runner (scripts/fixed_time_runner.c) that takes a fixed, known time
per sample: the phone's compute, which costs the host nothing. Everything else is the real product:
`edgefarm run` as a subprocess, driver.sh, adb, staging with hash checks, scoring, reports. Per N:

- wall: the whole `edgefarm run` (start-up to exit), on a second run (the model already on the phones);
- efficiency: wall at N=1 / wall at N (1.0 = the host adds nothing as phones are added);
- host overhead per sample: (wall - samples x sample time) / samples (each phone runs every sample);
- host CPU seconds (user + system) and peak RSS of the edgefarm process tree (wait4's rusage), and that
  CPU per sample (samples x phones): edgefarm's own cost, apart from the lab's;
- the lab's CPU seconds over the same run (this script's threads serving the emulated phones, the
  phones' shells, the two adb servers): on 2 cores, 16 emulated phones compete with edgefarm;
- idle: the machine's idle CPU fraction during the run (/proc/stat; `*` = saturated, < 5% idle; on
  a shared machine other users' load counts too: load1 is printed beside it);
- eff-lab: efficiency with the lab's CPU accounted for: each wall less lab_cpu / cores (the most the
  lab could take from edgefarm), floored at the phones' compute time;
- bytes pushed on the first run (model, other) and on the second (model must be 0).

Then, on one phone: the first push of a 200 MB model by edgefarm (AdbDevice.push, the code `edgefarm
run` stages with, in its own process; its hash check on the phone included, the host's sha256 of the
model not: a run computes it while inspecting the model) against `adb push` of the same file over the
same link; and,
with --shard on 4 identical phones, the sharded wall against the unsharded one.
Every figure is the best of --repeat runs, with the spread (max - min) beside it.

--edgefarm DIR measures another checkout (its .venv's python, e.g. a worktree of main before a change)
with this script's lab and harness, so before and after are measured alike. --bytecode: edgefarm's own
modules are compiled once (in the first, untimed run) into the benchmark's folder and read as bytecode
afterwards, as an installed edgefarm does (pip writes the bytecode at install); without it every run
compiles them from source, as on a machine with PYTHONDONTWRITEBYTECODE set (this one): 0.1 - 0.3 s of
CPU per run that grows with the amount of code, not with phones or samples. --against DIR: before and
after on the same phones, runs of the two checkouts alternating, medians and the median paired
difference (a shared machine's drift hits both runs of a pair alike; the best-of figures above do not
pair).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.lab.adb.conftest import Lab
from tests.lab.adb.sandbox import PIXEL_8
from tests.lab.adb.server import AdbServer, adb_binary

STANDIN_SOURCE = REPO / "scripts" / "fixed_time_runner.c"
SAMPLES = 200


def build_standin(out: Path, sample_ms: int) -> tuple[Path, Path]:
    """The fixed-time runner (named like the native runner) and a placeholder runtime library."""
    out.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"
    runner = out / "edgefarm_runner"
    subprocess.run(
        [cc, "-O2", f"-DSAMPLE_MS={sample_ms}", "-o", str(runner), str(STANDIN_SOURCE)], check=True
    )
    lib = out / "liblitert-lm.so"
    lib.write_bytes(b"placeholder: the fixed-time runner loads no runtime\n")
    (out / "VERSION").write_text(f"fixed-time stand-in, {sample_ms} ms per sample\n")
    return runner, lib


def proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system, its reaped children included) of a live process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def machine_idle_s() -> tuple[float, float]:
    """(idle + iowait seconds summed over all CPUs, wall-clock seconds) from /proc/stat."""
    cpu = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    return (int(cpu[3]) + int(cpu[4])) / os.sysconf("SC_CLK_TCK"), time.monotonic()


def timed(argv: list[str], env: dict[str, str], cwd: Path = REPO, lab_pids: tuple[int, ...] = ()) -> dict:
    """Run a command. Wall time; CPU seconds and peak RSS of it and its waited-for children (edgefarm's
    own process tree: wait4's rusage); the lab's CPU over the same time (this script's threads, which
    serve the emulated phones, the phones' shells, and the adb servers); the machine's idle CPU."""
    self0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    servers0 = sum(proc_cpu_s(pid) for pid in lab_pids)
    idle0, t_idle0 = machine_idle_s()
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=devnull, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{argv[:6]} failed ({p.returncode}):\n{err.read().decode()[-3000:]}")
    idle1, t_idle1 = machine_idle_s()
    self1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    ours = ru.ru_utime + ru.ru_stime

    def cpu(r: resource.struct_rusage) -> float:
        return r.ru_utime + r.ru_stime

    # RUSAGE_CHILDREN grew by every child reaped meanwhile: the phones' shells and edgefarm itself.
    lab = (cpu(self1) - cpu(self0)) + (cpu(kids1) - cpu(kids0) - ours)
    lab += sum(proc_cpu_s(pid) for pid in lab_pids) - servers0
    cores = os.cpu_count() or 1
    idle_fraction = (idle1 - idle0) / max(1e-9, (t_idle1 - t_idle0) * cores)
    return {"wall_s": wall, "cpu_s": ours, "peak_rss_mb": ru.ru_maxrss / 1024.0, "lab_cpu_s": max(0.0, lab),
            "idle_fraction": max(0.0, min(1.0, idle_fraction)), "load1": os.getloadavg()[0]}  # fmt: skip


def pushed(run_dir: Path) -> dict:
    model = other = 0
    for dev in (run_dir / "devices").iterdir():
        outcome = json.loads((dev / "outcome.json").read_text())
        model += (outcome.get("model_push") or {}).get("bytes_sent", 0)
        other += (outcome.get("other_push") or {}).get("bytes_sent", 0)
    return {"model_bytes": model, "other_bytes": other}


def checkout_key(checkout: Path) -> str:
    """A short name for a checkout's files in the benchmark's folder (two worktrees may share a name)."""
    return hashlib.sha256(str(checkout.resolve()).encode()).hexdigest()[:12]


def python_of(checkout: Path) -> str:
    """The checkout's own venv's python (else this one's)."""
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.is_file() else sys.executable


class Farm:
    """The lab's two adb servers, phones added and removed per N; `edgefarm` the checkout measured."""

    def __init__(self, work: Path, sample_ms: int, edgefarm: Path = REPO, bytecode: bool = False) -> None:
        self.work = work
        self.edgefarm = edgefarm
        self.python = python_of(edgefarm)
        self.pycache = work / "pycache" if bytecode else None
        self.lab = Lab(
            tmp=work, servers=[AdbServer(work / "host0").start(), AdbServer(work / "host1").start()]
        )
        self.runner, self.lib = build_standin(work / "standin", sample_ms)
        self.inventory = work / "devices.yaml"
        ports = ", ".join(f"127.0.0.1:{s.port}" for s in self.lab.servers)
        self.inventory.write_text(f"adb_servers: [{ports}]\n")
        self.count = 0

    def env(self) -> dict[str, str]:
        env = self.lab.env(
            EDGEFARM_NATIVE_RUNNER=str(self.runner), EDGEFARM_RUNTIME_LIB=str(self.lib), CI="1"
        )
        env.pop("EDGEFARM_INVENTORY", None)
        env.pop("EDGEFARM_PHONE_RUNNER", None)
        if self.pycache is not None:  # compiled once, outside the checkout
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(self.pycache)
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def phones(self, n: int) -> list[str]:
        """n new identical phones, alternately on the two adb servers (farm hosts)."""
        labels = []
        for i in range(n):
            self.count += 1
            label = f"p{self.count}"
            self.lab.add_phone(label, PIXEL_8, server=i % 2)
            labels.append(label)
        return labels

    def unplug(self, labels: list[str]) -> None:
        for label in labels:
            self.lab.remove_phone(label)

    def run(self, out: Path, *extra: str, checkout: Path | None = None) -> tuple[dict, Path]:
        """One `edgefarm run` of every phone attached (of `checkout`, default the one measured)."""
        checkout = checkout or self.edgefarm
        before = set(out.iterdir()) if out.is_dir() else set()
        argv = [python_of(checkout), "-m", "orchestrator", "run", "--devices", "all", "--inventory", str(self.inventory),
                "--out", str(out), "--sample-timeout", "60", *extra]  # fmt: skip
        pids = tuple(s.proc.pid for s in self.lab.servers if s.proc)
        # each checkout its own results database, in the benchmark's folder: every run records its
        # history as a user's does (a database of a newer schema would refuse the older checkout, which
        # then recorded nothing and looked cheaper), and the user's own database is never written
        env = dict(self.env(), EDGEFARM_DB=str(self.work / f"history-{checkout_key(checkout)}.sqlite"))
        figures = timed(argv, env, cwd=checkout, lab_pids=pids)
        (run_dir,) = set(out.iterdir()) - before
        return figures, run_dir

    def close(self) -> None:
        for phone in self.lab.phones.values():
            phone.vanish()
        for server in self.lab.servers:
            server.stop()


def best(values: list[float]) -> tuple[float, float]:
    return min(values), max(values) - min(values)


def scale(farm: Farm, sizes: list[int], repeat: int, sample_ms: int, limit: int | None) -> list[dict]:
    rows = []
    samples = limit or SAMPLES
    extra = ("--limit", str(limit)) if limit else ()
    for n in sizes:
        labels = farm.phones(n)
        out = farm.work / f"runs-{n}"
        first, first_dir = farm.run(out, *extra)
        first_bytes = pushed(first_dir)
        seconds = []
        for _ in range(repeat):
            fig, run_dir = farm.run(out, *extra)
            seconds.append((fig, pushed(run_dir)))
        farm.unplug(labels)
        wall, spread = best([f["wall_s"] for f, _ in seconds])
        at_best = min((f for f, _ in seconds), key=lambda f: f["wall_s"])
        compute_s = samples * sample_ms / 1000
        # The lab's CPU could have taken at most lab_cpu_s / cores of the wall from edgefarm.
        lab_free = max(compute_s, wall - at_best["lab_cpu_s"] / (os.cpu_count() or 1))
        rows.append({
            "phones": n,
            "samples_per_phone": samples,
            "sample_ms": sample_ms,
            "first_wall_s": round(first["wall_s"], 2),
            "wall_s": round(wall, 2),
            "wall_spread_s": round(spread, 2),
            "host_overhead_ms_per_sample": round((wall - samples * sample_ms / 1000) / samples * 1000, 2),
            "host_cpu_s": round(min(f["cpu_s"] for f, _ in seconds), 2),
            "host_cpu_spread_s": round(best([f["cpu_s"] for f, _ in seconds])[1], 2),
            "peak_rss_mb": round(min(f["peak_rss_mb"] for f, _ in seconds), 1),
            "edgefarm_cpu_ms_per_sample": round(min(f["cpu_s"] for f, _ in seconds) / (samples * n) * 1000, 3),
            "lab_cpu_s": round(at_best["lab_cpu_s"], 2),
            "idle_fraction": round(at_best["idle_fraction"], 3),
            "saturated": at_best["idle_fraction"] < 0.05,
            "load1": round(at_best["load1"], 2),
            "lab_free_wall_s": round(lab_free, 2),
            "first_run_bytes": first_bytes,
            "second_run_bytes": seconds[0][1],
        })  # fmt: skip
        print(f"N={n}: {rows[-1]}", file=sys.stderr, flush=True)
    one = rows[0]["wall_s"]
    one_free = rows[0]["lab_free_wall_s"]
    for r in rows:
        r["efficiency"] = round(one / r["wall_s"], 3)
        r["efficiency_lab_accounted"] = round(one_free / r["lab_free_wall_s"], 3)
    return rows


def paired(this: list[dict], other: list[dict], keys: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Per figure of runs taken in pairs: the median of each side and of the pairs' differences
    (this - other), which a shared machine's drift moves less than either median."""
    out = {}
    for key in keys:
        a, b = [f[key] for f in this], [f[key] for f in other]
        out[key] = {"this": round(statistics.median(a), 3), "other": round(statistics.median(b), 3),
                    "diff": round(statistics.median(x - y for x, y in zip(a, b)), 3)}  # fmt: skip
    return out


def against(farm: Farm, other: Path, sizes: list[int], repeat: int, limit: int | None) -> list[dict]:
    """Before/after on the same phones: per N, a first run of each checkout (its pushes), then `repeat`
    pairs of runs alternating which goes first; the median of each side and of the pairs' differences
    (this - other): on a shared machine whose speed drifts, a pair's two runs see the same drift."""
    rows = []
    extra = ("--limit", str(limit)) if limit else ()
    samples = limit or SAMPLES
    sides = {"this": farm.edgefarm, "other": other}
    for n in sizes:
        labels = farm.phones(n)
        for side, checkout in sides.items():
            farm.run(farm.work / f"against-{n}-{side}", *extra, checkout=checkout)
        figs: dict[str, list[dict]] = {"this": [], "other": []}
        for i in range(repeat):
            for side in ("this", "other") if i % 2 == 0 else ("other", "this"):
                fig, _ = farm.run(farm.work / f"against-{n}-{side}", *extra, checkout=sides[side])
                figs[side].append(fig)
        farm.unplug(labels)
        row: dict = {"phones": n, "pairs": repeat}
        row.update(paired(figs["this"], figs["other"], ("cpu_s", "wall_s", "lab_cpu_s", "peak_rss_mb")))
        row["cpu_ms_per_sample"] = {k: round(v / (samples * n) * 1000, 3) for k, v in row["cpu_s"].items()}
        row["load1"] = round(statistics.median(f["load1"] for side in figs.values() for f in side), 2)
        rows.append(row)
        print(f"N={n}: {row}", file=sys.stderr, flush=True)
    return rows


PUSH_SNIPPET = """
import sys, time
from pathlib import Path, PurePosixPath
from orchestrator.devices.adb import AdbDevice
from orchestrator.devices.files import cached_sha256
dev = AdbDevice("bench", sys.argv[1], server=("127.0.0.1", int(sys.argv[2])))
cached_sha256(Path(sys.argv[3]))  # `edgefarm run` hashes the model while inspecting it, before staging
t0 = time.perf_counter()
stats = dev.push(Path(sys.argv[3]), PurePosixPath(sys.argv[4]))
print(time.perf_counter() - t0, stats.bytes_sent)
"""


def push_vs_adb(farm: Farm, size_mb: int, repeat: int) -> dict:
    """First push of a size_mb model: edgefarm's AdbDevice.push against `adb push`, same phone, same link."""
    model = farm.work / "big.litertlm"
    with open(model, "wb") as f:  # the tiny model padded to size: still a loadable .litertlm
        f.write((REPO / "data/models/tiny-mm.litertlm").read_bytes())
        block = os.urandom(2**20)
        f.writelines(block for _ in range(size_mb))
    (label,) = farm.phones(1)
    serial, port = farm.lab.serials[label], farm.lab.servers[farm.lab.owner[farm.lab.serials[label]]].port
    remote = "/data/local/tmp/edgefarm/models/big/big.litertlm"
    on_phone = farm.lab.device_root(label) / "local/tmp/edgefarm/models/big/big.litertlm"
    env = farm.env()
    size = model.stat().st_size
    ours, theirs = [], []
    for _ in range(repeat):
        on_phone.unlink(missing_ok=True)
        p = subprocess.run([farm.python, "-c", PUSH_SNIPPET, serial, str(port), str(model), remote],
                           cwd=farm.edgefarm, env=env, capture_output=True, text=True, check=True)  # fmt: skip
        seconds, sent = p.stdout.split()
        assert int(sent) == size, (sent, size)
        ours.append(float(seconds))
        on_phone.unlink(missing_ok=True)
        t0 = time.perf_counter()
        subprocess.run([str(adb_binary()), "-P", str(port), "-s", serial, "push", str(model), remote],
                       env=env, capture_output=True, check=True)  # fmt: skip
        theirs.append(time.perf_counter() - t0)
    again = subprocess.run([farm.python, "-c", PUSH_SNIPPET, serial, str(port), str(model), remote],
                           cwd=farm.edgefarm, env=env, capture_output=True, text=True, check=True)  # fmt: skip
    farm.unplug([label])
    mb = size / 2**20
    return {
        "model_mb": round(mb, 1),
        "edgefarm_s": round(min(ours), 2),
        "edgefarm_spread_s": round(max(ours) - min(ours), 2),
        "adb_push_s": round(min(theirs), 2),
        "adb_push_spread_s": round(max(theirs) - min(theirs), 2),
        "edgefarm_mb_s": round(mb / min(ours), 1),
        "adb_push_mb_s": round(mb / min(theirs), 1),
        "ratio": round(min(theirs) / min(ours), 3),
        "second_push_bytes": int(again.stdout.split()[1]),
        "second_push_s": round(float(again.stdout.split()[0]), 2),
    }


def shard(farm: Farm, repeat: int, limit: int | None) -> dict:
    labels = farm.phones(4)
    out = farm.work / "runs-shard"
    extra = ("--limit", str(limit)) if limit else ()
    farm.run(out, *extra)  # first run: pushes
    plain = [farm.run(out, *extra)[0]["wall_s"] for _ in range(repeat)]
    sharded = [farm.run(out, "--shard", *extra)[0]["wall_s"] for _ in range(repeat)]
    farm.unplug(labels)
    return {
        "phones": 4,
        "unsharded_s": round(min(plain), 2),
        "unsharded_spread_s": round(max(plain) - min(plain), 2),
        "sharded_s": round(min(sharded), 2),
        "sharded_spread_s": round(max(sharded) - min(sharded), 2),
        "ratio": round(min(sharded) / min(plain), 3),
    }


def print_table(result: dict) -> None:
    if result.get("scale"):
        print_scale(result)
    for r in result.get("against", []):
        c, w, lab, ms = r["cpu_s"], r["wall_s"], r["lab_cpu_s"], r["cpu_ms_per_sample"]
        print(f"N={r['phones']:>2} ({r['pairs']} pairs, medians; this / other / paired diff): "
              f"edgefarm CPU {c['this']:.2f} / {c['other']:.2f} / {c['diff']:+.2f} s "
              f"({ms['this']:.3f} / {ms['other']:.3f} ms per sample), wall {w['this']:.2f} / {w['other']:.2f} / "
              f"{w['diff']:+.2f} s, lab CPU {lab['this']:.2f} / {lab['other']:.2f} s, load1 {r['load1']}")  # fmt: skip
    if p := result.get("push"):
        print_push(p)
    if s := result.get("shard"):
        print(f"--shard on 4 identical phones: {s['sharded_s']} s (± {s['sharded_spread_s']}) vs unsharded "
              f"{s['unsharded_s']} s (± {s['unsharded_spread_s']}): {s['ratio']:.2f}x")  # fmt: skip


def print_scale(result: dict) -> None:
    print(f"{'N':>3} {'wall s':>7} {'±':>5} {'eff':>5} {'eff-lab':>7} {'ovh ms/s':>9} {'cpu s':>6} "
          f"{'cpu ms/smp':>10} {'lab cpu s':>9} {'idle':>5} {'load1':>5} {'rss MB':>7} "
          f"{'1st model B':>12} {'1st other B':>12} {'2nd model B':>12} {'1st wall s':>10}")  # fmt: skip
    for r in result["scale"]:
        print(f"{r['phones']:>3} {r['wall_s']:>7.2f} {r['wall_spread_s']:>5.2f} {r['efficiency']:>5.2f} "
              f"{r['efficiency_lab_accounted']:>7.2f} {r['host_overhead_ms_per_sample']:>9.2f} "
              f"{r['host_cpu_s']:>6.2f} {r['edgefarm_cpu_ms_per_sample']:>10.3f} {r['lab_cpu_s']:>9.2f} "
              f"{r['idle_fraction']:>5.2f}{'*' if r['saturated'] else ' '}{r['load1']:>5.2f} {r['peak_rss_mb']:>7.1f} "
              f"{r['first_run_bytes']['model_bytes']:>12} {r['first_run_bytes']['other_bytes']:>12} "
              f"{r['second_run_bytes']['model_bytes']:>12} {r['first_wall_s']:>10.2f}")  # fmt: skip
    rows = result["scale"]
    if len(rows) > 1:
        per = (rows[-1]["peak_rss_mb"] - rows[0]["peak_rss_mb"]) / (rows[-1]["phones"] - rows[0]["phones"])
        print(f"host memory per added phone: {per:.2f} MB")


def print_push(p: dict) -> None:
    print(f"first push of {p['model_mb']} MB: edgefarm {p['edgefarm_s']} s ({p['edgefarm_mb_s']} MB/s, "
          f"± {p['edgefarm_spread_s']}), adb push {p['adb_push_s']} s ({p['adb_push_mb_s']} MB/s, "
          f"± {p['adb_push_spread_s']}): {p['ratio'] * 100:.0f}% of adb push; second push "
          f"{p['second_push_bytes']} bytes in {p['second_push_s']} s")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phones", default="1,4,8,16", help="phone counts, comma-separated")
    ap.add_argument("--sample-ms", type=int, default=100, help="the stand-in runner's time per sample")
    ap.add_argument("--limit", type=int, default=None, help="first N samples (default: all 200)")
    ap.add_argument("--repeat", type=int, default=2, help="second runs per N (the best is reported)")
    ap.add_argument("--push-mb", type=int, default=200, help="model size for the push comparison (0: skip)")
    ap.add_argument("--no-shard", action="store_true", help="skip the --shard comparison")
    ap.add_argument(
        "--edgefarm",
        type=Path,
        default=REPO,
        help="the checkout to measure (its .venv's python runs it; default: this one)",
    )
    ap.add_argument(
        "--bytecode",
        action="store_true",
        help="edgefarm's modules compiled once, not on every run (as installed)",
    )
    ap.add_argument(
        "--against",
        type=Path,
        default=None,
        help="another checkout: paired runs of both on the same phones instead of the scale table",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill still stops the lab's adb servers
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        farm = Farm(Path(tmp), args.sample_ms, args.edgefarm.resolve(), args.bytecode)
        try:
            sizes = [int(x) for x in args.phones.split(",")]
            if args.against:
                result["against"] = against(farm, args.against.resolve(), sizes, args.repeat, args.limit)
            else:
                result["scale"] = scale(farm, sizes, args.repeat, args.sample_ms, args.limit)
            if args.push_mb:
                result["push"] = push_vs_adb(farm, args.push_mb, max(2, args.repeat))
            if not args.no_shard:
                result["shard"] = shard(farm, args.repeat, args.limit)
        finally:
            farm.close()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
