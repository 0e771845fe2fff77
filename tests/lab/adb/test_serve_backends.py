"""`edgefarm serve --backend cpu,gpu` over lab phones (docs/serve.md "Several backends per device"): each
phone is a model per backend (pixel-8/cpu, pixel-8/gpu), each unit's engine loaded once, driven by the
official `openai` client. The Pixel runs the lab's GPU stand-in (gpu_runtime.c, FLIPS=0: the gpu backend is
the real CPU engine, an unperturbed GPU path); the Galaxy runs this host's real library, which has no GPU,
so its gpu model is down with the runtime's reason while its cpu model serves."""

from __future__ import annotations

import json
import threading

import openai
import pytest

from ..serve_client import Server
from .runtime_wrap import gpu_runtime

PIXEL, GALAXY = "pixel-8", "sm-s921b"
PING = [{"role": "user", "content": "edgefarm ping"}]


@pytest.fixture(scope="module")
def units(adb_lab, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-backends")
    _, real_lib = adb_lab.native_runner()
    lib = gpu_runtime(tmp / "gpu0", real_lib, 0, 1, 0)
    inv = tmp / "devices.yaml"
    inv.write_text(
        f"devices:\n  - name: {PIXEL}\n    kind: adb\n    serial: '{adb_lab.serials['pixel8']}'\n"
        f"    runtime_lib: '{lib}'\n    libs: ['{lib.parent / 'liblitert-lm-real.so'}']\n"
        f"  - name: {GALAXY}\n    kind: adb\n    serial: '{adb_lab.serials['s24']}'\n"
    )
    env = adb_lab.env(EDGEFARM_ALLOW_RUNTIME="1")  # the stand-in is not the pinned library
    s = Server(tmp, "--inventory", str(inv), "--backend", "cpu,gpu", env=env, devices=f"{PIXEL},{GALAXY}",
               within_s=120, settled=("ready", "down"))  # fmt: skip
    yield s
    if s.proc.poll() is None:
        s.stop()


def test_each_phone_is_a_model_per_backend_with_its_backend(units):
    models = {m.id: m.model_extra["edgefarm"] for m in units.client.models.list().data}
    assert list(models) == [f"{PIXEL}/cpu", f"{PIXEL}/gpu", f"{GALAXY}/cpu", f"{GALAXY}/gpu"]
    for mid, facts in models.items():
        device, backend = mid.split("/")
        assert (facts["device"], facts["backend"]) == (device, backend)
    for mid in (f"{PIXEL}/cpu", f"{PIXEL}/gpu", f"{GALAXY}/cpu"):
        assert models[mid]["state"] == "ready" and models[mid]["model_loads"] == 1, (mid, models[mid])
    down = models[f"{GALAXY}/gpu"]
    assert down["state"] == "down" and "gpu_unavailable" in down["reason"] and down["model_loads"] == 0


def test_each_unit_answers_on_its_own_backend_and_a_phones_units_take_turns(units):
    """Both units of the Pixel and the Galaxy's cpu asked at once, three times each: every answer right and
    from the backend its model names (the runtime's own log), none lost to the shared turn."""
    got: dict[str, list] = {}

    def ask(model: str) -> None:
        for _ in range(3):
            reply = units.client.chat.completions.create(model=model, messages=PING, max_tokens=8)
            got.setdefault(model, []).append(
                (reply.choices[0].message.content, reply.model_extra["edgefarm"])
            )

    models = (f"{PIXEL}/cpu", f"{PIXEL}/gpu", f"{GALAXY}/cpu")
    threads = [threading.Thread(target=ask, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(got) == sorted(models), units.output()[-3000:]
    for model, answers in got.items():
        device, backend = model.split("/")
        assert len(answers) == 3
        for text, ef in answers:
            assert text == "pong" and ef["status"] == "ok"
            assert (ef["device"], ef["backend"], ef["backend_requested"]) == (device, backend, backend), ef


def test_the_gpu_a_phone_lacks_is_503_with_the_reason_and_its_cpu_serves(units):
    with pytest.raises(openai.InternalServerError) as e:
        units.client.chat.completions.create(model=f"{GALAXY}/gpu", messages=PING)
    assert e.value.status_code == 503
    error = e.value.body if isinstance(e.value.body, dict) else {}
    assert error.get("code") == "backend_unavailable" and "gpu_unavailable" in error.get("message", ""), (
        e.value.body
    )
    ok = units.client.chat.completions.create(model=f"{GALAXY}/cpu", messages=PING)
    assert ok.choices[0].message.content == "pong" and ok.model_extra["edgefarm"]["backend"] == "cpu"


def test_the_session_reads_like_a_matrix_run(units):
    """After Ctrl-C: one folder per unit with its rows (a matrix run's), the down unit's outcome with its
    reason and exit code 6, and the report's matrix with the missing gpu as a cell with its reason."""
    assert units.stop() == 0, units.output()[-3000:]
    (run_dir,) = [p for p in units.out.iterdir() if p.is_dir()]
    run = json.loads((run_dir / "run.json").read_text())
    assert run["kind"] == "serve" and run["flags"]["backend"] == "cpu,gpu"
    assert run["devices"] == [f"{PIXEL}@cpu", f"{PIXEL}@gpu", f"{GALAXY}@cpu", f"{GALAXY}@gpu"]
    for unit in (f"{PIXEL}@cpu", f"{PIXEL}@gpu", f"{GALAXY}@cpu"):
        folder = run_dir / "devices" / unit
        rows = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
        assert len(rows) >= 3 and {r["backend"] for r in rows} == {unit.split("@")[1]}, unit
        assert json.loads((folder / "outcome.json").read_text())["model_loads"] == 1, unit
    for name in (PIXEL, GALAXY):  # the model's place on a phone is by content: its units push it once at most
        pushes = [json.loads((run_dir / "devices" / f"{name}@{b}" / "outcome.json").read_text())["model_push"]
                  for b in ("cpu", "gpu")]  # fmt: skip
        assert all(p["files"] + p["files_skipped"] == 1 for p in pushes), pushes
        assert sum(1 for p in pushes if p["bytes_sent"] > 0) <= 1, pushes
    assert units.output().count(f"{GALAXY}/gpu down: ") == 1  # not tried again (each try: a load on the phone)
    down = json.loads((run_dir / "devices" / f"{GALAXY}@gpu" / "outcome.json").read_text())
    assert down["error_code"] == 6 and "gpu_unavailable" in down["error"]
    assert not (run_dir / "devices" / f"{GALAXY}@gpu" / "results.jsonl").exists()
    cells = {c["unit"]: c for c in json.loads((run_dir / "report.json").read_text())["matrix"]["cells"]}
    assert set(cells) == set(run["devices"])
    assert not cells[f"{GALAXY}@gpu"]["ran"] and cells[f"{GALAXY}@gpu"]["reason"].startswith(
        "gpu_unavailable: "
    )
    assert all(cells[u]["ran"] for u in (f"{PIXEL}@cpu", f"{PIXEL}@gpu", f"{GALAXY}@cpu"))
