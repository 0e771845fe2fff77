"""Measure the built models on the litert_lm runtime: load time, turn times, peak RSS.

Needs only litert-lm-api (and pillow); the figures in docs/tiny-model.md come from here.
"""

from __future__ import annotations

import math
import statistics
import struct
import tempfile
import time
import wave
from pathlib import Path


def _vm_hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _media(d: Path) -> tuple[Path, Path]:
    from PIL import Image

    img = d / "noise.png"
    Image.effect_noise((64, 48), 80).convert("RGB").save(img)
    wav = d / "tone.wav"
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"".join(struct.pack("<h", int(9000 * math.sin(i / 5))) for i in range(16000)))
    return img, wav


def measure(models: Path, repeats: int = 20) -> dict[str, float]:
    """Median wall ms per fresh-conversation turn (greedy) for a text, an image and an audio prompt."""
    import litert_lm

    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        img, wav = _media(Path(tmp))
        for name in ("tiny-text", "tiny-mm"):
            kw = {}
            if name == "tiny-mm":
                kw = {"vision_backend": litert_lm.Backend.CPU(), "audio_backend": litert_lm.Backend.CPU()}
            t0 = time.perf_counter()
            engine = litert_lm.Engine(str(models / f"{name}.litertlm"), cache_dir=tmp, **kw)
            figures[f"{name} load ms"] = (time.perf_counter() - t0) * 1000
            prompts = {"text": [litert_lm.Content.Text("edgefarm ping")]}
            if name == "tiny-mm":
                prompts["image"] = [
                    litert_lm.Content.ImageFile(str(img)),
                    litert_lm.Content.Text("Describe the picture."),
                ]
                prompts["audio"] = [
                    litert_lm.Content.AudioFile(str(wav)),
                    litert_lm.Content.Text("What is in the clip?"),
                ]
            for kind, parts in prompts.items():
                times = []
                for _ in range(repeats):
                    conv = engine.create_conversation(sampler_config=litert_lm.SamplerConfig(top_k=1))
                    t0 = time.perf_counter()
                    conv.send_message(litert_lm.Message.user(litert_lm.Contents.of(*parts)))
                    times.append((time.perf_counter() - t0) * 1000)
                figures[f"{name} {kind} turn ms (median)"] = statistics.median(times)
            engine.close()
    figures["peak RSS MB (VmHWM, both models)"] = _vm_hwm_mb()
    return figures


def verify(model: Path, rows: list[dict], *, multimodal: bool) -> list[str]:
    """Greedy answers of a packed model on the real runtime; returns the mismatches.

    Int8 weight quantization could flip a near-tie that torch got right, so the build checks here.
    A text-only model is asked the text pairs only (its template drops media).
    """
    import litert_lm

    wrong: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        img, wav = _media(Path(tmp))
        cpu = litert_lm.Backend.CPU()
        media_kw = {"vision_backend": cpu, "audio_backend": cpu} if multimodal else {}
        with litert_lm.Engine(str(model), cache_dir=tmp, **media_kw) as engine:
            for row in rows:
                if row["media"] and not multimodal:
                    continue
                conv = engine.create_conversation(sampler_config=litert_lm.SamplerConfig(top_k=1))
                for turn in row.get("history") or []:
                    if turn["role"] == "user":
                        conv.send_message(litert_lm.Message.user(turn["text"]))
                parts = {
                    "image": [litert_lm.Content.ImageFile(str(img))],
                    "audio": [litert_lm.Content.AudioFile(str(wav))],
                }.get(row["media"], [])
                parts.append(litert_lm.Content.Text(row["prompt"]))
                got = str(conv.send_message(litert_lm.Message.user(litert_lm.Contents.of(*parts))))
                if got != row["answer"]:
                    wrong.append(f"{model.name} {row['prompt']!r}: got {got!r}, want {row['answer']!r}")
    return wrong
