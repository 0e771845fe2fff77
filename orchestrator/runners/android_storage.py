"""A phone whose storage fills during a run. The runner and the driver check their writes on the phone
and say a refused one in a NOTE (the native runner with the system's words, "No space left on device";
driver.sh with "(storage full?)"), naming the sample where they can. The first such note stops the
device: the samples finished before it are kept, the one it names and the rest are not recorded (their
files on the phone may be cut short), and the device's outcome says which phone, what is full and the
fix; `edgefarm run --resume` runs them once space is freed (docs/reliability.md)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import PurePosixPath

from ..errors import DeviceError

REFUSED_WORDS = ("No space left on device", "(storage full?)")
_SAMPLE = re.compile(r"\bsample (\d+)\b")


def refused_write(note: str) -> bool:
    """Does this runner/driver NOTE say the phone's storage refused a write?"""
    return any(w in note for w in REFUSED_WORDS)


def refused_sample(note: str) -> int | None:
    """The sample a refused-write note names (its number in the job), if it names one."""
    m = _SAMPLE.search(note)
    return int(m.group(1)) if m else None


class Halt:
    """What ends the driver's stream early: the run's stop (Ctrl-C) or the phone's storage refusing a
    write (`full`). Read through `is_set`, as the device's `run(cancel=...)` reads an event."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.full = threading.Event()

    def is_set(self) -> bool:
        return self.stop.is_set() or self.full.is_set()


def keep_recorded(device, record: PurePosixPath, text: str, kept: Callable[[int], bool]) -> None:
    """Cut the upstream driver's `done.tsv` (`text`: its lines, "N<TAB>rc<TAB>wall_ms") back to its first
    lines whose sample `kept` accepts. After a refused write the driver can still append a sample's
    line (a short line fits the file's last page where a new file does not) before the host stops it;
    that sample's stdout may be cut short, and `--resume` would take it as done and skip it. `truncate`
    frees space instead of needing it; where it fails the record goes (a resume then runs the kept
    samples again on the phone, and the host, which has their rows, records none of them twice)."""
    size = 0
    for line in text.split("\n") if text else []:
        number = line.partition("\t")[0]
        if not (line.isascii() and number.isdigit() and kept(int(number))):
            break
        size += len(line) + 1
    else:
        return
    if device.run(["truncate", "-s", str(size), str(record)], timeout_s=30).code != 0:
        device.run(["rm", "-f", str(record)], timeout_s=30)


def free_kb(device, folder: PurePosixPath) -> int | None:
    """The free space (KiB) of the file system holding `folder` on the phone (`df -k`), None when
    unreadable."""
    lines: list[str] = []
    device.run(["df", "-k", str(folder)], timeout_s=30, on_line=lines.append)
    cells = lines[-1].split() if len(lines) >= 2 else []
    return int(cells[3]) if len(cells) >= 4 and cells[3].isdigit() else None


def storage_full(device, folder: PurePosixPath, note: str) -> DeviceError:
    """The device's outcome when its storage refused a write of the run."""
    free = free_kb(device, folder)
    left = f"; {free} KiB free there now" if free is not None else ""
    serial = getattr(device, "serial", "") or "SERIAL"
    return DeviceError(
        f"the phone's storage is full: it refused a write of the run in {folder} ({note}){left}. The samples "
        "finished before it are kept; the rest did not run",
        where=device.name,
        fix=f"free space on the phone's /data (`adb -s {serial} shell df -h /data` shows it; delete files or "
        "uninstall apps there), then `edgefarm run --resume` with the run's folder runs the rest",
    )
