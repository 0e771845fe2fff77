"""Host sides of the on-device runners, by name (a device says which one drives it).

Each adapter's module is imported when a device first asks for it: `edgefarm run --devices local`
never loads the phone driver's code, and a phone-only farm never loads the Python runner's.
"""

from collections.abc import Callable, Sequence

from ..devices.base import Device
from ..models import ModelSummary
from .base import RUNNERS, RunnerAdapter, RunnerEvents, RunOptions, Staged


def _python(device):
    from .python_runner import PythonRunner

    return PythonRunner(device.python)


def _android(device):
    from .android_driver import AndroidRunner

    return AndroidRunner(device)


RUNNERS.add("python", _python)
RUNNERS.add("android", _android)


def prestart_runners(
    devices: Sequence[Device], model: ModelSummary, options: Callable[[Device], RunOptions]
) -> None:
    """Start the runners that can load their engine before the job exists (this host's Python runner),
    so the engine loads while the host still imports, loads the dataset and prepares the run; the
    device's session then hands its runner the job. Runners that cannot are started as usual, and
    devices that cannot start a command now and feed it later (phones, boards) are not asked."""
    for device in devices:
        if getattr(device, "start", None) is None:
            continue
        adapter = RUNNERS.get(device.runner)(device)
        prestart = getattr(adapter, "prestart", None)
        if prestart is not None:
            prestart(device, model, options(device))


def discard_prestarted() -> None:
    """End the runners started early that no session took (the run ended before they were needed)."""
    import sys

    module = sys.modules.get(f"{__name__}.python_runner")  # loaded only if a Python runner was asked for
    if module is not None:
        module.discard_early_runners()


__all__ = [
    "RUNNERS",
    "RunOptions",
    "RunnerAdapter",
    "RunnerEvents",
    "Staged",
    "discard_prestarted",
    "prestart_runners",
]
