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
