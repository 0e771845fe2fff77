"""Host-side model inspection (preflight): what a .litertlm holds before anything is pushed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .bundled import BUNDLED_MODEL
from .devices.files import cached_sha256
from .errors import ModelError
from .model_facts import ModelFacts, read_model_facts

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
    return ModelSummary(
        path=path.resolve(),
        size_bytes=path.stat().st_size,
        sha256=sha256,
        vision=vision,
        audio=audio,
        max_context_tokens=int(ctx) if ctx and ctx > 0 else None,
        sections=read_sections(path),
        facts=_facts(path),
    )


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
