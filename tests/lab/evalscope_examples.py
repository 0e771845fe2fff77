"""The evalscope General-VQA / General-VMCQ example files both labs run (this host and the emulated
phones), written in one place so the two suites exercise the same file shapes."""

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
