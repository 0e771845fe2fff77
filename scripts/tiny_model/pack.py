"""Export the trained LM with litert-torch and pack it (plus encoders) into a .litertlm file."""

from __future__ import annotations

import importlib.machinery
import subprocess
import sys
import types
from pathlib import Path

from .canned import AUDIO_TAG, IMAGE_TAG, TEMPLATE_MM, TEMPLATE_TEXT
from .encoders import IMAGE_SIZE, MEL_BINS


def _alias_tflite_schema() -> None:
    """The exporter imports tensorflow.lite's flatbuffer schema; ai_edge_litert ships the same module.

    Must run after torch._dynamo and litert_torch are imported (they probe `tensorflow.__spec__`).
    """
    # isort: off
    import torch._dynamo  # noqa: F401
    import litert_torch  # noqa: F401

    # isort: on
    from ai_edge_litert import schema_py_generated

    for name in ("tensorflow", "tensorflow.lite", "tensorflow.lite.python"):
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
            mod.__path__ = []
            sys.modules[name] = mod
    sys.modules["tensorflow.lite.python"].schema_py_generated = schema_py_generated
    sys.modules["tensorflow.lite.python.schema_py_generated"] = schema_py_generated


def export_lm(
    hf_dir: Path,
    out_dir: Path,
    *,
    prefill: list[int],
    cache_length: int,
    external_embedder: bool,
    dynamic_context: bool = False,
) -> Path:
    """HF Llama dir -> exporter's .litertlm (int8 weights, float activations).

    dynamic_context: the exporter's `enable_dynamic_shape` (one `prefill` signature of any length,
    KV cache inputs with a dynamic sequence axis, up to cache_length). LiteRT-LM then runs the model
    on its dynamic CPU executor, whose cache holds only the filled context (grown by the engine's
    kv_increment_size, 16 by default), so a decode step's attention covers the filled tokens, not a
    fixed cache_length. CPU only: the runtime refuses other backends for such a model.
    """
    _alias_tflite_schema()
    from litert_torch.generative.export_hf import export as export_hf

    export_hf.export(
        model=str(hf_dir),
        output_dir=str(out_dir),
        prefill_lengths=prefill,
        cache_length=cache_length,
        quantization_recipe="dynamic_wi8_afp32",
        externalize_embedder=external_embedder,
        enable_dynamic_shape=dynamic_context,
    )
    return out_dir / "model.litertlm"


def _q(s: str) -> str:
    """A protobuf text-format string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def llm_metadata(*, multimodal: bool, max_num_tokens: int) -> str:
    """LlmMetadata as text proto: greedy-friendly (no TOP_K sampler: the runtime rejects it)."""
    generic = ""
    if multimodal:
        generic = f"""
    image_enabled: true
    audio_enabled: true
    delimiter_regex: {_q(f"({IMAGE_TAG}|{AUDIO_TAG})")}
    image_token_regex: {_q(IMAGE_TAG)}
    audio_token_regex: {_q(AUDIO_TAG)}
    image_tensor_height: {IMAGE_SIZE}
    image_tensor_width: {IMAGE_SIZE}
    audio_sample_rate_hz: 16000
    audio_num_channels: 1
    audio_frame_length: 400
    audio_hop_length: 160
    audio_fft_length: 512
    audio_num_mel_bins: {MEL_BINS}
    audio_mel_low_hz: 125.0
    audio_mel_high_hz: 7600.0
    audio_mel_floor: 0.00001"""
    template = TEMPLATE_MM if multimodal else TEMPLATE_TEXT
    return f"""stop_tokens {{
  token_str: "<|im_end|>"
}}
pad_token {{
  token_str: "<|endoftext|>"
}}
max_num_tokens: {max_num_tokens}
llm_model_type {{
  generic_model {{{generic}
  }}
}}
jinja_prompt_template: {_q(template)}
"""


def _builder(venv_bin: Path) -> str:
    return str(venv_bin / "litert-lm-builder")


def unpack(exported: Path, out_dir: Path, venv_bin: Path) -> dict[str, Path]:
    """Exporter output -> its section files, keyed by section kind / model_type."""
    subprocess.run(
        [_builder(venv_bin), "unpack", "--path", str(exported), "--output_dir", str(out_dir)],
        check=True,
        capture_output=True,
    )
    found: dict[str, Path] = {}
    for path in sorted(out_dir.iterdir()):
        if path.name.startswith("ExecutorMetadata"):
            found["ExecutorMetadata"] = path
        elif "HF_Tokenizer" in path.name:
            found["HF_Tokenizer"] = path
        elif path.suffix == ".tflite":
            found[path.stem.split("tf_lite_", 1)[1]] = path
    return found


def pack(
    sections: dict[str, Path], metadata: str, work: Path, output: Path, venv_bin: Path, *, name: str
) -> None:
    """Write a TOML describing every section and let litert-lm-builder produce the .litertlm."""
    meta_path = work / "llm_metadata.pbtext"
    meta_path.write_text(metadata)
    toml = [
        "[system_metadata]",
        "entries = [",
        '  { key = "Authors", value_type = "String", value = "edgefarm" },',
        f'  {{ key = "model_name", value_type = "String", value = "{name}" }},',
        "]",
        "",
        f'[[section]]\nsection_type = "LlmMetadata"\ndata_path = "{meta_path}"\n',
        f'[[section]]\nsection_type = "ExecutorMetadata"\ndata_path = "{sections["ExecutorMetadata"]}"\n',
        f'[[section]]\nsection_type = "HF_Tokenizer"\ndata_path = "{sections["HF_Tokenizer"]}"\n',
    ]
    for model_type, path in sections.items():
        if path.suffix == ".tflite":
            toml.append(
                f'[[section]]\nsection_type = "TFLiteModel"\nmodel_type = "{model_type}"\ndata_path = "{path}"\n'
            )
    toml_path = work / f"{name}.toml"
    toml_path.write_text("\n".join(toml))
    output.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [_builder(venv_bin), "toml", "--path", str(toml_path), "output", "--path", str(output)],
        check=True,
    )
