"""What a run will do: the sample slice, the dataset fingerprint, run.json's content. Pure."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .datasets.types import Dataset, Sample
from .errors import ConfigError


def select_samples(
    dataset: Dataset,
    modalities: Sequence[str] = (),
    limit: int | None = None,
    per_modality: int | None = None,
) -> list[Sample]:
    """Filter by modality (in dataset order), then keep at most per_modality of each, then the first limit."""
    known = set(dataset.by_modality)
    unknown = [m for m in modalities if m not in known]
    if unknown:
        raise ConfigError(
            f"no samples with modality {', '.join(map(repr, unknown))} in {dataset.name}",
            where="--modality",
            fix=f"use one of: {', '.join(sorted(known))}",
        )
    chosen = [s for s in dataset.samples if not modalities or s.modality in modalities]
    if per_modality is not None:
        counts: dict[str, int] = {}
        kept = []
        for s in chosen:
            if counts.get(s.modality, 0) < per_modality:
                counts[s.modality] = counts.get(s.modality, 0) + 1
                kept.append(s)
        chosen = kept
    if limit is not None:
        chosen = chosen[:limit]
    if not chosen:
        raise ConfigError(
            "the selection holds no sample",
            where="--limit/--modality",
            fix="widen --modality or raise --limit",
        )
    return chosen


def dataset_fingerprint(dataset: Dataset, samples: Sequence[Sample]) -> str:
    """sha256 over the dataset files read and every media file the run uses."""
    h = hashlib.sha256()
    listed = set(dataset.files)  # EdgeMMEval lists its media among the files: hash each file once
    paths: list[Path] = list(dataset.files) + sorted(
        {p.path for s in samples for p in s.media if p.path and p.path not in listed}
    )
    for p in paths:
        h.update(str(p.name).encode())
        with open(p, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
    return h.hexdigest()


def run_record(
    *,
    run_id: str,
    started_at: str,
    model: Any,
    dataset: Dataset,
    dataset_spec: str,
    samples: Sequence[Sample],
    dataset_sha: str,
    devices: Sequence[str],
    flags: Mapping[str, Any],
    versions: Mapping[str, str],
    host: Mapping[str, Any],
    unusable: Sequence[Mapping[str, Any]],
    notes: Sequence[str],
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "run_id": run_id,
        "started_at": started_at,
        "model": {
            "path": str(model.path),
            "sha256": model.sha256,
            "size_bytes": model.size_bytes,
            "modalities": list(model.modalities),
            "max_context_tokens": model.max_context_tokens,
            "sections": [
                {"data_type": x.data_type, "model_type": x.model_type, "size_bytes": x.size_bytes}
                for x in model.sections
            ],
        },
        "dataset": {
            "path": dataset_spec,
            "name": dataset.name,
            "format": dataset.format,
            "sha256": dataset_sha,
            "samples_total": len(dataset.samples),
            "samples_run": len(samples),
            "sample_ids": [s.id for s in samples],
        },
        "devices": list(devices),
        "flags": dict(flags),
        "versions": dict(versions),
        "host": dict(host),
        "unusable": list(unusable),
        "notes": list(notes),
    }
