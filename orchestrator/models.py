"""Host-side model inspection (preflight): what a .litertlm holds before anything is pushed."""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .bundled import BUNDLED_MODEL
from .devices.files import cached_sha256
from .errors import ModelError, OutputError
from .fsutil import cache_dir, stat_key, write_text_atomic
from .model_facts import ModelFacts, read_model_facts

# What inspect_model keeps of a model across runs ($EDGEFARM_CACHE_DIR/models/<sha256>.json): the summary
# depends on the file's bytes (its sha256), the runtime that read it and this code; bump on a change here.
KEPT_VERSION = 1

__all__ = ["BUNDLED_MODEL", "ModelSummary", "Section", "inspect_model", "read_sections"]


@dataclass(frozen=True)
class Section:
    """One section of the .litertlm container (metadata, tokenizer, a TFLite model, ...)."""

    data_type: str  # LlmMetadataProto, HF_Tokenizer_Zlib, TFLiteModel, ...
    model_type: str | None  # for TFLite sections: tf_lite_prefill_decode, tf_lite_vision_encoder, ...
    size_bytes: int


@dataclass(frozen=True)
class ModelSummary:
    path: Path
    size_bytes: int
    sha256: str
    vision: bool
    audio: bool
    max_context_tokens: int | None
    sections: tuple[Section, ...] = ()
    facts: ModelFacts | None = None  # read from the TFLite sections (model_facts.py); None if unreadable

    @property
    def modalities(self) -> tuple[str, ...]:
        return ("text",) + (("image",) if self.vision else ()) + (("audio",) if self.audio else ())


def inspect_model(path: Path) -> ModelSummary:
    """Read sections/modalities with `litert_lm.ModelInfo`; a missing or unreadable file is a ModelError.

    ModelInfo reads the container header only; a model whose weights are broken can still pass this
    and abort the runner later (the runner is a child process for that reason).
    """
    path = Path(path).expanduser()
    if any(ord(c) < 32 or ord(c) == 127 for c in path.name):  # it becomes a flag on the device's command line
        raise ModelError(
            f"the model's file name {path.name!r} holds a control character (a newline, a tab...)",
            where=f"--model {str(path)!r}",
            fix="rename the file to a plain name (letters, digits, . _ -) and pass that to --model",
        )
    if not path.is_file():
        raise ModelError(
            f"model file not found: {path}",
            fix="pass --model PATH to a .litertlm file (default: the bundled tiny model)",
        )
    sha256 = cached_sha256(path)
    kept = _read_kept(path, sha256)
    if kept is not None:  # reading it costs a command ~0.2 s (the runtime's library, the file tooling)
        return kept
    import litert_lm

    try:
        with litert_lm.ModelInfo(str(path)) as info:
            mods = info.input_modalities
            ctx = info.max_context_tokens
            vision, audio = bool(mods.vision), bool(mods.audio)
    except Exception as e:  # the runtime raises generic errors for unreadable containers
        raise ModelError(
            f"cannot read model {path}: {e}",
            fix="check that the file is a complete .litertlm (re-download or re-push it)",
        ) from e
    summary = ModelSummary(
        path=path.resolve(),
        size_bytes=path.stat().st_size,
        sha256=sha256,
        vision=vision,
        audio=audio,
        max_context_tokens=int(ctx) if ctx and ctx > 0 else None,
        sections=read_sections(path),
        facts=_facts(path),
    )
    _keep(summary)
    return summary


def _kept_file(sha256: str) -> Path:
    return cache_dir() / "models" / f"{sha256}.json"


def _reader() -> list[Any]:
    """What read a kept summary besides the file's bytes: this code's KEPT_VERSION and the installed
    runtime package (the stat of its __init__.py: a reinstall or another version reads anew)."""
    spec = importlib.util.find_spec("litert_lm")
    origin = spec.origin if spec and spec.origin else ""
    return [KEPT_VERSION, list(stat_key(os.stat(origin))) if origin else None]


def _read_kept(path: Path, sha256: str) -> ModelSummary | None:
    """The summary kept for a model with these bytes (`path`'s), read by this code and runtime; None: read it."""
    try:
        entry = json.loads(_kept_file(sha256).read_text(encoding="utf-8"))
        if entry["reader"] != _reader() or entry["sha256"] != sha256:
            return None
        return ModelSummary(
            path=path.resolve(), size_bytes=path.stat().st_size, sha256=sha256, vision=bool(entry["vision"]), audio=bool(entry["audio"]),
            max_context_tokens=entry["max_context_tokens"],
            sections=tuple(Section(d, m, int(n)) for d, m, n in entry["sections"]),
            facts=ModelFacts.from_json(entry["facts"]) if entry["facts"] is not None else None,
        )  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # missing or damaged: read the model
        return None


def _keep(m: ModelSummary) -> None:
    entry = {"reader": _reader(), "sha256": m.sha256, "vision": m.vision, "audio": m.audio,
             "max_context_tokens": m.max_context_tokens,
             "sections": [[s.data_type, s.model_type, s.size_bytes] for s in m.sections],
             "facts": m.facts.to_json(None) if m.facts is not None else None}  # fmt: skip
    try:
        write_text_atomic(_kept_file(m.sha256), json.dumps(entry))
    except (OutputError, OSError):  # not kept: read again next time
        pass


def _facts(path: Path) -> ModelFacts | None:
    """The model's own facts, or None when its sections cannot be read (the run goes on without)."""
    try:
        return read_model_facts(path)
    except Exception:  # noqa: BLE001 - facts are an extra: a container the runtime reads still runs
        return None


def read_sections(path: Path) -> tuple[Section, ...]:
    """The container's section table, read with the LiteRT-LM file tooling (litert-lm-builder)."""
    import io

    from litert_lm_builder import litertlm_core, litertlm_peek

    try:
        header = litertlm_peek.read_litertlm_header(str(path), io.StringIO())
        table = header.SectionMetadata()
        out = []
        for i in range(table.ObjectsLength()):
            obj = table.Objects(i)
            out.append(
                Section(
                    data_type=litertlm_core.any_section_data_type_to_string(obj.DataType()),
                    model_type=litertlm_peek.get_model_type(obj),
                    size_bytes=int(obj.EndOffset() - obj.BeginOffset()),
                )
            )
    except Exception as e:  # a header the tooling cannot parse: the file is not a usable container
        raise ModelError(
            f"cannot read the section table of {path}: {e}",
            fix="check that the file is a complete .litertlm (re-download or re-push it)",
        ) from e
    return tuple(out)
