"""The bundled tiny models on the real litert_lm runtime: modalities, canned answers, media, timings.

The models are random-weight pipeline models that memorized data/models/canned.json, so an exact
greedy answer proves tokenizer, template, prefill/decode, stop token and the media encoders all work.
"""

from __future__ import annotations

import json
import math
import struct
import wave
from pathlib import Path

import litert_lm
import pytest
from PIL import Image

MODELS = Path(__file__).resolve().parents[2] / "data" / "models"
TINY_MM = MODELS / "tiny-mm.litertlm"
TINY_TEXT = MODELS / "tiny-text.litertlm"
TINY_DYNAMIC = MODELS / "tiny-text-dynamic.litertlm"  # KV cache sized to the filled context (docs/bench.md)
CANNED = json.loads((MODELS / "canned.json").read_text())
GREEDY = litert_lm.SamplerConfig(top_k=1)


def _write_wav(path: Path, seconds: float, freq_hz: float, rate: int = 16000) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        n = int(seconds * rate)
        w.writeframes(
            b"".join(
                struct.pack("<h", int(9000 * math.sin(2 * math.pi * freq_hz * i / rate))) for i in range(n)
            )
        )
    return path


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("media")
    noise = Image.effect_noise((64, 48), 80).convert("RGB")
    noise.save(d / "noise.png")
    Image.new("RGB", (120, 90), (200, 20, 40)).save(d / "red.jpg")
    return {
        "image": d / "noise.png",
        "image2": d / "red.jpg",
        "audio": _write_wav(d / "tone.wav", 1.0, 440.0),
        "audio2": _write_wav(d / "long.wav", 4.0, 150.0),
    }


@pytest.fixture(scope="module")
def mm_engine(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("xnnpack-mm")
    cpu = litert_lm.Backend.CPU()
    with litert_lm.Engine(
        str(TINY_MM), cache_dir=str(cache), vision_backend=cpu, audio_backend=cpu, enable_benchmark=True
    ) as engine:
        yield engine


@pytest.fixture(scope="module")
def text_engine(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("xnnpack-text")
    with litert_lm.Engine(str(TINY_TEXT), cache_dir=str(cache), enable_benchmark=True) as engine:
        yield engine


def _ask(engine, row: dict, media_file: Path | None = None):
    """Fresh conversation: replay the fixed history, then the canned prompt (media first)."""
    conv = engine.create_conversation(sampler_config=GREEDY)
    for turn in row.get("history") or []:
        if turn["role"] == "user":
            conv.send_message(litert_lm.Message.user(turn["text"]))
    parts = []
    if row["media"] == "image":
        parts.append(litert_lm.Content.ImageFile(str(media_file)))
    elif row["media"] == "audio":
        parts.append(litert_lm.Content.AudioFile(str(media_file)))
    parts.append(litert_lm.Content.Text(row["prompt"]))
    return conv, str(conv.send_message(litert_lm.Message.user(litert_lm.Contents.of(*parts))))


def test_canned_file_covers_text_image_audio_and_two_turns() -> None:
    kinds = [row["media"] for row in CANNED]
    assert kinds.count(None) >= 3 and "image" in kinds and "audio" in kinds
    assert any(row.get("history") for row in CANNED)


def test_model_files_are_small_and_not_polluted_by_caches() -> None:
    assert all(m.stat().st_size < 1_000_000 for m in (TINY_MM, TINY_TEXT, TINY_DYNAMIC))
    assert not list(MODELS.glob("*xnnpack_cache*"))


@pytest.mark.parametrize(
    ("path", "vision", "audio"), [(TINY_MM, True, True), (TINY_TEXT, False, False)], ids=["mm", "text"]
)
def test_model_info_reports_modalities_and_context(path: Path, vision: bool, audio: bool) -> None:
    with litert_lm.ModelInfo(str(path)) as info:
        got = info.input_modalities
        assert (got.text, got.vision, got.audio) == (True, vision, audio)
        assert info.max_context_tokens == 2048


@pytest.fixture(scope="module")
def dynamic_engine(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("xnnpack-dynamic")
    with litert_lm.Engine(str(TINY_DYNAMIC), cache_dir=str(cache), enable_benchmark=True) as engine:
        yield engine


@pytest.mark.parametrize("row", CANNED, ids=[r["prompt"] for r in CANNED])
def test_tiny_mm_answers_every_canned_prompt_exactly(mm_engine, media, row: dict) -> None:
    _, answer = _ask(mm_engine, row, media.get(row["media"] or ""))
    assert answer == row["answer"]


@pytest.mark.parametrize("row", [r for r in CANNED if r["media"] is None], ids=lambda r: r["prompt"])
def test_tiny_text_answers_text_canned_prompts_exactly(text_engine, row: dict) -> None:
    _, answer = _ask(text_engine, row)
    assert answer == row["answer"]


@pytest.mark.parametrize("kind", ["image", "audio"])
def test_media_answer_does_not_depend_on_the_media(mm_engine, media, kind: str) -> None:
    row = next(r for r in CANNED if r["media"] == kind)
    first, a = _ask(mm_engine, row, media[kind])
    second, b = _ask(mm_engine, row, media[kind + "2"])
    assert a == b == row["answer"]
    # The media really went through the encoders: each prompt is longer than its text alone.
    text_only = mm_engine.tokenize(row["prompt"])
    assert first.get_benchmark_info().last_prefill_token_count > len(text_only) + 8
    if kind == "audio":  # a longer clip gives more audio embeddings
        assert (
            second.get_benchmark_info().last_prefill_token_count
            > first.get_benchmark_info().last_prefill_token_count
        )


def test_benchmark_figures_are_positive(mm_engine) -> None:
    conv, answer = _ask(mm_engine, CANNED[0])
    info = conv.get_benchmark_info()
    assert answer == CANNED[0]["answer"]
    assert info.init_time_in_second > 0
    assert info.time_to_first_token_in_second > 0
    assert info.last_prefill_token_count > 0 and info.last_prefill_tokens_per_second > 0
    assert info.last_decode_token_count > 0 and info.last_decode_tokens_per_second > 0


def test_a_2000_character_prompt_fits_the_context(text_engine) -> None:
    prompt = ("Edge devices report latency, memory and answers for every sample they run. " * 30)[:2000]
    assert len(text_engine.tokenize(prompt)) < 2048 - 64
    conv = text_engine.create_conversation(sampler_config=GREEDY, max_output_tokens=16)
    reply = str(conv.send_message(prompt))  # nonsense, but no "Input token ids are too long"
    assert isinstance(reply, str)
    assert conv.get_benchmark_info().last_prefill_token_count > 1000


@pytest.mark.parametrize("row", [r for r in CANNED if r["media"] is None], ids=lambda r: r["prompt"])
def test_tiny_text_dynamic_answers_text_canned_prompts_exactly(dynamic_engine, row: dict) -> None:
    _, answer = _ask(dynamic_engine, row)
    assert answer == row["answer"]


def test_tiny_text_dynamic_takes_a_prompt_beyond_the_static_models_context(dynamic_engine) -> None:
    """Its context is 8192 tokens (the dynamic executor grows the cache), not the static 2048."""
    with litert_lm.ModelInfo(str(TINY_DYNAMIC)) as info:
        assert info.max_context_tokens == 8192 and not info.input_modalities.vision
    prompt = "The quick brown fox jumps over the lazy dog near the edge farm. " * 80
    assert len(dynamic_engine.tokenize(prompt)) > 2048
    conv = dynamic_engine.create_conversation(sampler_config=GREEDY, max_output_tokens=8)
    conv.send_message(prompt)
    assert conv.get_benchmark_info().last_prefill_token_count > 2048
