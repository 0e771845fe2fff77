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


def test_a_second_inspection_comes_from_the_cache_and_equals_the_first(tmp_path: Path, monkeypatch):
    import sys

    from orchestrator import models
    from orchestrator.memo import Memo

    monkeypatch.setenv("EDGEFARM_CACHE_DIR", str(tmp_path))
    first = inspect_model(BUNDLED_MODEL)
    assert len(list((tmp_path / "memo" / "models").glob("*.pickle"))) == 1
    kept = {"sha256": first.sha256, "runtime": models._runtime_key(), "layout": 1}
    assert len(models._runtime_key()) == 2  # the runtime's __init__.py and liblitert-lm.so
    assert Memo("models").get(kept)["sections"] == first.sections
    monkeypatch.setitem(sys.modules, "litert_lm", None)  # importing the runtime now fails
    monkeypatch.setattr(models, "read_sections", lambda path: pytest.fail("the cache was not used"))
    assert inspect_model(BUNDLED_MODEL) == first
    again = inspect_model(BUNDLED_MODEL).facts
    assert first.facts is not None and again.floor_bytes(None) == first.facts.floor_bytes(None)


def test_a_damaged_cache_entry_is_inspected_again(tmp_path: Path, monkeypatch):
    from orchestrator import models
    from orchestrator.memo import Memo

    monkeypatch.setenv("EDGEFARM_CACHE_DIR", str(tmp_path))
    first = inspect_model(TEXT_MODEL)
    (entry,) = (tmp_path / "memo" / "models").glob("*.pickle")
    entry.write_bytes(entry.read_bytes()[:40])  # truncated by hand
    assert inspect_model(TEXT_MODEL) == first
    kept = {"sha256": first.sha256, "runtime": models._runtime_key(), "layout": 1}
    assert Memo("models").get(kept)["sections"] == first.sections  # rewritten whole


def test_the_inspection_is_kept_per_installed_runtime(tmp_path: Path, monkeypatch):
    """Another or a reinstalled runtime (its files written anew) is another key: the model is read again."""
    import os

    from orchestrator import models

    pkg = tmp_path / "site" / "litert_lm"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "liblitert-lm.so").write_bytes(b"v1")
    installed = models._runtime_key()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    first = models._runtime_key()
    assert len(first) == 2 and first != installed
    os.utime(pkg / "liblitert-lm.so", ns=(1, 1))  # the library replaced
    assert models._runtime_key() != first
