"""What a run needs on a device and whether it is there: the checks `edgefarm doctor` prints and
`edgefarm run` applies before anything starts (a device failing a blocking check is not started).

Each check says what was found and, when it fails, the fix. Blocking checks keep a device out of a
run (no runner for its ABI, not the pinned runtime library, not enough storage or memory, not
authorized); the others flag figures and let it run (external power: energy is not trusted;
throttling: speeds are not the phone's cool ones). The device-kind checks (runner, runtime, storage)
come from the device's runner (`RunnerAdapter.checks`), the state checks from its DeviceInfo here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..datasets.types import Sample
from ..devices.base import Device
from ..devices.kinds import kind_spec
from ..devices.types import DeviceInfo, clip
from ..errors import EdgefarmError
from ..inventory import Selection, probe_all
from ..models import ModelSummary
from ..telemetry.android import THERMAL_STATUS_NAMES
from .base import RUNNERS, Check, Need

THROTTLED_FROM = THERMAL_STATUS_NAMES.index("moderate")  # Android's thermal status at which clocks drop
FIX_POWER = ("for energy figures run the phone on its battery: adb over Wi-Fi with the cable unplugged "
             "(docs/energy.md, 'Measure unplugged'); every other figure is unaffected")  # fmt: skip
FIX_THERMAL = "let the phone cool before the run, or run with --cooldown-c 35 (waits before each sample)"


@dataclass(frozen=True)
class Readiness:
    """A device's checks; `ready` when no blocking check failed."""

    info: DeviceInfo
    checks: tuple[Check, ...]

    @property
    def ready(self) -> bool:
        return all(c.ok or not c.blocks for c in self.checks)

    @property
    def problem(self) -> str:
        """The blocking failures in one line, each with its fix ("" when ready)."""
        return "; ".join(f"{c.need}: {c.line}" for c in self.checks if c.blocks and not c.ok)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.info.name, "kind": self.info.kind, "serial": self.info.serial, "abi": self.info.abi,
                "ready": self.ready, "checks": [asdict(c) for c in self.checks]}  # fmt: skip


def state_checks(info: DeviceInfo) -> tuple[Check, ...]:
    """Authorization (a phone's adb state), external power and thermal state, from the device's info."""
    if info.state != "device":
        need = {"unauthorized": "authorization", "needs setup": "runtime"}.get(info.state, "reachable")
        return (Check(need, False, f"{info.state}: {info.problem}" if info.problem else info.state),)
    phone = kind_spec(info.kind).phone  # a phone authorizes this host and says what powers it
    out = [Check("authorization" if phone else "reachable", True, "answers")]
    extra = info.extra
    if phone:
        external = extra.get("external_power") or ("charging" if extra.get("charging") else "")
        out.append(
            Check(
                "power",
                False,
                f"on external power ({external}): energy figures will be flagged",
                FIX_POWER,
                False,
            )
            if external
            else Check("power", True, "on battery: energy figures can be trusted", blocks=False)
        )
    status = extra.get("thermal_status")
    if status in THERMAL_STATUS_NAMES:
        hot = THERMAL_STATUS_NAMES.index(status) >= THROTTLED_FROM
        temp = extra.get("battery_temp_c") or extra.get("max_temp_c")
        found = f"thermal status {status}" + (f", {temp:g} °C" if isinstance(temp, (int, float)) else "")
        out.append(Check("thermal", not hot, found + (": throttling" if hot else ""), FIX_THERMAL, False))
    return tuple(out)


def assess(device: Device, info: DeviceInfo, need: Need, env: Mapping[str, str]) -> Readiness:
    """Every check of one device that answered (its info read): state, then its runner's own."""
    checks = state_checks(info)
    if all(c.ok for c in checks if c.blocks):
        try:
            checks += RUNNERS.get(kind_spec(device.kind).runner)(device).checks(info, need, env)
        except EdgefarmError as e:  # it stopped answering between its info and a check's device call
            checks += (Check("reachable", False, e.what, e.fix),)
    return Readiness(info, checks)


def unreachable(info: DeviceInfo) -> Readiness:
    """A device found but not usable (unauthorized, offline, a board that is down): its one failed check."""
    return Readiness(info, state_checks(info))


def assess_all(devices: Sequence[Device], need: Need, env: Mapping[str, str]) -> list[Readiness]:
    """Every device's readiness: its info (asked of all devices in parallel), then its runner's checks."""
    infos = probe_all(devices)
    return [
        assess(d, i, need, env) if i.state == "device" else unreachable(i) for d, i in zip(devices, infos)
    ]


def run_need(model: ModelSummary, samples: Sequence[Sample], max_num_tokens: int | None = None) -> Need:
    """What a run of these samples puts on a device: the model, every media file once, the model's
    memory floor at the run's token limit."""
    media = {p.path for s in samples for p in s.media if p.path}
    floor = model.facts.floor_bytes(max_num_tokens or model.max_context_tokens) if model.facts else None
    return Need(model_bytes=model.size_bytes, media_bytes=sum(Path(p).stat().st_size for p in media),
                floor_bytes=floor, model_sha256=model.sha256, model_name=model.path.name)  # fmt: skip


def refuse_unready(sel: Selection, need: Need, env: Mapping[str, str]) -> Selection:
    """The selection without the devices that cannot run (a blocking check failed), checked here."""
    infos = list(sel.infos) if sel.infos else probe_all(sel.devices)
    verdicts = [assess(d, i, need, env) if i.state == "device" else unreachable(i) for d, i in zip(sel.devices, infos, strict=True)]  # fmt: skip
    return refuse(sel, verdicts)


def refuse(sel: Selection, verdicts: Sequence[Readiness]) -> Selection:
    """The selection without the devices whose verdict (one per device, in order; made here or by a
    farm host's agent) failed a blocking check: those move to `unusable` (state "not ready", the
    failed checks and their fixes as the problem), so the run says why they did not start and the
    others go on. A device named on purpose that does not answer stays: it runs, and its failure is
    its outcome."""
    keep: list[tuple[Device, DeviceInfo]] = []
    refused: list[DeviceInfo] = []
    for device, verdict in zip(sel.devices, verdicts, strict=True):
        if verdict.ready or verdict.info.state != "device":
            keep.append((device, verdict.info))
        else:
            refused.append(replace(verdict.info, state="not ready", problem=clip(verdict.problem, 2000)))
    return Selection(
        tuple(d for d, _ in keep),
        sel.unusable + tuple(refused),
        sel.notes,
        tuple(i for _, i in keep) if sel.infos else (),
    )
