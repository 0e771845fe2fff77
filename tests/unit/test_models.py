import dataclasses
from pathlib import Path

import pytest

from orchestrator.errors import ModelError
from orchestrator.models import BUNDLED_MODEL, inspect_model, read_sections

TEXT_MODEL = BUNDLED_MODEL.with_name("tiny-text.litertlm")


def test_bundled_model_sections_and_modalities():
    m = inspect_model(BUNDLED_MODEL)
    assert m.vision and m.audio and m.modalities == ("text", "image", "audio")
    kinds = {s.model_type for s in m.sections if s.data_type == "TFLiteModel"}
    assert {"tf_lite_prefill_decode", "tf_lite_vision_encoder", "tf_lite_audio_encoder_hw"} <= kinds
    assert sum(s.size_bytes for s in m.sections) <= m.size_bytes and len(m.sha256) == 64


def test_text_model_has_no_encoders():
    m = inspect_model(TEXT_MODEL)
    assert not m.vision and not m.audio
    assert not any(s.model_type and "vision" in s.model_type for s in m.sections)


def test_not_a_container_is_a_model_error(tmp_path: Path):
    bad = tmp_path / "x.litertlm"
    bad.write_bytes(b"NOTLITERTLM" * 100)
    with pytest.raises(ModelError, match="x.litertlm"):
        read_sections(bad)
    with pytest.raises(ModelError, match="fix:"):
        inspect_model(bad)


@pytest.mark.parametrize("model", [BUNDLED_MODEL, TEXT_MODEL], ids=["mm", "text"])
def test_a_kept_summary_equals_the_model_read_again_and_a_stale_or_damaged_one_is_not_used(
    model: Path, tmp_path: Path, monkeypatch
):
    """inspect_model keeps what it read ($EDGEFARM_CACHE_DIR/models/<sha256>.json): a copy of the model
    under another name reads the same summary (its own path) without the runtime; a damaged entry, or one
    another reader wrote (KEPT_VERSION, the runtime package), is read from the model again."""
    from orchestrator import models

    monkeypatch.setenv("EDGEFARM_CACHE_DIR", str(tmp_path / "cache"))
    fresh = inspect_model(model)
    kept_file = tmp_path / "cache" / "models" / f"{fresh.sha256}.json"
    assert kept_file.is_file()
    copy = tmp_path / "copy.litertlm"
    copy.write_bytes(model.read_bytes())

    def no_runtime(*_a, **_k):
        raise AssertionError("the model was read although its summary was kept")

    with monkeypatch.context() as m:
        m.setattr(models, "read_sections", no_runtime)
        m.setattr(models, "_facts", no_runtime)
        kept = inspect_model(copy)
    assert kept == dataclasses.replace(fresh, path=copy.resolve())
    assert kept.facts is not None and kept.facts.to_json(64) == fresh.facts.to_json(64)

    kept_file.write_text("{not json")  # damaged: read again, kept again
    assert inspect_model(model) == fresh and kept_file.read_text().startswith("{")
    monkeypatch.setattr(models, "KEPT_VERSION", models.KEPT_VERSION + 1)  # another reader's entry
    calls = []
    monkeypatch.setattr(models, "read_sections", lambda p: calls.append(p) or fresh.sections)
    assert inspect_model(model) == fresh and calls == [model]
