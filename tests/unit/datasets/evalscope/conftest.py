"""Spec example media (custom_eval/multimodal/...) generated into tmp_path: PIL images, a tiny WAV."""

from __future__ import annotations

import base64
import io
import json
import wave
from pathlib import Path

import pytest
from PIL import Image

IMAGES = {"dog": (200, 150, 100), "AMNH": (90, 90, 90), "tokyo": (20, 40, 200), "tesla": (220, 0, 0),
          "running": (0, 160, 60), "beach": (240, 220, 130), "xray": (10, 10, 10)}  # fmt: skip


def png_bytes(color=(1, 2, 3)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buf, format="PNG")
    return buf.getvalue()


def wav_bytes() -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 80)
    return buf.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace: cwd-like folder holding custom_eval/multimodal/{images,audio,videos} and a vqa/ mcq/ folder."""
    media = tmp_path / "custom_eval" / "multimodal"
    (media / "images").mkdir(parents=True)
    (media / "audio").mkdir()
    (media / "videos").mkdir()
    for name, color in IMAGES.items():
        Image.new("RGB", (16, 12), color).save(media / "images" / f"{name}.jpg", format="JPEG")
    (media / "audio" / "sample.wav").write_bytes(wav_bytes())
    (media / "videos" / "sample.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 16)
    (media / "videos" / "wave.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 16)
    (media / "vqa").mkdir()
    (media / "mcq").mkdir()
    return tmp_path
