"""`edgefarm serve` over lab phones (tests/lab/adb): each phone's native runner in its serve mode behind the
real adb server, driven by the official `openai` client; answers equal `edgefarm run`'s on the same phone."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import openai
import pytest

from ..serve_client import REPO, TINY_MM, Server, as_messages, data_url

PIXEL, GALAXY = "google-pixel-8", "samsung-sm-s921b"
BUNDLED = REPO / "data" / "edgemmeval"


def _run_on_pixel(adb_lab, out: Path) -> subprocess.CompletedProcess:
    """`edgefarm run` of a text and an image sample of the bundled set on the Pixel."""
    env = {k: v for k, v in adb_lab.env(COLUMNS="200").items() if k != "EDGEFARM_INVENTORY"}
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "run", "--devices", PIXEL, "--dataset", str(BUNDLED), "--modality",
         "text", "--modality", "image", "--per-modality", "1", "--model", str(TINY_MM), "--out", str(out),
         "--db", "none", "--max-output-tokens", "24"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def pixel_run(adb_lab, tmp_path_factory):
    """The run the server's answers are held against, made before the server takes the phones (a run
    and a server never share a phone: serve/hold.py)."""
    out = tmp_path_factory.mktemp("pixel-run")
    ran = _run_on_pixel(adb_lab, out)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return next(p for p in out.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def phones(adb_lab, pixel_run, tmp_path_factory):
    s = Server(
        tmp_path_factory.mktemp("serve-phones"), env=adb_lab.env(), devices=f"{PIXEL},{GALAXY}", within_s=120
    )
    yield s
    if s.proc.poll() is None:
        s.stop()


def test_each_phone_is_a_model_with_its_facts(phones):
    models = {m.id: m.model_extra["edgefarm"] for m in phones.client.models.list().data}
    assert set(models) == {f"{PIXEL}/cpu", f"{GALAXY}/cpu"}
    for facts in models.values():
        assert facts["state"] == "ready" and facts["runner"] == "native" and facts["model_loads"] == 1
        assert facts["info"]["kind"] == "adb" and facts["info"]["soc"]


def test_answers_equal_edgefarm_run_on_the_same_phone(phones, pixel_run):
    """A text and an image sample of the bundled set, run by `edgefarm run` on the Pixel, then sent to the
    Pixel's model: the same answer and the runtime's same token counts, from the phone's native runner."""
    run_dir = pixel_run
    job = run_dir / "devices" / PIXEL / "job"
    items = [json.loads(x) for x in (job / "job.jsonl").read_text().splitlines()]
    rows = {
        r["id"]: r
        for r in map(json.loads, (run_dir / "devices" / PIXEL / "results.jsonl").read_text().splitlines())
    }
    assert {p["kind"] for it in items for t in it["turns"] for p in t} == {"text", "image"}
    for item in items:
        reply = phones.client.chat.completions.create(model=f"{PIXEL}/cpu", messages=as_messages(item, job),
                                                      max_tokens=item["max_output_tokens"])  # fmt: skip
        row = rows[item["id"]]
        assert row["status"] == "ok" and reply.choices[0].message.content == row["output"], item["id"]
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
            row["prefill_tokens"],
            row["decode_tokens"],
        )
        ef = reply.model_extra["edgefarm"]
        assert (
            ef["device"] == PIXEL and ef["runner"] == "native" and ef["ttft_ms"] > 0 and ef["peak_rss_mb"] > 0
        )


def test_a_run_on_a_served_phone_is_refused_naming_the_server(phones, adb_lab, tmp_path):
    """The server holds each phone's run lock as a run does: `edgefarm run` on the Pixel is refused (exit
    3) with the serve session's run id, and the Pixel's model still answers."""
    ran = _run_on_pixel(adb_lab, tmp_path)
    serve_id = next(p for p in phones.out.iterdir() if p.is_dir()).name
    said = (ran.returncode, ran.stderr[-3000:])
    assert ran.returncode == 3 and f"in use by run {serve_id}" in ran.stderr, said
    reply = phones.client.chat.completions.create(
        model=f"{PIXEL}/cpu", messages=[{"role": "user", "content": "edgefarm ping"}]
    )
    assert reply.choices[0].message.content == "pong"


def test_two_phones_answer_at_once_history_and_stream(phones):
    """Both phones asked together; a history and a stream (its pieces: test_serve_stream_phones.py)."""
    answers: dict[str, str] = {}

    def ask(model: str) -> None:
        reply = phones.client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "edgefarm ping"}]
        )
        answers[reply.model_extra["edgefarm"]["device"]] = reply.choices[0].message.content

    threads = [threading.Thread(target=ask, args=(f"{d}/cpu",)) for d in (PIXEL, GALAXY)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert answers == {PIXEL: "pong", GALAXY: "pong"}
    canned = json.loads((REPO / "data" / "models" / "canned.json").read_text())
    kiwi = next(c for c in canned if c.get("history"))
    history = [
        {"role": h["role"].replace("model", "assistant"), "content": h["text"]} for h in kiwi["history"]
    ]
    reply = phones.client.chat.completions.create(
        model=f"{GALAXY}/cpu", messages=[*history, {"role": "user", "content": kiwi["prompt"]}]
    )
    assert reply.choices[0].message.content == kiwi["answer"]
    chunks = list(phones.client.chat.completions.create(model=f"{PIXEL}/cpu", stream=True,
                                                        messages=[{"role": "user", "content": "Count to three."}]))  # fmt: skip
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "one two three"
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].usage.completion_tokens > 0


def test_an_image_reaches_the_phone(phones):
    png = REPO / "data" / "edgemmeval" / "data" / "test" / "images" / "IMG-001.png"
    reply = phones.client.chat.completions.create(model=f"{GALAXY}/cpu", max_tokens=8, messages=[{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": data_url(png)}}, {"type": "text", "text": "What color?"}]}])  # fmt: skip
    assert reply.model_extra["edgefarm"]["status"] == "ok" and reply.usage.prompt_tokens > 20


def test_a_lost_phone_is_503_the_other_answers_and_it_comes_back(phones, adb_lab):
    label = "s24"
    adb_lab.phones[label].vanish()
    try:
        with pytest.raises(openai.InternalServerError) as e:
            phones.client.chat.completions.create(
                model=f"{GALAXY}/cpu", messages=[{"role": "user", "content": "edgefarm ping"}]
            )
        assert e.value.status_code == 503, e.value.body
        ok = phones.client.chat.completions.create(
            model=f"{PIXEL}/cpu", messages=[{"role": "user", "content": "edgefarm ping"}]
        )
        assert ok.choices[0].message.content == "pong"
    finally:
        adb_lab.come_back(label)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            back = phones.client.chat.completions.create(
                model=f"{GALAXY}/cpu", messages=[{"role": "user", "content": "edgefarm ping"}]
            )
            break
        except openai.InternalServerError:
            time.sleep(0.5)
    else:
        raise AssertionError(f"{GALAXY} did not come back:\n{phones.output()[-3000:]}")
    assert back.choices[0].message.content == "pong"


def test_ctrl_c_stops_every_phones_runner(phones, adb_lab):
    assert phones.stop() == 0, phones.output()
    run_dir = next(p for p in phones.out.iterdir() if p.is_dir())
    assert json.loads((run_dir / "run.json").read_text())["kind"] == "serve"
    for name in (PIXEL, GALAXY):
        rows = [
            json.loads(x) for x in (run_dir / "devices" / name / "results.jsonl").read_text().splitlines()
        ]
        assert any(r["status"] == "ok" for r in rows), name
    for label in ("pixel8", "s24"):  # the driver and its runner of each serve job are gone
        for lock in adb_lab.device_root(label).rglob("driver.pid"):
            if f"/runs/{run_dir.name}/" in str(lock):
                for pid in lock.read_text().split():
                    assert (
                        not Path(f"/proc/{pid}").exists()
                        or b"edgefarm" not in Path(f"/proc/{pid}/cmdline").read_bytes()
                    ), lock
