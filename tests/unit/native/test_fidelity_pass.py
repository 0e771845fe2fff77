"""--fidelity in the native runner (android_runner/native/fidelity.c) under ASan/UBSan, against the fake
runtime (tests/unit/native/fake_litert_lm.c: a token is a word, scores a function of the word and the
prompt): the job file the host renders, the row's record, and the host reading it back."""

from __future__ import annotations

from test_native_runner import fatal_of, run  # this folder is on sys.path (no __init__.py: rootdir imports)

from android_runner.contract import FidelityAsk, JobItem, JobPart
from android_runner.conversation import job_file_text, render
from orchestrator.runners.android_native import fidelity_of


def _fnv(word: str) -> int:
    h = 2166136261
    for b in word.encode():
        h = ((h ^ b) * 16777619) % 2**32
    return h


def _expected_logp(target: str, prefill: list[str]) -> list[float]:
    import struct

    p = 0
    for chunk in prefill:
        p = (p * 31 + _fnv(chunk)) % 2**32
    f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
    return [f32(f32(-(1.0 + f32((_fnv(w) % 997) / 100.0))) - f32((p % 7) / 10.0)) for w in target.split()]


def _job(*asks: FidelityAsk | None) -> bytes:
    items = [
        JobItem(id=f"s{n}", turns=((JobPart("text", text=f"question {n}"),),), fidelity=a)
        for n, a in enumerate(asks)
    ]
    return job_file_text([(n, render(it, "/job")) for n, it in enumerate(items, 1)])


def test_the_reference_is_scored_from_the_prompt_and_the_answer_tokenized(native_build, tmp_path):
    ask = FidelityAsk(target="the sky is blue", prefill=("be brief", "What colour is the sky?"))
    rc, lines, rows, _ = run(
        native_build, tmp_path, _job(ask, FidelityAsk(skip="the prompt has media"), None)
    )
    assert rc == 0, lines
    scored, skipped, off = (r.get("fidelity") for r in rows)
    assert scored["logp"] == _expected_logp("the sky is blue", ["be brief", "What colour is the sky?"])
    assert scored["target_tokens"] == 4 and scored["unscored"] == "" and scored["untokenized"] == ""
    assert (
        scored["answer_ids"] == [_fnv("fake") % 50000, _fnv("answer") % 50000]
        and scored["answer_tokens"] == 2
    )
    assert scored["score_ms"] >= 0
    assert (
        skipped["unscored"] == "the prompt has media"
        and "logp" not in skipped
        and skipped["answer_tokens"] == 2
    )
    assert off is None  # not asked: no record, no pass
    f = fidelity_of(scored)
    assert f.logp == tuple(scored["logp"]) and f.answer_ids == tuple(scored["answer_ids"])
    total = 0.0
    for x in scored["logp"]:  # in order, in double: the Python runner's sum
        total += x
    assert scored["logp_sum"] == f.logp_sum == total


def test_the_same_target_from_another_prompt_scores_otherwise(native_build, tmp_path):
    a = FidelityAsk(target="blue", prefill=("one prompt",))
    b = FidelityAsk(target="blue", prefill=("a third prompt",))
    rc, _, rows, _ = run(native_build, tmp_path, _job(a, b))
    assert rc == 0 and rows[0]["fidelity"]["logp"] != rows[1]["fidelity"]["logp"]


def test_a_scoring_failure_is_the_records_reason_and_the_answer_is_kept(native_build, tmp_path):
    rc, _, rows, _ = run(native_build, tmp_path, _job(FidelityAsk(target="x @noscore", prefill=("p",))))
    assert rc == 0 and rows[0]["status"] == "ok"
    f = rows[0]["fidelity"]
    assert f["unscored"] == "run_text_scoring failed: INTERNAL: fake: scoring failed" and "logp" not in f
    assert f["answer_tokens"] == 2


def test_fidelity_records_without_k_are_refused(native_build, tmp_path):
    bad = b"EFJOB 1\nS 1\nM 2\n{}\nF 1\np\nR 1\nx\nE\n"
    rc, lines, _, _ = run(native_build, tmp_path, bad)
    assert rc == 2 and "without K" in fatal_of(lines)["error"]


def test_a_target_without_a_prefill_is_scored_from_the_sessions_start(native_build, tmp_path):
    """An empty prompt (lm-eval's rolling log-likelihood): no prefill call, which the runtime refuses empty;
    a target over the row's 256 kept scores still has the sum of all of them."""
    words = " ".join(f"w{i}" for i in range(300))
    rc, _, rows, _ = run(
        native_build, tmp_path, _job(FidelityAsk(target="blue sky", prefill=()), FidelityAsk(target=words))
    )
    short, long = (r["fidelity"] for r in rows)
    assert rc == 0 and short["unscored"] == "" and len(short["logp"]) == short["target_tokens"] == 2, short
    assert long["target_tokens"] == 300 and len(long["logp"]) == 256
    total = 0.0
    for x in _expected_logp(words, []):
        total += x
    assert long["logp"] == _expected_logp(words, [])[:256] and long["logp_sum"] == total


def test_the_host_bounds_a_record_it_reads():
    big = {
        "logp": [-1.0] * 5000,
        "answer_ids": list(range(5000)),
        "answer_tokens": 5000,
        "target_tokens": 5000,
    }
    f = fidelity_of(big)
    assert len(f.logp) == 256 and len(f.answer_ids) == 256 and f.target_tokens == 5000
    assert fidelity_of({"logp": "not a list"}).unscored == "the runner's fidelity record is malformed"
    assert fidelity_of(None) is None
