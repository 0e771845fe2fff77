"""General-VQA rows from the spec, in every input style, loaded into Samples."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import b64, png_bytes, wav_bytes, write_jsonl

from orchestrator.datasets import FORMATS
from orchestrator.datasets.evalscope_vqa import load
from orchestrator.datasets.resolve import pick_format

IMG = "custom_eval/multimodal/images/{}.jpg"
OPENAI_ROWS = [
    {"messages": [{"role": "user", "content": [{"type": "text", "text": "What animal is this?"},
                                               {"type": "image_url", "image_url": {"url": IMG.format("dog")}}]}],
     "answer": "Dog"},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": "What building is this?"},
                                               {"type": "image_url", "image_url": {"url": IMG.format("AMNH")}}]}],
     "answer": "Museum"},
]  # fmt: skip


def vqa(ws: Path, name: str = "example_openai", **kw):
    folder = ws / "custom_eval" / "multimodal" / "vqa"
    return load(folder, name, cache_dir=ws / "cache", cwd=ws, **kw)


def kinds(sample) -> list[str]:
    return [p.kind for t in sample.turns for p in t.parts]


def test_openai_jsonl_spec_rows(ws: Path) -> None:
    write_jsonl(ws / "custom_eval/multimodal/vqa/example_openai.jsonl", OPENAI_ROWS)
    ds = vqa(ws)
    assert ds.problems == ()
    assert [s.id for s in ds.samples] == ["0", "1"]
    s = ds.samples[0]
    assert (s.format, s.subset, s.modality, s.task, s.reference) == (
        "general_vqa",
        "example_openai",
        "image",
        "vqa",
        "Dog",
    )
    (turn,) = s.turns
    assert turn.text == "What animal is this?"
    assert turn.parts[1].path == (ws / IMG.format("dog")).resolve()
    assert ds.samples[1].turns[0].parts[1].path.name == "AMNH.jpg"


def test_openai_tsv_cells_hold_json(ws: Path) -> None:
    lines = ["messages\tanswer"] + [f"{json.dumps(r['messages'])}\t{r['answer']}" for r in OPENAI_ROWS]
    (ws / "custom_eval/multimodal/vqa/example_openai.tsv").write_text("\n".join(lines) + "\n")
    ds = vqa(ws)
    assert ds.problems == ()
    assert [s.reference for s in ds.samples] == ["Dog", "Museum"]
    assert kinds(ds.samples[1]) == ["text", "image"]
    assert ds.files[0].suffix == ".tsv"


def test_jsonl_wins_over_tsv_and_split_file_first(ws: Path) -> None:
    folder = ws / "custom_eval/multimodal/vqa"
    write_jsonl(folder / "example_openai.jsonl", OPENAI_ROWS[:1])
    (folder / "example_openai.tsv").write_text("messages\tanswer\n")
    assert vqa(ws).files[0].name == "example_openai.jsonl"
    write_jsonl(folder / "example_openai_test.jsonl", OPENAI_ROWS)
    assert vqa(ws).files[0].name == "example_openai_test.jsonl"


def test_placeholder_jsonl_spec_rows(ws: Path) -> None:
    names = ["dog", "AMNH", "tokyo", "tesla", "running"]
    rows = [{"messages": [{"role": "user", "content": f"Question {i}?<image 1>"}], "image_1": IMG.format(n), "answer": n}
            for i, n in enumerate(names)]  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/vqa/example_placeholder.jsonl", rows)
    ds = vqa(ws, "example_placeholder")
    assert ds.problems == () and len(ds.samples) == 5
    for s, n in zip(ds.samples, names):
        (turn,) = s.turns
        assert [p.kind for p in turn.parts] == ["text", "image"]
        assert turn.parts[0].text.startswith("Question") and turn.parts[1].path.name == f"{n}.jpg"


def test_mixed_media_placeholders_in_place(ws: Path) -> None:
    row = {"messages": [{"role": "user", "content": "<image 1> Watch <video 1> and describe both."}],
           "answer": "A sunny beach and a wave video.",
           "image_1": IMG.format("beach"), "video_1": "custom_eval/multimodal/videos/wave.mp4"}  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/vqa/mixed.jsonl", [row])
    (s,) = vqa(ws, "mixed").samples
    parts = s.turns[0].parts
    assert [p.kind for p in parts] == ["image", "text", "video", "text"]
    assert parts[1].text == " Watch " and parts[3].text == " and describe both."
    assert s.modality == "combination"


def test_system_prompt_multi_image_and_multi_turn(ws: Path) -> None:
    row = {"messages": [
        {"role": "system", "content": "You are a medical AI assistant."},
        {"role": "user", "content": [{"type": "text", "text": "Compare these two images:"},
                                     {"type": "image_url", "image_url": {"url": IMG.format("dog"), "detail": "high"}},
                                     {"type": "text", "text": "and"},
                                     {"type": "image_url", "image_url": {"url": IMG.format("xray")}},
                                     {"type": "text", "text": "What are the differences?"}]},
        {"role": "assistant", "content": "One is a dog."},
        {"role": "user", "content": "And the second?"}], "answer": "The main differences are..."}  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/vqa/multi.jsonl", [row])
    (s,) = vqa(ws, "multi").samples
    assert s.system == "You are a medical AI assistant."
    assert len(s.turns) == 2  # user turns only, in order; the assistant turn is not sent
    assert kinds(s)[:5] == ["text", "image", "text", "image", "text"]
    assert s.turns[1].text == "And the second?"


def test_base64_image_and_audio(ws: Path) -> None:
    rows = [
        {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "What's in this image?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(png_bytes())}}]}],
         "answer": "A beautiful landscape"},
        {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "What is being said in this audio?"},
            {"type": "input_audio", "input_audio": {"data": b64(wav_bytes()), "format": "wav"}}]}],
         "answer": "Hello, world."},
        {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "Describe the content of this audio clip."},
            {"type": "input_audio", "input_audio": {"data": "custom_eval/multimodal/audio/sample.wav", "format": "wav"}}]}],
         "answer": "A piano music performance."},
    ]  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/vqa/b64.jsonl", rows)
    ds = vqa(ws, "b64")
    assert ds.problems == ()
    img, audio, local_audio = (s.turns[0].parts[1].path for s in ds.samples)
    assert img.parent == (ws / "cache").resolve() and img.suffix == ".png" and img.read_bytes() == png_bytes()
    assert audio.suffix == ".wav" and audio.read_bytes() == wav_bytes()
    assert local_audio.name == "sample.wav"
    assert [s.modality for s in ds.samples] == ["image", "audio", "audio"]
    assert vqa(ws, "b64").samples[0].turns[0].parts[1].path == img  # content-addressed: same name again


def test_structured_placeholder_text_left_untouched(ws: Path) -> None:
    row = {
        "answer": "Dog",
        "image_1": IMG.format("dog"),
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "<image 1> What animal is this?"}]}
        ],
    }
    write_jsonl(ws / "custom_eval/multimodal/vqa/structured.jsonl", [row])
    (s,) = vqa(ws, "structured").samples
    assert (
        kinds(s) == ["text"] and s.turns[0].text == "<image 1> What animal is this?" and s.modality == "text"
    )


def test_missing_media_dropped_with_warning_and_empty_message_keeps_text(ws: Path, caplog) -> None:
    rows = [{"messages": [{"role": "user", "content": "Look <image 1> and <image 2>"}], "image_1": IMG.format("dog")},
            {"messages": [{"role": "user", "content": "<image 1>"}]}]  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/vqa/missing.jsonl", rows)
    with caplog.at_level(logging.WARNING, logger="edgefarm.datasets.evalscope"):
        ds = vqa(ws, "missing")
    assert ds.problems == ()
    assert (
        kinds(ds.samples[0]) == ["text", "image", "text"] and ds.samples[0].turns[0].parts[2].text == " and "
    )
    assert kinds(ds.samples[1]) == ["text"] and ds.samples[1].turns[0].text == "<image 1>"
    assert "<image 2>" in caplog.text and "missing.jsonl:1" in caplog.text
    assert ds.samples[0].reference == "" and ds.samples[0].references == ()


def test_k_over_100_ignored_but_list_uncapped(ws: Path) -> None:
    rows = [
        {"messages": [{"role": "user", "content": "A<image 101>B"}], "image_101": IMG.format("dog")},
        {"messages": [{"role": "user", "content": "A<image 101>"}], "images": [IMG.format("dog")] * 101},
    ]
    write_jsonl(ws / "custom_eval/multimodal/vqa/big.jsonl", rows)
    a, b = vqa(ws, "big").samples
    assert kinds(a) == ["text", "text"] and a.turns[0].text == "AB"
    assert kinds(b) == ["text", "image"]


def test_dont_mix_vqa_ignores_list_when_referenced_indexed_present(ws: Path) -> None:
    rows = [
        # a referenced indexed column is non-empty: the list is ignored (its broken entry never read)
        {"messages": [{"role": "user", "content": "<image 1><image 2>"}], "image_1": IMG.format("dog"),
         "images": ["nope.jpg", IMG.format("tokyo")]},
        # only an UNreferenced indexed column: the list is used
        {"messages": [{"role": "user", "content": "<image 1><image 2>"}], "image_5": IMG.format("dog"),
         "images": [IMG.format("tesla"), IMG.format("tokyo")]},
        # unreferenced broken media columns are ignored by General-VQA
        {"messages": [{"role": "user", "content": "plain"}], "image_3": "https://example.com/x.jpg", "audios": "bad"},
    ]  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/vqa/mix.jsonl", rows)
    ds = vqa(ws, "mix")
    assert ds.problems == ()
    a, b, c = ds.samples
    assert [p.path.name for p in a.media] == ["dog.jpg"]
    assert [p.path.name for p in b.media] == ["tesla.jpg", "tokyo.jpg"]
    assert c.media == ()


@pytest.mark.parametrize(
    "value, says",
    [("../../../outside.jpg", "outside"), ("/etc/passwd", "outside"), ("https://example.com/dog.jpg", "URL"),
     ("custom_eval/multimodal/images/cat.jpg", "not found"), ("data:image/png;base64,@@@", "not base64"),
     ("data:audio/wav;base64," + b64(wav_bytes()), "image field")],
)  # fmt: skip
def test_bad_media_is_a_problem_naming_the_row(ws: Path, value: str, says: str) -> None:
    (ws.parent / "outside.jpg").write_bytes(png_bytes())
    row = {
        "id": "q7",
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": value}}]}],
    }
    write_jsonl(ws / "custom_eval/multimodal/vqa/bad.jsonl", [OPENAI_ROWS[0], row])
    ds = vqa(ws, "bad")
    assert [s.id for s in ds.samples] == ["0"]
    (p,) = ds.problems
    assert says in p.message and p.where.endswith("bad.jsonl:2") and p.test_id == "q7"
    assert p.field == "messages[0].content[0].image_url.url"


def test_symlink_escape_refused(ws: Path) -> None:
    (ws.parent / "secret.jpg").write_bytes(png_bytes())
    (ws / "custom_eval/multimodal/vqa/link.jpg").symlink_to(ws.parent / "secret.jpg")
    row = {"messages": [{"role": "user", "content": "x<image 1>"}], "image_1": "link.jpg"}
    write_jsonl(ws / "custom_eval/multimodal/vqa/sym.jsonl", [row])
    (p,) = vqa(ws, "sym").problems
    assert "outside" in p.message and p.field == "image_1"


def test_bad_rows_ids_and_detection(ws: Path) -> None:
    folder = ws / "custom_eval/multimodal/vqa"
    (folder / "rows.jsonl").write_text(
        json.dumps({"index": 12, **OPENAI_ROWS[0]})
        + "\n\n{broken\n"
        + json.dumps({"messages": [{"role": "assistant", "content": "hi"}]})
        + "\n"
        + json.dumps(OPENAI_ROWS[1])
        + "\n"
    )
    ds = vqa(ws, "rows")
    assert [s.id for s in ds.samples] == ["12", "3"]  # index field, else 0-based row number
    assert ["not valid JSON" in p.message or "no user message" in p.message for p in ds.problems] == [
        True,
        True,
    ]
    assert pick_format(folder / "rows.jsonl").name == "general_vqa"
    assert FORMATS.get("general_vqa").detect(folder) and not FORMATS.get("general_vmcq").detect(
        folder / "rows.jsonl"
    )


def test_folder_without_subset_loads_every_subset_with_prefixed_ids(ws: Path) -> None:
    folder = ws / "custom_eval/multimodal/vqa"
    write_jsonl(folder / "a.jsonl", OPENAI_ROWS)
    write_jsonl(folder / "b_test.jsonl", OPENAI_ROWS[:1])
    write_jsonl(folder / "b_train.jsonl", OPENAI_ROWS[:1])  # another split: not read
    write_jsonl(
        folder / "mcq.jsonl", [{"question": "q", "options": ["a", "b"], "answer": "A"}]
    )  # other format
    ds = vqa(ws, None)
    assert ds.problems == ()
    assert [(s.subset, s.id) for s in ds.samples] == [("a", "a/0"), ("a", "a/1"), ("b", "b/0")]


def test_unknown_subset_lists_the_ones_there(ws: Path) -> None:
    write_jsonl(ws / "custom_eval/multimodal/vqa/example_openai.jsonl", OPENAI_ROWS)
    from orchestrator.errors import DatasetError

    with pytest.raises(DatasetError, match="example_openai"):
        vqa(ws, "nope")
