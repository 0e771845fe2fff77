"""Tiny vision and audio encoders/adapters, in the tensor layout LiteRT-LM's generic model expects.

vision_encoder  images [1,32,32,3] f32            -> features [1,16,32]   (4x4 grid of 8x8 patches)
vision_adapter  features [1,16,32]                -> [1,16,HIDDEN]
audio_encoder   src_inputs [1,64,16] f32, mask [1,64] bool -> features [1,16,32], mask [1,16] bool
audio_adapter   mask [1,16], src_features [1,16,32] -> [1,16,HIDDEN]
The runtime binds the audio adapter's inputs by index in name order, hence `mask` < `src_features`.
Adapter outputs are scaled by 0.02 so media barely move the LM, which was trained to answer its
canned media prompts whatever is spliced in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

IMAGE_SIZE = 32
PATCH = 8
FEATURES = 32
AUDIO_FRAMES = 64
MEL_BINS = 16
AUDIO_STRIDE = 4  # 64 frames -> 16 audio embeddings
ADAPTER_SCALE = 0.02


class VisionEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(PATCH * PATCH * 3, FEATURES)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        g = IMAGE_SIZE // PATCH
        x = images.reshape(1, g, PATCH, g, PATCH, 3).permute(0, 1, 3, 2, 4, 5)
        return torch.tanh(self.proj(x.reshape(1, g * g, PATCH * PATCH * 3)))


class VisionAdapter(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.proj = nn.Linear(FEATURES, hidden)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.proj(features) * ADAPTER_SCALE


class AudioEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(AUDIO_STRIDE * MEL_BINS, FEATURES)

    def forward(self, src_inputs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        t = AUDIO_FRAMES // AUDIO_STRIDE
        frames = src_inputs * mask[..., None].to(src_inputs.dtype)
        feats = torch.tanh(self.proj(frames.reshape(1, t, AUDIO_STRIDE * MEL_BINS)))
        out_mask = mask.reshape(1, t, AUDIO_STRIDE).to(torch.float32).amax(dim=-1) > 0.5
        return feats, out_mask


class AudioAdapter(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.proj = nn.Linear(FEATURES, hidden)

    def forward(self, mask: torch.Tensor, src_features: torch.Tensor) -> torch.Tensor:
        return self.proj(src_features) * mask[..., None].to(src_features.dtype) * ADAPTER_SCALE


@dataclass(frozen=True)
class Encoders:
    vision_encoder: VisionEncoder
    vision_adapter: VisionAdapter
    audio_encoder: AudioEncoder
    audio_adapter: AudioAdapter


def make_encoders(hidden: int, seed: int) -> Encoders:
    """Random-init encoders (seeded); they are never trained."""
    torch.manual_seed(seed)
    enc = Encoders(VisionEncoder(), VisionAdapter(hidden), AudioEncoder(), AudioAdapter(hidden))
    for m in (enc.vision_encoder, enc.vision_adapter, enc.audio_encoder, enc.audio_adapter):
        m.eval()
    return enc


class _Named(nn.Module):
    """Wraps a module so the converted signature has the output names the runtime looks up."""

    def __init__(self, inner: nn.Module, names: tuple[str, ...]) -> None:
        super().__init__()
        self.inner = inner
        self.names = names

    def forward(self, **kwargs: torch.Tensor) -> dict[str, torch.Tensor]:
        out = self.inner(**kwargs)
        out = out if isinstance(out, tuple) else (out,)
        return dict(zip(self.names, out))


def convert_all(enc: Encoders, hidden: int, out_dir: Path) -> dict[str, Path]:
    """Convert each module to its own .tflite; returns model_type -> file."""
    import litert_torch

    t = AUDIO_FRAMES // AUDIO_STRIDE
    jobs = {
        "vision_encoder": (
            enc.vision_encoder,
            {"images": torch.rand(1, IMAGE_SIZE, IMAGE_SIZE, 3)},
            ("features",),
        ),
        "vision_adapter": (enc.vision_adapter, {"features": torch.rand(1, t, FEATURES)}, ("mm_embedding",)),
        "audio_encoder_hw": (
            enc.audio_encoder,
            {
                "src_inputs": torch.rand(1, AUDIO_FRAMES, MEL_BINS),
                "mask": torch.ones(1, AUDIO_FRAMES, dtype=torch.bool),
            },
            ("features", "mask"),
        ),
        "audio_adapter": (
            enc.audio_adapter,
            {"mask": torch.ones(1, t, dtype=torch.bool), "src_features": torch.rand(1, t, FEATURES)},
            ("mm_embedding",),
        ),
    }
    paths: dict[str, Path] = {}
    for model_type, (module, kwargs, names) in jobs.items():
        edge = litert_torch.signature(
            "serving_default", _Named(module, names), sample_kwargs=kwargs
        ).convert()
        path = out_dir / f"tf_lite_{model_type}.tflite"
        edge.export(str(path))
        paths[model_type] = path
    return paths
