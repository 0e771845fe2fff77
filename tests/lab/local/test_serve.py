"""`edgefarm serve` on this host, driven by the official `openai` client: the real runner (under
faulty_runner.py, whose faults fire only on prompts that name them), the real litert_lm runtime and the
bundled tiny model; answers equal `edgefarm run`'s on the same samples."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import openai
import pytest

from ..serve_client import Server, as_messages
from .conftest import BUNDLED, TINY_MM, edgefarm, only_run_dir, python_wrapper, results

MODEL = "this-host/cpu"
FAULTS = "KILL_ON=crash-me,DRIP_ON=drip-me,DRIP_S=0.5"
FLAGS = ("--body-max-mb", "0.25", "--messages-max", "6", "--media-max", "2", "--max-tokens-max", "256")


def this_host(tmp: Path, *flags: str) -> Server:
    """The server over this host, its python the faulty runner's."""
    inv = tmp / "devices.yaml"
    entry = {
        "name": "this-host",
        "kind": "local",
        "workdir": str(tmp / "work"),
        "python": python_wrapper(tmp),
    }
    inv.write_text(json.dumps({"devices": [entry]}))
    return Server(tmp, "--inventory", str(inv), *flags, env={**os.environ, "EDGEFARM_TEST_FAULTS": FAULTS})


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = this_host(tmp_path_factory.mktemp("serve"), *FLAGS)
    yield s
    if s.proc.poll() is None:
        s.stop()


def test_models_list_each_device_with_its_facts(server):
    models = server.client.models.list().data
    assert [m.id for m in models] == [MODEL]
    facts = models[0].model_extra["edgefarm"]
    assert facts["state"] == "ready" and facts["runner"] == "python" and facts["runtime_version"]
    assert facts["info"]["kind"] == "local" and facts["info"]["cores"] >= 1 and facts["init_ms"] > 0
    assert server.client.models.retrieve(MODEL).id == MODEL


def test_answers_equal_edgefarm_run_on_the_same_samples(server, tmp_path):
    """Text and image samples of the bundled set: `edgefarm run`'s job lines sent as chat requests get
    the answers the run recorded, with the runtime's token counts and the edgefarm object."""
    inv = tmp_path / "devices.yaml"
    inv.write_text(
        json.dumps({"devices": [{"name": "this-host", "kind": "local", "workdir": str(tmp_path / "w")}]})
    )
    ran = edgefarm("run", "--devices", "this-host", "--inventory", str(inv), "--out", str(tmp_path / "runs"),
                   "--dataset", str(BUNDLED), "--modality", "text", "--modality", "image", "--per-modality", "2",
                   "--model", str(TINY_MM), "--db", "none")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    run_dir = only_run_dir(tmp_path / "runs")
    job = run_dir / "devices" / "this-host" / "job"
    items = [json.loads(line) for line in (job / "job.jsonl").read_text().splitlines()]
    rows = {r["id"]: r for r in results(run_dir)}
    assert {"text", "image"} <= {p["kind"] for it in items for t in it["turns"] for p in t}
    for item in items:
        reply = server.client.chat.completions.create(model=MODEL, messages=as_messages(item, job),
                                                      max_tokens=item["max_output_tokens"])  # fmt: skip
        row = rows[item["id"]]
        assert reply.choices[0].message.content == row["output"], item["id"]
        assert reply.usage.completion_tokens == row["decode_tokens"]
        assert reply.usage.prompt_tokens == row["prefill_tokens"]
        ef = reply.model_extra["edgefarm"]
        assert ef["device"] == "this-host" and ef["backend"] == "cpu" and ef["status"] == "ok"
        assert ef["ttft_ms"] > 0 and ef["decode_tps"] > 0 and ef["peak_rss_mb"] > 0 and ef["runtime_version"]


def test_streaming_gives_the_same_answer_piece_by_piece(server, canned):
    ask = {"model": MODEL, "messages": [{"role": "user", "content": "Count to three."}], "max_tokens": 32}
    whole = server.client.chat.completions.create(**ask)
    chunks = list(server.client.chat.completions.create(**ask, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content == "one two three"
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) > 1  # streamed, not one blob
    last = chunks[-1]
    assert (
        last.choices[0].finish_reason == "stop"
        and last.usage.completion_tokens == whole.usage.completion_tokens
    )
    assert last.model_extra["edgefarm"]["device"] == "this-host"


def test_history_and_plain_completions(server, canned):
    """The client's assistant message is the history the model answers after (the canned exchange)."""
    kiwi = next(c for c in canned if c.get("history"))
    messages = [
        {"role": h["role"].replace("model", "assistant"), "content": h["text"]} for h in kiwi["history"]
    ]
    reply = server.client.chat.completions.create(
        model=MODEL, messages=[*messages, {"role": "user", "content": kiwi["prompt"]}]
    )
    assert reply.choices[0].message.content == kiwi["answer"]
    done = server.client.completions.create(model=MODEL, prompt="edgefarm ping", max_tokens=16)
    assert done.choices[0].text == "pong" and done.usage.completion_tokens > 0


def test_faults_in_openai_shape(server):
    c = server.client
    with pytest.raises(openai.NotFoundError) as e:
        c.chat.completions.create(model="pixel-9/cpu", messages=[{"role": "user", "content": "hi"}])
    assert e.value.body["code"] == "model_not_found" and MODEL in e.value.body["message"]
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model=MODEL, n=2, messages=[{"role": "user", "content": "hi"}])
    assert e.value.body["param"] == "n"
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}] * 7)
    assert "--messages-max" in e.value.body["message"] and "6" in e.value.body["message"]
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model=MODEL, max_tokens=257, messages=[{"role": "user", "content": "hi"}])
    assert "--max-tokens-max" in e.value.body["message"]
    big = [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 300_000}}]
    with pytest.raises(openai.APIStatusError) as e:
        c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": big}])
    assert e.value.status_code == 413 and "--body-max-mb" in e.value.body["message"]
    for url in ("file:///etc/passwd", "/etc/passwd", "http://127.0.0.1:1/x.png"):
        with pytest.raises(openai.BadRequestError) as e:
            c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": url}}]}])  # fmt: skip
        assert "data: URL" in e.value.body["message"], url


def test_a_runner_crash_fails_that_request_only_and_the_device_comes_back(server):
    with pytest.raises(openai.InternalServerError) as e:
        server.client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "crash-me"}])
    assert e.value.status_code == 503 and e.value.body["code"] == "killed"
    reply = server.client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "edgefarm ping"}]
    )
    assert reply.choices[0].message.content == "pong"
    assert server.client.models.retrieve(MODEL).model_extra["edgefarm"]["model_loads"] >= 2


def test_a_client_gone_mid_stream_frees_the_device(server):
    """Each piece of this answer comes 0.5 s apart: the client leaves after the first, the runner stops the
    answer there (its row says so) and the next request is answered at once."""
    stream = server.client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "drip-me Count to three."}],
        max_tokens=64,
        stream=True,
    )
    next(iter(stream))
    stream.close()
    t0 = time.monotonic()
    reply = server.client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "edgefarm ping"}]
    )
    assert reply.choices[0].message.content == "pong"
    rows = results(only_run_dir(server.out))
    gone = [r for r in rows if r["status"] == "error" and "client went away" in r["error"]]
    assert len(gone) == 1 and gone[0]["decode_tokens"] < 64, rows[-3:]
    assert time.monotonic() - t0 < 30


def test_another_address_needs_a_key(tmp_path):
    p = edgefarm("serve", "--host", "0.0.0.0", "--devices", "local", "--out", str(tmp_path))
    assert p.returncode == 2 and "--api-key" in p.stderr


def test_the_key_is_required(server):
    stranger = openai.OpenAI(base_url=server.url, api_key="guess", max_retries=0, timeout=30)
    with pytest.raises(openai.AuthenticationError) as e:
        stranger.models.list()
    assert "--api-key" in e.value.body["message"]


def test_ctrl_c_drains_stops_the_runner_and_reports_like_a_run(server):
    assert server.stop() == 0, server.output()
    run_dir = only_run_dir(server.out)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["kind"] == "serve" and run["finished_at"] and run["devices"] == ["this-host"]
    rows = results(run_dir)
    assert sum(r["status"] == "ok" for r in rows) >= 5
    report = json.loads((run_dir / "report.json").read_text())
    assert report["devices"][0]["device"] == "this-host"
    again = edgefarm("report", str(run_dir), "--format", "json")
    assert again.returncode == 0, again.stderr
    pid_file = next((server.tmp / "work").rglob("runner.pid"))
    pid = int(pid_file.read_text().split()[0])
    assert not Path(f"/proc/{pid}").exists() or "entry.py" not in Path(f"/proc/{pid}/cmdline").read_text(
        errors="replace"
    )
