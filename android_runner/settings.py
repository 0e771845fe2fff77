"""The run's settings for one device's runner: ONE record, rendered ONCE into the job folder's `settings`
file, which every runner reads (the native phone runner, the phone driver for the hook's cooldown gate and
for the upstream binary's flags, the Python runner on boards and this host). Stdlib only: it runs on devices.

The file is plain `key=value` lines under a header, so POSIX sh (driver.sh), C (android_runner/native/
edgefarm_runner.c, `read_settings`) and Python read the same text without a JSON parser:

    EFSETTINGS 1
    model=/data/local/tmp/edgefarm/models/0123abcd/m.litertlm
    ...
    cooldown_mc=            (empty: no cooldown gate)
    settle_mc=2000          (empty: no settle gate)

Every key is written, in the order of the fields below, every value on its own line; whole numbers only
(sh arithmetic is integer), so times are milliseconds and temperatures milli-degrees C. A reader refuses a
missing, repeated or unknown key and a value outside its bound (`SettingsError`, naming the line).
Per-sample values (the output cap, the sampler, --fidelity) are the job's, not settings: each sample
carries its own in the job file.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from .backend import BACKENDS

SETTINGS_FILE = "settings"  # in the job folder, beside the job
HEADER = "EFSETTINGS 1"
MAX_BYTES = 64 * 1024  # the whole file: a few paths and numbers
MAX_PATH_BYTES = 4095  # the native runner's path buffers (PATH_MAX less its NUL)
# (least, most) of each whole-number setting: the command line's own bounds (orchestrator/run/bounds.py)
BOUNDS = {
    "threads": (0, 256),  # 0: the runtime's default
    "max_num_tokens": (0, 10_000_000),  # 0: the model's
    "sample_timeout_ms": (1, 86_400_000),  # one day
    "cooldown_mc": (0, 120_000),  # 120 degrees C
    "cooldown_max_ms": (0, 3_600_000),  # one hour
    "settle_mc": (100, 20_000),  # 0.1 .. 20 degrees C of change over the window
    "settle_window_ms": (1_000, 600_000),  # 1 s .. 10 min
    "settle_max_ms": (1_000, 3_600_000),  # one hour
    "allow_runtime": (0, 1),
}


OPTIONAL = frozenset(("cooldown_mc", "settle_mc"))  # empty in the file: that gate is off


class SettingsError(ValueError):
    """A settings file (or record) that is not one this version writes; the message names the line/key."""


@dataclass(frozen=True)
class RunnerSettings:
    """What the host decided for one device's runner; the field names are the file's keys."""

    model: str  # the model on the device
    cache_dir: str  # the runtime's cache folder on the device
    backend: str = "cpu"  # cpu | gpu | npu
    vision_backend: str = ""  # "" when the model has no vision encoder
    audio_backend: str = ""  # "" when the model has no audio encoder
    threads: int = 0  # CPU threads, 0: the runtime's default
    max_num_tokens: int = 0  # the runtime's token limit (KV cache), 0: the model's
    sample_timeout_ms: int = 300_000  # a sample running longer is recorded as timeout
    cooldown_mc: int | None = None  # before each sample, wait until the device is at or below this
    cooldown_max_ms: int = 120_000  # ... for at most this long
    # --settle: before the block's first sample, wait until every temperature sensor changed less than
    # settle_mc over the last settle_window_ms, for at most settle_max_ms (docs/conditions.md)
    settle_mc: int | None = None
    settle_window_ms: int = 60_000
    settle_max_ms: int = 600_000
    lib: str = ""  # the native runner's LiteRT-LM library on the device ("" for other runners)
    allow_runtime: int = 0  # 1: the native runner runs a library that is not the pinned one

    def __post_init__(self) -> None:
        for name in ("model", "cache_dir", "lib"):
            value = getattr(self, name)
            if not isinstance(value, str) or "\n" in value or "\0" in value:
                raise SettingsError(f"{name}: a path on one line without NUL, not {value!r}")
            if len(value.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
                raise SettingsError(f"{name}: a path of at most {MAX_PATH_BYTES} bytes")
        if not self.model or not self.cache_dir:
            raise SettingsError("model and cache_dir: required, not empty")
        if self.backend not in BACKENDS:
            raise SettingsError(f"backend: one of {', '.join(BACKENDS)}, not {self.backend!r}")
        for name in ("vision_backend", "audio_backend"):
            if getattr(self, name) not in ("", *BACKENDS):
                raise SettingsError(
                    f"{name}: empty or one of {', '.join(BACKENDS)}, not {getattr(self, name)!r}"
                )
        for name, (least, most) in BOUNDS.items():
            value = getattr(self, name)
            if value is None and name in OPTIONAL:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
                raise SettingsError(f"{name}: a whole number in {least}..{most}, not {value!r}")

    # ------------------------------------------------------------ the one rendering and its reader

    def render(self) -> str:
        """The settings file's text: the header, then every key in field order."""
        lines = [HEADER]
        for f in fields(self):
            value = getattr(self, f.name)
            lines.append(f"{f.name}={'' if value is None else value}")
        return "\n".join(lines) + "\n"

    @classmethod
    def parse(cls, text: str, where: str = SETTINGS_FILE) -> RunnerSettings:
        """The record back from `render`'s text; SettingsError naming `where` and the line otherwise."""
        if len(text.encode("utf-8", "surrogateescape")) > MAX_BYTES:
            raise SettingsError(f"{where}: over {MAX_BYTES} bytes")
        lines = text.split("\n")
        if lines[0] != HEADER:
            raise SettingsError(f"{where}:1: not an edgefarm settings file (no {HEADER!r} header)")
        if lines[-1] != "":
            raise SettingsError(f"{where}:{len(lines)}: the last line has no newline")
        kinds = {f.name: f.type for f in fields(cls)}
        values: dict[str, object] = {}
        for no, line in enumerate(lines[1:-1], 2):
            key, eq, raw = line.partition("=")
            if not eq or key not in kinds:
                raise SettingsError(f"{where}:{no}: unknown key {key!r} (known: {', '.join(kinds)})")
            if key in values:
                raise SettingsError(f"{where}:{no}: {key} given twice")
            if key in BOUNDS:
                if raw == "" and key in OPTIONAL:
                    values[key] = None
                    continue
                if not raw.isascii() or not raw.isdigit() or len(raw) > 12:
                    raise SettingsError(f"{where}:{no}: {key}: a whole number, not {raw!r}")
                values[key] = int(raw)
            else:
                values[key] = raw
        missing = [k for k in kinds if k not in values]
        if missing:
            raise SettingsError(f"{where}: missing {', '.join(missing)}")
        try:
            return cls(**values)  # type: ignore[arg-type]
        except SettingsError as e:
            raise SettingsError(f"{where}: {e}") from None

    # ------------------------------------------------------------ in the units the Python runner uses

    @property
    def sample_timeout_s(self) -> float:
        return self.sample_timeout_ms / 1000.0

    @property
    def cooldown_c(self) -> float | None:
        return None if self.cooldown_mc is None else self.cooldown_mc / 1000.0

    @property
    def cooldown_max_s(self) -> float:
        return self.cooldown_max_ms / 1000.0

    @property
    def settle_c(self) -> float | None:
        return None if self.settle_mc is None else self.settle_mc / 1000.0

    def applied(self) -> dict[str, object]:
        """What a runner reports in its READY line as the settings it ran with (the native runner's keys)."""
        return {
            "backend": self.backend,
            "threads": self.threads,
            "max_num_tokens": self.max_num_tokens,
            "sample_timeout_ms": self.sample_timeout_ms,
        }
