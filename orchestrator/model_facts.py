"""The model's own facts, read from its TFLite sections with `ai-edge-litert`'s flatbuffer schema.

Per TFLite section of a .litertlm: its weights by tensor type and the quantization, its signatures
and input tensor shapes; from them the vision encoder's input size, the KV cache (bytes per token,
tokens the exported cache holds) and a PREDICTED MEMORY FLOOR at a token limit:

    floor = all sections' weight bytes + KV cache bytes at the token limit

A floor, not a forecast: the runtime's own code and allocator, activations, XNNPACK's packed copy of
the weights and the OS come on top (docs/model-facts.md quotes the floor beside measured peaks).
The file is memory-mapped and only the flatbuffer tables are read, so a multi-GB model costs
milliseconds; `ai_edge_litert` (and numpy, through flatbuffers) is imported only here.
"""

from __future__ import annotations

import mmap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# bytes per element by TFLite tensor type name (INT4 packs two per byte)
DTYPE_BYTES = {"FLOAT32": 4.0, "FLOAT16": 2.0, "BFLOAT16": 2.0, "FLOAT64": 8.0, "INT64": 8.0, "INT32": 4.0,
               "UINT32": 4.0, "INT16": 2.0, "UINT16": 2.0, "INT8": 1.0, "UINT8": 1.0, "BOOL": 1.0,
               "INT4": 0.5, "INT2": 0.25}  # fmt: skip


@dataclass(frozen=True)
class TensorFact:
    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= max(int(d), 1)
        return int(n * DTYPE_BYTES.get(self.dtype, 4.0))


@dataclass(frozen=True)
class SectionFacts:
    model_type: str  # e.g. tf_lite_prefill_decode, tf_lite_vision_encoder
    size_bytes: int
    weight_bytes: int
    weight_bytes_by_type: Mapping[str, int]
    quantization: str  # e.g. "INT8 per-channel (93% of weights)", "FLOAT32"
    signatures: tuple[str, ...]
    inputs: tuple[TensorFact, ...]  # the first signature's inputs


@dataclass(frozen=True)
class ModelFacts:
    sections: tuple[SectionFacts, ...] = ()
    vision_input: tuple[int, ...] | None = None  # the vision encoder's image tensor, e.g. (1, 768, 768, 3)
    audio_input: tuple[int, ...] | None = None
    kv_cache_tokens: int | None = None  # tokens the exported KV cache holds (None: dynamic or unknown)
    kv_bytes_per_token: float | None = None  # K and V of every layer
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def weight_bytes(self) -> int:
        return sum(s.weight_bytes for s in self.sections)

    @property
    def kv_cache_dynamic(self) -> bool:
        """The KV cache has a dynamic length (litert-torch's enable_dynamic_shape): the runtime sizes it to
        the filled context and, within one engine, never shrinks it (docs/bench.md)."""
        return self.kv_bytes_per_token is not None and self.kv_cache_tokens is None

    def kv_bytes(self, tokens: int | None) -> int | None:
        """KV cache bytes at a token limit (the exported cache length when none is given)."""
        if self.kv_bytes_per_token is None:
            return None
        n = tokens or self.kv_cache_tokens or 0
        return int(self.kv_bytes_per_token * n)

    def floor_bytes(self, tokens: int | None) -> int:
        """Predicted memory floor: weights + KV cache at the token limit."""
        return self.weight_bytes + (self.kv_bytes(tokens) or 0)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelFacts:
        """The facts to_json wrote (its figures at a token limit are computed again, not read)."""
        sections = tuple(
            SectionFacts(s["model_type"], int(s["size_bytes"]), int(s["weight_bytes"]),
                         {str(k): int(v) for k, v in s["weight_bytes_by_type"].items()}, s["quantization"],
                         tuple(s["signatures"]),
                         tuple(TensorFact(t["name"], tuple(t["shape"]), t["dtype"]) for t in s["inputs"]))
            for s in data["sections"]
        )  # fmt: skip
        shape = lambda v: tuple(v) if v else None
        return cls(sections, shape(data["vision_input"]), shape(data["audio_input"]), data["kv_cache_tokens"],
                   data["kv_bytes_per_token"], tuple(data["notes"]))  # fmt: skip

    def to_json(self, tokens: int | None) -> dict[str, Any]:
        mb = 2**20
        return {
            "sections": [
                {"model_type": s.model_type, "size_bytes": s.size_bytes, "weight_bytes": s.weight_bytes,
                 "weight_bytes_by_type": dict(s.weight_bytes_by_type), "quantization": s.quantization,
                 "signatures": list(s.signatures),
                 "inputs": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype} for t in s.inputs]}
                for s in self.sections
            ],
            "vision_input": list(self.vision_input) if self.vision_input else None,
            "audio_input": list(self.audio_input) if self.audio_input else None,
            "kv_cache_tokens": self.kv_cache_tokens,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "token_limit": tokens or self.kv_cache_tokens,
            "kv_cache_mb": None if self.kv_bytes(tokens) is None else round(self.kv_bytes(tokens) / mb, 2),
            "weights_mb": round(self.weight_bytes / mb, 2),
            "predicted_floor_mb": round(self.floor_bytes(tokens) / mb, 2),
            "notes": list(self.notes),
        }  # fmt: skip


def _section(buf: Any, begin: int, end: int, model_type: str) -> tuple[SectionFacts, dict[str, TensorFact]]:
    from ai_edge_litert import schema_py_generated as schema  # lazy: ~0.15 s with numpy

    names = {v: k for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
    model = schema.Model.GetRootAs(buf, begin)
    by_type: dict[str, int] = {}
    seen: set[int] = set()
    quantized, per_channel = 0, 0
    for g in range(model.SubgraphsLength()):
        sg = model.Subgraphs(g)
        for t in range(sg.TensorsLength()):
            tensor = sg.Tensors(t)
            b = tensor.Buffer()
            if b <= 0 or b in seen or b >= model.BuffersLength():
                continue
            buffer = model.Buffers(b)
            n = buffer.DataLength() or (int(buffer.Size()) if buffer.Offset() > 1 else 0)
            if not n:
                continue
            seen.add(b)
            dtype = names.get(tensor.Type(), str(tensor.Type()))
            by_type[dtype] = by_type.get(dtype, 0) + n
            q = tensor.Quantization()
            if q is not None and q.ScaleLength() > 0:
                quantized += n
                per_channel += n if q.ScaleLength() > 1 else 0
    total = sum(by_type.values())
    main = max(by_type, key=by_type.get) if by_type else ""
    quant = main
    if main and total:
        how = " per-channel" if per_channel > quantized / 2 else " per-tensor" if quantized else ""
        quant = (
            f"{main}{how} ({100 * by_type[main] / total:.0f}% of weights)" if len(by_type) > 1 else main + how
        )
    signatures, inputs, named = [], [], {}
    for s in range(model.SignatureDefsLength()):
        sd = model.SignatureDefs(s)
        signatures.append((sd.SignatureKey() or b"").decode())
        sg = model.Subgraphs(sd.SubgraphIndex())
        for i in range(sd.InputsLength()):
            tm = sd.Inputs(i)
            tensor = sg.Tensors(tm.TensorIndex())
            dims = tensor.ShapeSignatureAsNumpy() if tensor.ShapeSignatureLength() else tensor.ShapeAsNumpy()
            fact = TensorFact((tm.Name() or b"").decode(), tuple(int(d) for d in dims),  # -1: dynamic
                              names.get(tensor.Type(), str(tensor.Type())))  # fmt: skip
            if s == 0:
                inputs.append(fact)
                named.setdefault(fact.name, fact)
    facts = SectionFacts(
        model_type or "", end - begin, total, by_type, quant, tuple(signatures), tuple(inputs)
    )
    return facts, named


def read_model_facts(path: Path) -> ModelFacts:
    """Facts of every TFLite section of a .litertlm (a section that cannot be read is noted, not fatal)."""
    import io

    from litert_lm_builder import litertlm_core, litertlm_peek

    header = litertlm_peek.read_litertlm_header(str(path), io.StringIO())
    table = header.SectionMetadata()
    sections: list[SectionFacts] = []
    notes: list[str] = []
    vision = audio = None
    kv_tokens, kv_per_token = None, None
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        for i in range(table.ObjectsLength()):
            obj = table.Objects(i)
            if litertlm_core.any_section_data_type_to_string(obj.DataType()) != "TFLiteModel":
                continue
            model_type = litertlm_peek.get_model_type(obj) or ""
            try:
                sec, named = _section(buf, int(obj.BeginOffset()), int(obj.EndOffset()), model_type)
            except Exception as e:  # noqa: BLE001 - an unreadable section is a fact too
                notes.append(f"{model_type or f'section {i}'}: not readable ({type(e).__name__}: {e})")
                continue
            sections.append(sec)
            if "vision_encoder" in model_type and sec.inputs:
                vision = max(sec.inputs, key=lambda t: len(t.shape)).shape
            if "audio_encoder" in model_type and sec.inputs:
                audio = max(sec.inputs, key=lambda t: t.nbytes).shape
            kv = [t for name, t in named.items() if "kv_cache" in name]
            if kv and kv_per_token is None and any(d < 0 for t in kv for d in t.shape):
                # a dynamic sequence axis (litert-torch's enable_dynamic_shape): the runtime sizes the
                # cache to the filled context, so no fixed length; nbytes counts that axis as 1 token
                kv_per_token = float(sum(t.nbytes for t in kv))
            elif kv and kv_per_token is None:
                mask = next((t for name, t in named.items() if name.endswith("mask")), None)
                kv_tokens = mask.shape[-1] if mask and mask.shape else max(max(t.shape) for t in kv)
                kv_per_token = sum(t.nbytes for t in kv) / kv_tokens if kv_tokens else None
    return ModelFacts(tuple(sections), vision, audio, kv_tokens, kv_per_token, tuple(notes))


RAM_FRACTION = 0.8  # a model may use at most this share of a device's RAM (weights + KV cache + OS)


def memory_refusal(ram_mb: float | None, floor_bytes: int | None, fraction: float = RAM_FRACTION) -> str:
    """Why a device with ram_mb cannot hold a model of this floor ("" when it can, or when unknown)."""
    if ram_mb is None or not floor_bytes or floor_bytes / 2**20 <= ram_mb * fraction:
        return ""
    return (
        f"the model needs at least {floor_bytes / 2**20:.1f} MB of memory (weights + KV cache at the run's "
        f"token limit), over {fraction:.0%} of this device's RAM ({ram_mb:.1f} MB)"
    )
