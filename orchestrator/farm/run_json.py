"""run.json as a record: `RunJson`, made by the plan at the run's start (RunPlan.run_json), given its
stand-ins and cluster notes by execute.py and its end by finish.py (each a new record, `replace`),
written by rundir.write_run_json alone. Its one codec is `to_dict` / `from_dict` below: the report is
built from the record in the run's own process; `edgefarm report` and `--resume` decode the file.

`to_dict` writes the keys in the order the run has always written them; a file of an older edgefarm
decodes with its missing fields empty, and keys this record does not know are kept (`other`) and
written after the known ones."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..telemetry.conditions import RunConditions

if TYPE_CHECKING:
    from ..models import ModelSummary

SCHEMA_VERSION = 1
KNOWN_SCHEMAS = tuple(range(1, SCHEMA_VERSION + 1))  # the layouts this edgefarm reads (rundir refuses others)
_OPTIONAL = ("bench", "host_sharing", "shards", "units", "stand_ins", "cluster", "finished_at", "device_versions",
             "outcomes", "conditions")  # fmt: skip
_RECORDS = ("bench", "conditions")  # optional parts kept as records (their to_dict / from_dict)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class ModelStamp:
    """run.json `model`: the file, its size and hash, and what inspecting it found."""

    path: str = ""
    sha256: str = ""
    size_bytes: int | None = None
    modalities: tuple[str, ...] = ()
    max_context_tokens: int | None = None
    sections: tuple[Mapping[str, Any], ...] = ()  # data_type, model_type, size_bytes
    facts: Mapping[str, Any] | None = None  # model_facts.ModelFacts.to_json: quantization, shapes, KV cache

    @property
    def quantization(self) -> str:
        """The model's quantization: its largest TFLite section's (facts.sections)."""
        sections = [s for s in _mapping(self.facts).get("sections") or () if isinstance(s, Mapping)]
        if not sections:
            return ""
        big = max(sections, key=lambda s: s.get("weight_bytes") or 0)
        return str(big.get("quantization") or "")

    @classmethod
    def of(cls, model: ModelSummary, token_limit: int | None) -> ModelStamp:
        """The stamp of an inspected model; its facts (quantization, shapes, KV cache, the predicted
        memory floor) at the engine's token limit."""
        return cls(
            path=str(model.path),
            sha256=model.sha256,
            size_bytes=model.size_bytes,
            modalities=tuple(model.modalities),
            max_context_tokens=model.max_context_tokens,
            sections=tuple(
                {"data_type": x.data_type, "model_type": x.model_type, "size_bytes": x.size_bytes}
                for x in model.sections
            ),
            facts=model.facts.to_json(token_limit) if model.facts else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size_bytes": self.size_bytes,
                "modalities": list(self.modalities), "max_context_tokens": self.max_context_tokens,
                "sections": [dict(s) for s in self.sections], "facts": self.facts}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> ModelStamp:
        d = _mapping(data)
        return cls(
            path=str(d.get("path", "")),
            sha256=str(d.get("sha256", "")),
            size_bytes=d.get("size_bytes"),
            modalities=tuple(d.get("modalities") or ()),
            max_context_tokens=d.get("max_context_tokens"),
            sections=tuple(s for s in d.get("sections") or () if isinstance(s, Mapping)),
            facts=d.get("facts") if isinstance(d.get("facts"), Mapping) else None,
        )


@dataclass(frozen=True)
class DatasetStamp:
    """run.json `dataset`: where it came from (a hub URL's token masked), its hash and the selection."""

    path: str = ""
    name: str = ""
    format: str = ""
    sha256: str = ""
    samples_total: int | None = None
    samples_run: int | None = None  # a device with fewer rows is partial
    sample_ids: tuple[str, ...] | None = None  # None: an older run that did not record them

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "format": self.format, "sha256": self.sha256,
                "samples_total": self.samples_total, "samples_run": self.samples_run,
                "sample_ids": None if self.sample_ids is None else list(self.sample_ids)}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> DatasetStamp:
        d = _mapping(data)
        ids = d.get("sample_ids")
        run, total = d.get("samples_run"), d.get("samples_total")
        return cls(
            path=str(d.get("path", "")),
            name=str(d.get("name", "")),
            format=str(d.get("format", "")),
            sha256=str(d.get("sha256", "")),
            samples_total=total if isinstance(total, int) else None,
            samples_run=run if isinstance(run, int) else None,
            sample_ids=tuple(str(i) for i in ids) if isinstance(ids, list) else None,
        )


@dataclass(frozen=True)
class StandIn:
    """A board that ran a phone's missing samples (fallback.py); run.json `stand_ins`."""

    phone: str
    board: str
    folder: str  # under devices/
    reason: str = ""
    sample_ids: tuple[str, ...] = ()
    completed: bool = False  # every missing sample now has a row

    def record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StandIn:
        ids = d.get("sample_ids")
        return cls(
            phone=str(d.get("phone", "")),
            board=str(d.get("board", "")),
            folder=str(d.get("folder", "")),
            reason=str(d.get("reason", "")),
            sample_ids=tuple(str(i) for i in ids) if isinstance(ids, list) else (),
            completed=bool(d.get("completed")),
        )


@dataclass(frozen=True)
class BenchStamp:
    """run.json `bench` of an `edgefarm bench` (kind "bench"): the grid as asked (BenchRequest.grid_record,
    what `bench --resume` and the history's configuration read), the engine's token limit the shapes
    were checked against, the recorded --cluster and each device's cell ids."""

    request: Mapping[str, Any] = field(default_factory=dict)
    token_limit: int | None = None
    cluster: str | None = None
    cells: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    settle: Mapping[str, Any] = field(default_factory=dict)  # --settle's flags (BenchRequest.settle_record)

    def to_dict(self) -> dict[str, Any]:
        return {"request": dict(self.request), "token_limit": self.token_limit, "cluster": self.cluster,
                "cells": {name: list(ids) for name, ids in self.cells.items()},
                **({"settle": dict(self.settle)} if self.settle else {})}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> BenchStamp:
        d = _mapping(data)
        limit, cluster = d.get("token_limit"), d.get("cluster")
        return cls(
            request=_mapping(d.get("request")),
            token_limit=limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
            cluster=cluster if isinstance(cluster, str) else None,
            cells={
                str(k): tuple(str(i) for i in v)
                for k, v in _mapping(d.get("cells")).items()
                if isinstance(v, list)
            },
            settle=_mapping(d.get("settle")),
        )


@dataclass(frozen=True)
class RunJson:
    """One run's run.json. `flags`, `host`, `versions` and the optional parts are JSON documents made
    by their own records (RunRequest.flags, HostSharing, ShardPlan, StandIn, the cluster's record)."""

    run_id: str
    started_at: str = ""
    model: ModelStamp = field(default_factory=ModelStamp)
    dataset: DatasetStamp = field(default_factory=DatasetStamp)
    devices: tuple[str, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)  # RunRequest.flags, secrets masked
    versions: Mapping[str, str] = field(default_factory=dict)  # written with the run's end
    host: Mapping[str, Any] = field(default_factory=dict)  # rundir.host_info
    unusable: tuple[Mapping[str, Any], ...] = ()  # DeviceInfo of each device not used
    notes: tuple[str, ...] = ()
    host_sharing: Any = None  # HostSharing.to_dict (a merged or older run: a list of them)
    shards: Mapping[str, Any] | None = None  # ShardPlan.record
    units: Mapping[str, Any] | None = None  # --units: group name -> its identical devices (farm/shard.py)
    stand_ins: tuple[StandIn, ...] | None = None  # the boards that stood in for phones (fallback.py)
    cluster: Mapping[str, Any] | None = None  # what crossed the network to each farm host
    finished_at: str | None = None
    device_versions: Mapping[str, Any] | None = None  # runners/stamp.py
    schema_version: int = SCHEMA_VERSION
    kind: str = "run"  # "bench": an `edgefarm bench` folder (written only then: a run's file is unchanged)
    bench: BenchStamp | None = None  # kind "bench": its grid
    outcomes: Mapping[str, Mapping[str, Any]] | None = None  # kind "bench": each device's end, in short
    conditions: RunConditions | None = None  # this host's load, each device's state (telemetry/conditions.py)
    other: Mapping[str, Any] = field(default_factory=dict)  # keys this record does not know, kept

    def flag(self, name: str) -> Any:
        """One of the run's flags (None when the run did not record it)."""
        return self.flags.get(name)

    def int_flag(self, name: str, default: int) -> int | None:
        """An integer flag: `default` when unset (None, 0), None when recorded as something else."""
        value = self.flags.get(name) or default
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def with_note(self, note: str) -> RunJson:
        return replace(self, notes=(*self.notes, note))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": self.schema_version,
            **({"kind": self.kind} if self.kind != "run" else {}),
            "run_id": self.run_id,
            "started_at": self.started_at,
            "model": self.model.to_dict(),
            "dataset": self.dataset.to_dict(),
            "devices": list(self.devices),
            "flags": dict(self.flags),
            "versions": dict(self.versions),
            "host": dict(self.host),
            "unusable": [dict(u) for u in self.unusable],
            "notes": list(self.notes),
        }
        for key in _OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = ([s.record() for s in value] if key == "stand_ins" else value.to_dict() if key in _RECORDS
                            else value)  # fmt: skip
        return {**out, **{k: v for k, v in self.other.items() if k not in out}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunJson:
        """run.json as read (rundir.read_run_json checked it is an object with a run id edgefarm makes)."""
        known = {f for f in cls.__dataclass_fields__ if f != "other"}
        stand_ins = data.get("stand_ins")
        finished = data.get("finished_at")
        schema = data.get("schema_version")
        return cls(
            run_id=str(data.get("run_id", "")),
            started_at=str(data.get("started_at", "")),
            model=ModelStamp.from_dict(data.get("model")),
            dataset=DatasetStamp.from_dict(data.get("dataset")),
            devices=tuple(str(d) for d in data.get("devices") or () if isinstance(d, (str, int))),
            flags=_mapping(data.get("flags")),
            versions=_mapping(data.get("versions")),
            host=_mapping(data.get("host")),
            unusable=tuple(u for u in data.get("unusable") or () if isinstance(u, Mapping)),
            notes=tuple(str(n) for n in data.get("notes") or ()),
            host_sharing=data.get("host_sharing"),
            shards=data.get("shards") if isinstance(data.get("shards"), Mapping) else None,
            units=data.get("units") if isinstance(data.get("units"), Mapping) else None,
            stand_ins=tuple(StandIn.from_dict(s) for s in stand_ins if isinstance(s, Mapping))
            if isinstance(stand_ins, list)
            else None,
            cluster=data.get("cluster") if isinstance(data.get("cluster"), Mapping) else None,
            finished_at=str(finished) if finished else None,
            device_versions=_mapping(data.get("device_versions")) if "device_versions" in data else None,
            schema_version=schema if isinstance(schema, int) else SCHEMA_VERSION,
            kind=str(data.get("kind") or "run"),
            bench=BenchStamp.from_dict(data["bench"]) if isinstance(data.get("bench"), Mapping) else None,
            outcomes=_mapping(data.get("outcomes")) if "outcomes" in data else None,
            conditions=RunConditions.from_dict(data.get("conditions")),
            other={k: v for k, v in data.items() if k not in known},
        )
