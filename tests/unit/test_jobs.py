import threading
from dataclasses import replace
from pathlib import Path

import pytest

from android_runner.contract import FidelityAsk, JobItem
from orchestrator.datasets.types import Part, Sample, Turn
from orchestrator.interrupt import Interrupted
from orchestrator.jobs import JobOptions, job_items, write_bundle


def _sample(tmp: Path, sid: str, media_name: str, max_tokens=None) -> Sample:
    src = tmp / "ds" / media_name
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_bytes(b"\x89PNG fake")
    return Sample(
        id=sid,
        modality="image",
        task="vqa",
        reference="r",
        references=("r",),
        turns=(Turn((Part("image", path=src), Part("text", text="What; rm -rf / ?"))),),
        max_output_tokens=max_tokens,
    )


def test_bundle_uses_neutral_media_names_and_keeps_prompts_as_data(tmp_path: Path):
    s1 = _sample(tmp_path, "IMG-001", "$(reboot) evil name.png", max_tokens=9)
    s2 = _sample(tmp_path, "IMG-002", "plain.png")
    items = write_bundle([s1, s2], tmp_path / "job", JobOptions(max_output_tokens=64))
    media = sorted(p.name for p in (tmp_path / "job" / "media").iterdir())
    assert media == ["0000-1.png", "0001-1.png"]
    assert items[0].turns[0][0].path == "media/0000-1.png"
    assert items[0].turns[0][1].text == "What; rm -rf / ?"
    assert items[0].max_output_tokens == 9 and items[1].max_output_tokens == 64
    lines = (tmp_path / "job" / "job.jsonl").read_text().splitlines()
    assert len(lines) == 2 and "evil name" not in lines[0]


def test_override_caps_every_row(tmp_path: Path):
    s1 = _sample(tmp_path, "IMG-001", "a.png", max_tokens=300)
    items = write_bundle([s1], tmp_path / "job", JobOptions(max_output_tokens=16, override=True))
    assert items[0].max_output_tokens == 16


def test_job_lines_are_the_json_of_every_field_as_asdict_gives_them():
    import json
    from dataclasses import asdict

    from orchestrator.datasets import BUNDLED_DATASET, load_dataset

    items = job_items(
        load_dataset(str(BUNDLED_DATASET)).samples, JobOptions(max_output_tokens=32, override=True)
    )
    assert {it.id for it in items if it.tools} and {it.id for it in items if it.constraint}
    for it in items:
        assert json.loads(it.to_json()) == json.loads(json.dumps(asdict(it)))
        assert JobItem.from_json(it.to_json()) == it


def test_fidelity_asks_each_text_sample_to_score_its_reference_and_says_why_not_the_others():
    import json
    from dataclasses import asdict

    from orchestrator.datasets import BUNDLED_DATASET, load_dataset

    samples = load_dataset(str(BUNDLED_DATASET)).samples
    items = {it.id: it for it in job_items(samples, JobOptions(fidelity=True))}
    by_id = {s.id: s for s in samples}
    text = next(s for s in samples if s.modality == "text")
    ask = items[text.id].fidelity
    assert ask.target == text.reference and ask.prefill == (text.turns[0].text,) and ask.skip == ""
    system = next(s for s in samples if s.system and not s.media and len(s.turns) == 1)
    assert items[system.id].fidelity.prefill == (system.system, system.turns[0].text)
    media = next(i for i, s in by_id.items() if s.media)
    several = next(i for i, s in by_id.items() if len(s.turns) > 1 and not s.media)
    assert items[media].fidelity.target == "" and "media" in items[media].fidelity.skip
    assert items[several].fidelity.target == "" and "several turns" in items[several].fidelity.skip
    empty = replace(text, id="EMPTY", turns=(Turn((Part("text", text=""),)),))  # no prefill: from the start
    (item,) = job_items([empty], JobOptions(fidelity=True))
    assert item.fidelity == FidelityAsk(target=text.reference, prefill=())
    for it in items.values():
        assert json.loads(it.to_json()) == json.loads(json.dumps(asdict(it)))
        assert JobItem.from_json(it.to_json()) == it
    assert all(it.fidelity is None for it in job_items(samples[:3], JobOptions()))


class _StopAfter(threading.Event):
    """A stop that a Ctrl-C sets once `calls` checks have passed (the items made: one check each)."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls = calls

    def is_set(self) -> bool:
        self.calls -= 1
        if self.calls < 0:
            self.set()
        return super().is_set()


def test_a_stop_after_the_items_are_made_ends_the_bundle_before_its_lines_are_written(tmp_path: Path):
    samples = [_sample(tmp_path, f"IMG-{n:03d}", f"{n}.png") for n in range(3)]
    stop = _StopAfter(len(samples))
    with pytest.raises(Interrupted):
        write_bundle(samples, tmp_path / "job", JobOptions(max_output_tokens=16), stop)
    assert stop.calls < 0 and not (tmp_path / "job" / "job.jsonl").exists()
    done = write_bundle(samples, tmp_path / "job", JobOptions(max_output_tokens=16), _StopAfter(10**6))
    assert len((tmp_path / "job" / "job.jsonl").read_text().splitlines()) == len(done) == 3
