#!/usr/bin/env python3
"""`edgefarm serve` against `litert-lm serve`: requests per second and the latency each adds, same host,
same model, same prompts, side by side; then N lab phones asked at once against one.

    flock /tmp/edgefarm-bench.lock flock /tmp/edgefarm-lab.lock \
        python scripts/bench_serve.py --litert-lm /path/to/venv/bin/litert-lm [--requests 200] [--rounds 4] [--stream]
            [--phones 3] [--json]

`litert-lm` is LiteRT-LM's own command line (PyPI `litert-lm`, the pinned runtime's version), in a venv
of its own (it is the comparison, not a dependency): `python3 -m venv V && V/bin/pip install
litert-lm==0.18.1`. Its model store is a temporary HOME (the tiny model imported there), never the
user's ~/.litert-lm.

Part 1, one device: both servers run the bundled tiny model on this host's CPU; each gets a warm-up, then
`--rounds` alternating blocks (litert-lm, edgefarm, litert-lm, ...) of `--requests` sequential chat
requests (greedy, the same prompts), timed at the client from send to the whole answer. Per server: the
median request time over all blocks, p90, and requests per second (1 / mean); edgefarm's added latency
is the difference of the medians (its queue, the request's job line and the runner's inbox). Alternating
blocks and medians: other work on the host (the project's helpers share its 2 cores) falls on both.
`--stream`: every request asks `stream: true` and is read to its `[DONE]`; both servers then answer with
the runtime's streaming call (`send_message_async`, which litert-lm serve uses for every request), where
edgefarm answers a request read whole with the whole-answer call a run makes (docs/benchmarks/serve.md).

Part 2, N devices: `--phones` emulated lab phones (tests/lab/adb: real adb servers, mksh + toybox,
edgefarm's native runner on the real runtime), one `edgefarm serve` over them; the same requests from
one client thread per phone at once, against one phone alone. The phones are processes on this host,
so N phones share its cores: the ratio shows what the farm's path adds or holds back, not N real
phones' speed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.lab.adb.conftest import running_lab
from tests.lab.adb.sandbox import GALAXY_S24, PIXEL_8, REDMI_NOTE_13
from tests.lab.serve_client import KEY, TINY_MM, free_port

LAB_PHONES = (("pixel8", PIXEL_8), ("s24", GALAXY_S24), ("redmi", REDMI_NOTE_13))
PROMPTS = (
    "edgefarm ping",
    "edgefarm status",
    "Name the tiny model.",
    "Count to three.",
    "Which farm is this?",
)


STREAM = False  # --stream: every request asks `stream: true` (server-sent events, read to [DONE])


def post(url: str, model: str, prompt: str, key: str = "") -> float:
    """One chat request, its answer read whole (a stream to its [DONE]); seconds from send to the end."""
    ask = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 32, "stream": STREAM}
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    t0 = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, json.dumps(ask).encode(), headers), timeout=60) as r:
        if not STREAM:
            json.loads(r.read())
        else:
            for line in r:
                if line.strip() == b"data: [DONE]":
                    break
                if line.startswith(b"data: "):
                    json.loads(line[6:])
    return time.perf_counter() - t0


def wait_ready(url: str, key: str, proc: subprocess.Popen, within_s: float = 120) -> list[str]:
    """The server's model ids once every model is ready."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}) before it was ready")
        try:
            ask = urllib.request.Request(
                url + "/v1/models", headers={"Authorization": f"Bearer {key}"} if key else {}
            )
            with urllib.request.urlopen(ask, timeout=2) as r:
                models = json.loads(r.read())["data"]
            if models and all(m.get("edgefarm", {}).get("state", "ready") == "ready" for m in models):
                return [m["id"] for m in models]
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} not ready within {within_s:g} s")


def edgefarm_serve(work: Path, env: dict, devices: str, *flags: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "orchestrator", "serve", "--devices", devices, "--port", str(port), "--api-key",
           KEY, "--db", "none", "--out", str(work / "runs"), "--model", str(TINY_MM), *flags]  # fmt: skip
    log = open(work / f"edgefarm-{port}.log", "w")  # noqa: SIM115 - the child keeps it
    return subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
    ), f"http://127.0.0.1:{port}"


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(2)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system) used so far by `root` and every live process below it (/proc/PID/stat):
    the whole server, runners and lab phones included. Unlike wall time it hardly moves with the load
    other work puts on the host, so it says what a request costs where the wall clock cannot."""
    parent, used = {}, {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                    fields = f.read().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            parent[int(name)] = int(fields[1])  # ppid (field 4; fields here start at field 3)
            used[int(name)] = int(fields[11]) + int(fields[12])  # utime + stime (fields 14, 15), clock ticks
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += [p for p, pp in parent.items() if pp == pid and p not in tree]
    return sum(used.get(p, 0) for p in tree) / os.sysconf("SC_CLK_TCK")


def summary(times: list[float], cpu_s: float | None = None) -> dict:
    ms = sorted(t * 1000 for t in times)
    out = {"requests": len(ms), "p50_ms": round(statistics.median(ms), 2),
           "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 2), "rps": round(len(ms) / (sum(ms) / 1000), 1)}  # fmt: skip
    if cpu_s is not None:  # the server's whole process tree, per request
        out["cpu_ms_per_request"] = round(cpu_s * 1000 / len(ms), 2)
    return out


def one_device(work: Path, litert_lm: str, requests: int, rounds: int) -> dict:
    home = work / "litert-home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    subprocess.run([litert_lm, "import", str(TINY_MM), "tiny"], env=env, check=True, capture_output=True)
    port = free_port()
    theirs = subprocess.Popen([litert_lm, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    inv = work / "devices.yaml"
    inv.write_text(f"devices:\n  - name: this-host\n    kind: local\n    workdir: {work / 'host'}\n")
    ours, url = edgefarm_serve(work, {k: v for k, v in os.environ.items() if k != "EDGEFARM_INVENTORY"},
                               "this-host", "--inventory", str(inv))  # fmt: skip
    servers = {
        "litert-lm serve": (f"http://127.0.0.1:{port}", "tiny", "", theirs.pid),
        "edgefarm serve": (url, "this-host/cpu", KEY, ours.pid),
    }
    try:
        wait_ready(servers["litert-lm serve"][0], "", theirs)
        wait_ready(url, KEY, ours)
        times: dict[str, list[float]] = {name: [] for name in servers}
        cpu = dict.fromkeys(servers, 0.0)
        for name, (base, model, key, _) in servers.items():  # warm-up: the engine's first turns
            for i in range(10):
                post(base + "/v1/chat/completions", model, PROMPTS[i % len(PROMPTS)], key)
        for _ in range(rounds):
            for name, (base, model, key, pid) in servers.items():
                before = tree_cpu_s(pid)
                times[name] += [post(base + "/v1/chat/completions", model, PROMPTS[i % len(PROMPTS)], key)
                                for i in range(requests)]  # fmt: skip
                cpu[name] += tree_cpu_s(pid) - before
    finally:
        theirs.terminate()
        theirs.wait(timeout=30)
        stop(ours)
    out = {name: summary(t, cpu[name]) for name, t in times.items()}
    out["added_ms_p50"] = round(out["edgefarm serve"]["p50_ms"] - out["litert-lm serve"]["p50_ms"], 2)
    out["rps_ratio"] = round(out["edgefarm serve"]["rps"] / out["litert-lm serve"]["rps"], 3)
    return out


def client(url: str, model: str, requests: int, into: list[float]) -> None:
    """One client thread: `requests` sequential requests to one model (list.extend is atomic)."""
    into.extend(post(url + "/v1/chat/completions", model, PROMPTS[i % len(PROMPTS)], KEY) for i in range(requests))


def phones(work: Path, count: int, requests: int) -> dict:
    out = {}
    with running_lab(work / "lab", [(label, spec, 0) for label, spec in LAB_PHONES[:count]], hosts=1) as lab:
        env = {k: v for k, v in lab.env(COLUMNS="200").items() if k != "EDGEFARM_INVENTORY"}
        proc, url = edgefarm_serve(work, env, "all")
        try:
            models = wait_ready(url, KEY, proc, within_s=300)
            for name, asked in (("1 phone", models[:1]), (f"{len(models)} phones at once", models)):
                times: list[float] = []
                for model in asked:  # warm-up
                    post(url + "/v1/chat/completions", model, PROMPTS[0], KEY)
                t0, cpu0 = time.perf_counter(), tree_cpu_s(os.getpid())
                threads = [threading.Thread(target=client, args=(url, m, requests, times)) for m in asked]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                wall, cpu = time.perf_counter() - t0, tree_cpu_s(os.getpid()) - cpu0
                # the lab (phones, adb servers), the server and this client: the cores they kept busy
                out[name] = {**summary(times, cpu), "answers_per_s": round(len(times) / wall, 1),
                             "cores_busy": round(cpu / wall, 2)}  # fmt: skip
        finally:
            stop(proc)
    first, last = list(out.values())
    out["scaling"] = round(last["answers_per_s"] / first["answers_per_s"], 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--litert-lm", default=shutil.which("litert-lm"), help="LiteRT-LM's CLI (its own venv)")
    ap.add_argument("--requests", type=int, default=100, help="requests per block (1..10000)")
    ap.add_argument("--rounds", type=int, default=4, help="alternating blocks per server (1..50)")
    ap.add_argument("--phones", type=int, default=3, help="lab phones for part 2 (0..3; 0: skip it)")
    ap.add_argument("--stream", action="store_true",
                    help="every request streamed (`stream: true`): both servers on the runtime's streaming call")  # fmt: skip
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    global STREAM
    STREAM = args.stream
    if not 1 <= args.requests <= 10_000 or not 1 <= args.rounds <= 50 or not 0 <= args.phones <= 3:
        ap.error("--requests in 1..10000, --rounds in 1..50, --phones in 0..3")
    if not args.litert_lm or not Path(args.litert_lm).exists():
        ap.error(
            "no litert-lm: python3 -m venv V && V/bin/pip install litert-lm==0.18.1, then --litert-lm V/bin/litert-lm"
        )
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        result = {"one_device": one_device(Path(tmp), args.litert_lm, args.requests, args.rounds)}
        if args.phones:
            result["phones"] = phones(Path(tmp), args.phones, args.requests)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print("| server | requests | p50 (ms) | p90 (ms) | requests/s | CPU ms per request |\n|---|---|---|---|---|---|")
    for name, r in result["one_device"].items():
        if isinstance(r, dict):
            print(f"| {name} | {r['requests']} | {r['p50_ms']} | {r['p90_ms']} | {r['rps']} | {r['cpu_ms_per_request']} |")
    one = result["one_device"]
    print(
        f"\nadded latency (p50): {one['added_ms_p50']} ms; requests/s edgefarm / litert-lm: {one['rps_ratio']}"
    )
    if "phones" in result:
        print("\n| lab phones | answers | p50 (ms) | p90 (ms) | answers/s | CPU ms per answer | cores busy |\n"
              "|---|---|---|---|---|---|---|")  # fmt: skip
        for name, r in result["phones"].items():
            if isinstance(r, dict):
                print(f"| {name} | {r['requests']} | {r['p50_ms']} | {r['p90_ms']} | {r['answers_per_s']} | "
                      f"{r['cpu_ms_per_request']} | {r['cores_busy']} |")  # fmt: skip
        print(f"\nscaling (N phones / 1 phone, answers per second): {result['phones']['scaling']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
