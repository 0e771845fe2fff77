"""General-VMCQ rows from the spec (JSONL, TSV with short rows) and the multiple-choice prompt."""

from __future__ import annotations

from pathlib import Path

from conftest import b64, png_bytes, write_jsonl

from orchestrator.datasets.evalscope_vmcq import load, prompt_text
from orchestrator.datasets.resolve import pick_format

IMG = "custom_eval/multimodal/images/{}.jpg"
SPEC_JSONL = [
    {"question": "Which image shows a dog?", "options": ["<image 1>", "<image 2>", "<image 3>", "<image 4>"],
     "image_1": IMG.format("dog"), "image_2": IMG.format("AMNH"), "image_3": IMG.format("tesla"),
     "image_4": IMG.format("tokyo"), "answer": "A"},
    {"question": "<image 1> What building is this?", "options": ["School", "Hospital", "Park", "Museum"],
     "image_1": IMG.format("AMNH"), "answer": "D"},
    {"question": "<video 1> What type of media is provided in this sample?", "options": ["Image", "Audio", "Video", "Text"],
     "video_1": "custom_eval/multimodal/videos/sample.mp4", "answer": "C"},
]  # fmt: skip
HEAD = ("Answer the following multiple choice question. The last line of your response should be of the "
        "following format: 'ANSWER: [LETTER]' (without quotes) where [LETTER] is one of A,B,C,D. "
        "Think step by step before answering.\n\n")  # fmt: skip


def mcq(ws: Path, name: str = "example"):
    return load(ws / "custom_eval/multimodal/mcq", name, cache_dir=ws / "cache", cwd=ws)


def test_prompt_template_exact() -> None:
    assert prompt_text("Q?", ["x", "y"]) == (
        "Answer the following multiple choice question. The last line of your response should be of the "
        "following format: 'ANSWER: [LETTER]' (without quotes) where [LETTER] is one of A,B. "
        "Think step by step before answering.\n\nQ?\n\nA) x\nB) y"
    )


def test_vmcq_jsonl_spec_rows(ws: Path) -> None:
    write_jsonl(ws / "custom_eval/multimodal/mcq/example.jsonl", SPEC_JSONL)
    ds = mcq(ws)
    assert ds.problems == ()
    a, b, c = ds.samples
    parts = a.turns[0].parts
    assert [p.kind for p in parts] == ["text", "image", "text", "image", "text", "image", "text", "image"]
    assert parts[0].text == HEAD + "Which image shows a dog?\n\nA) "
    assert [p.text for p in parts[2::2]] == ["\nB) ", "\nC) ", "\nD) "]
    assert [p.path.name for p in parts[1::2]] == ["dog.jpg", "AMNH.jpg", "tesla.jpg", "tokyo.jpg"]
    assert (a.reference, a.choices, a.format, a.task) == (
        "A",
        tuple(SPEC_JSONL[0]["options"]),
        "general_vmcq",
        "multiple_choice",
    )
    assert [p.kind for p in b.turns[0].parts] == ["text", "image", "text"]
    assert b.turns[0].parts[2].text == " What building is this?\n\nA) School\nB) Hospital\nC) Park\nD) Museum"
    assert (c.modality, c.reference) == ("video", "C")  # the runner reports video samples `unsupported`


def test_vmcq_tsv_short_rows(ws: Path) -> None:
    tsv = (
        "question\toptions\tanswer\timage_1\timage_2\timage_3\timage_4\n"
        'Which image shows a dog?\t["<image 1>", "<image 2>", "<image 3>", "<image 4>"]\tA\t'
        + "\t".join(IMG.format(n) for n in ("dog", "AMNH", "tesla", "tokyo")) + "\n"
        '<image 1> What building is this?\t["School", "Hospital", "Park", "Museum"]\tD\t' + IMG.format("AMNH") + "\t\t\n"
        "Plain?\t['yes', 'no']\tB\n"  # a Python-literal list, and a row shorter than the header
    )  # fmt: skip
    (ws / "custom_eval/multimodal/mcq/example_val.tsv").write_text(tsv)
    ds = mcq(ws)
    assert ds.problems == ()
    assert [len(s.media) for s in ds.samples] == [4, 1, 0]
    assert ds.samples[2].choices == ("yes", "no") and ds.samples[2].modality == "text"
    assert ds.samples[2].turns[0].text.endswith("Plain?\n\nA) yes\nB) no")
    assert pick_format(ws / "custom_eval/multimodal/mcq/example_val.tsv").name == "general_vmcq"


def test_vmcq_validates_every_media_column_and_answer(ws: Path) -> None:
    rows = [
        {"question": "Q", "options": ["a", "b"], "answer": "A", "image_7": "https://x/y.jpg"},  # unused, malformed
        {"question": "Q", "options": ["a", "b"], "answer": "C"},
        {"question": "Q", "options": '["a"]', "answer": "A"},
        {"question": "Q", "options": ["a", "b"], "answer": "b", "audio_1": IMG.format("dog"), "audio_1_format": "ogg"},
        {"question": "Q <image 1>", "options": ["a", "b"], "answer": "b", "images": ["data:image/png;base64," + b64(png_bytes())]},
    ]  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/mcq/v.jsonl", rows)
    ds = mcq(ws, "v")
    msgs = {p.where.rsplit(":", 1)[1]: (p.field, p.message) for p in ds.problems}
    assert msgs["1"][0] == "image_7" and "URL" in msgs["1"][1]
    assert msgs["2"][0] == "answer" and msgs["3"][0] == "options"
    assert msgs["4"][0] == "audio_1_format"
    (ok,) = ds.samples
    assert ok.reference == "B" and ok.id == "4" and ok.media[0].path.suffix == ".png"


def test_vmcq_dont_mix_ignores_list_when_any_indexed(ws: Path) -> None:
    row = {"question": "<image 1> <image 2>", "options": ["a", "b"], "answer": "A",
           "image_3": IMG.format("dog"), "images": [IMG.format("tokyo"), "missing.jpg"]}  # fmt: skip
    write_jsonl(ws / "custom_eval/multimodal/mcq/m.jsonl", [row])
    (s,) = mcq(ws, "m").samples  # the list (with its missing file) is ignored: image_3 is non-empty
    assert s.media == ()
