"""A prompt far larger than the model could take is refused in the plan: its job line carries the reason
and no turns or media, so the runtime never sees it (issue 10: a 10 MB prompt reached 2.1 GB RSS)."""

from __future__ import annotations

import json
from pathlib import Path

from android_runner.contract import JobItem
from orchestrator.datasets.types import Part, Sample, Turn
from orchestrator.jobs import JobOptions, write_bundle
from orchestrator.run.selection import PROMPT_BYTES_MAX, prompt_bytes, prompt_limit_bytes, refused_samples


def sample(sid: str, text: str, image: Path | None = None, system: str | None = None) -> Sample:
    parts = (Part("image", path=image),) if image else ()
    return Sample(
        id=sid,
        modality="text",
        task="qa",
        turns=(Turn(parts + (Part("text", text=text),)),),
        reference="r",
        references=("r",),
        system=system,
    )


def test_the_limit_follows_the_context_and_is_capped():
    assert prompt_limit_bytes(2048) == 32 * 2048
    assert prompt_limit_bytes(10**9) == PROMPT_BYTES_MAX
    assert prompt_limit_bytes(None) == PROMPT_BYTES_MAX


def test_prompt_bytes_counts_every_text_the_sample_sends_in_utf8():
    s = sample("a", "é" * 10, system="sys")
    assert prompt_bytes(s) == 20 + 3


def test_only_samples_over_the_limit_are_refused_with_a_reason():
    small, edge, big = sample("s", "x" * 100), sample("e", "x" * 65536), sample("b", "word " * 2_000_000)
    refused = refused_samples([small, edge, big], 2048)
    assert list(refused) == ["b"]
    assert "10000000 bytes" in refused["b"] and "2048 tokens" in refused["b"] and "shorten" in refused["b"]
    assert list(refused_samples([big], None)) == ["b"]  # context unknown: the hard cap


def test_a_refused_sample_goes_out_with_its_reason_and_no_turns_or_media(tmp_path: Path):
    img = tmp_path / "a.png"
    img.write_bytes(b"\x89PNG")
    samples = [sample("ok", "hi", image=img), sample("big", "x" * 200_000, image=img)]
    opts = JobOptions(refused=refused_samples(samples, 2048))
    items = write_bundle(samples, tmp_path / "job", opts)
    assert items[0].refused == "" and items[0].turns
    assert items[1].turns == () and items[1].refused.startswith("prompt refused before the runtime")
    lines = (tmp_path / "job" / "job.jsonl").read_text().splitlines()
    assert [JobItem.from_json(x) for x in lines] == items
    assert len(lines[1]) < 2000 and "xxxx" not in lines[1]  # the text itself never reaches the device
    assert [p.name for p in (tmp_path / "job" / "media").iterdir()] == ["0000-1.png"]
    assert json.loads(lines[1])["refused"] == items[1].refused
