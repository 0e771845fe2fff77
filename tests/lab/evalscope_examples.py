"""The evalscope General-VQA / General-VMCQ / General-MCQ example files the labs run (this host and the
emulated phones, scripts/evalscope_against_serve.py), written in one place so they exercise the same
file shapes."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

# General-VQA rows, one per message shape evalscope accepts
VQA_IMAGE_URL = {  # OpenAI content parts with an image_url
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What colour is this?"},
                {"type": "image_url", "image_url": {"url": "images/blue.png"}},
            ],
        }
    ],
    "answer": "Blue",
}
VQA_IMAGE_TAG = {  # a system message, and an `<image 1>` tag filled from the `image_1` column
    "messages": [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Which colour is shown?<image 1>"},
    ],
    "image_1": "images/red.png",
    "answer": "Red",
}
VQA_TEXT = {"messages": [{"role": "user", "content": "Say hello."}], "answer": "Hello"}
VQA_ROWS = (VQA_IMAGE_URL, VQA_IMAGE_TAG, VQA_TEXT)

# General-VMCQ as JSONL: an image question with four options, a text question with two
VMCQ_ROWS = (
    {
        "question": "<image 1> What colour is this?",
        "options": ["Red", "Blue", "Green", "Black"],
        "image_1": "images/blue.png",
        "answer": "B",
    },
    {"question": "Which one is a fruit?", "options": ["Car", "Apple"], "answer": "B"},
)
# General-VMCQ as TSV: options as a JSON list, and a short row whose `image_1` field is empty
VMCQ_TSV = (
    "question\toptions\tanswer\timage_1\n"
    '<image 1> What colour is this?\t["Red", "Blue"]\tB\timages/blue.png\n'
    'Which one is a fruit?\t["Car", "Apple", "Rock"]\tB\t\n'
)


# General-MCQ as evalscope's own local example lays it out (custom_eval/text/mcq/example_val.csv and
# example_dev.csv: id,category,question,A,B,C,D,answer,explanation), with our own questions: a Chinese
# one, an English one whose quoted options hold commas, and one with two options (C and D empty, which
# evalscope sends as empty options).
MCQ_VAL_CSV = (
    "id,category,question,A,B,C,D,answer,explanation\n"
    "1,地理,中国的首都是哪座城市？,上海,北京,广州,深圳,B,北京是中国的首都。\n"
    '2,physics,"Roughly how fast is sound in air, at 20 °C?","343 m/s","299,792 km/s","1,225 km/h",60 m/s,A,'
    '"343 m/s, in dry air."\n'
    "3,logic,Is this statement true?,yes,no,,,a,\n"
)
MCQ_DEV_CSV = (  # evalscope's few-shot split (its default is 0-shot): present for the shape, never sent
    "id,question,A,B,C,D,answer\n1,一年有几个季节？,两个,三个,四个,五个,C\n"
)


def write_mcq_examples(folder: Path) -> Path:
    """Write example_val.csv and example_dev.csv (General-MCQ) into `folder`; return the val file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "example_dev.csv").write_text(MCQ_DEV_CSV, encoding="utf-8")
    val = folder / "example_val.csv"
    val.write_text(MCQ_VAL_CSV, encoding="utf-8")
    return val


def _jsonl(rows) -> str:
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def write_examples(
    folder: Path, *, vqa_rows: tuple[dict, ...] = VQA_ROWS, vmcq: str = "jsonl"
) -> tuple[Path, Path]:
    """Write images/blue.png, images/red.png, a General-VQA JSONL of `vqa_rows` and a General-VMCQ
    file (`vmcq` "jsonl": VMCQ_ROWS, "tsv": VMCQ_TSV) into `folder`; return (vqa, vmcq) paths."""
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (40, 40), (0, 0, 255)).save(folder / "images" / "blue.png")
    Image.new("RGB", (40, 40), (255, 0, 0)).save(folder / "images" / "red.png")
    vqa = folder / "example_openai.jsonl"
    vqa.write_text(_jsonl(vqa_rows))
    mcq = folder / f"example.{vmcq}"
    mcq.write_text({"jsonl": _jsonl(VMCQ_ROWS), "tsv": VMCQ_TSV}[vmcq])
    return vqa, mcq
