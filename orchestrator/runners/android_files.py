"""A run's files off the phone in ONE shell call: the runner's records and every sample's small files.

Each file that exists is printed after a random marker line naming it. The per-sample files (the hook's
battery, thermal and clock snapshots: 7 per sample) are read by the shell itself (`$(<file)`, which mksh,
Android's /system/bin/sh, reads without starting a process): with `cat` the end of a 40-sample run
started 280 processes on the phone (0.37 s of CPU on this host, mksh and coreutils; a phone's toybox
costs about the same per process) and, in the device lab, 280 sandboxed processes per phone at once.
The runner's own records (results, log, loads) keep `cat`: a few files, possibly large, passed byte
for byte; a per-sample file comes back with its trailing newlines cut to one (all the parsers of
snapshots and the upstream binary's kept traces read lines).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import PurePosixPath

from ..devices.base import Device

# $1 marker, $2 folder, then the top files, `--`, the per-sample file names
_SCRIPT = (
    'm=$1; d=$2; shift 2; while [ $# -gt 0 ] && [ "$1" != -- ]; do '
    '[ -f "$d/$1" ] && { echo "$m $1"; cat "$d/$1"; echo; }; shift; done; shift; '
    'for s in "$d"/samples/*; do n=${s##*/}; for f in "$@"; do '
    '[ -f "$s/$f" ] && { x=$(<"$s/$f"); echo "$m samples/$n/$f"; print -r -- "$x"; echo; }; done; done; true'
)


def new_marker() -> str:
    """A line no file holds by chance: it names the file whose text follows (`marked_files`)."""
    return f"@@EDGEFARM-{secrets.token_hex(8)}@@"


def read_phone_files(
    device: Device, folder: PurePosixPath, top: Sequence[str], per_sample: Sequence[str], timeout_s: float = 120
) -> dict[str, str]:
    """{relative path: text} of `folder`'s `top` files and `folder/samples/*/<per_sample>` that exist.
    A file's text has its trailing newline dropped (an empty file is "")."""
    marker = new_marker()
    lines: list[str] = []
    device.run(["sh", "-c", _SCRIPT, "sh", marker, str(folder), *top, "--", *per_sample],
               timeout_s=timeout_s, on_line=lines.append)  # fmt: skip
    return marked_files(lines, marker)


def marked_files(lines: Sequence[str], marker: str) -> dict[str, str]:
    """Split a shell's output of `echo "MARKER NAME"; <the file>; echo` blocks into {NAME: text}."""
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    for text in lines:
        if text.startswith(marker + " "):
            current = files.setdefault(text[len(marker) + 1 :], [])
        elif current is not None:
            current.append(text)
    return {k: "\n".join(v[:-1] if v and v[-1] == "" else v) for k, v in files.items()}
