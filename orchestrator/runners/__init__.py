"""Host sides of the on-device runners, by name (a device says which one drives it).

Each adapter's module is imported when a device first asks for it: `edgefarm run --devices local`
never loads the phone driver's code, and a phone-only farm never loads the Python runner's.
"""

from .base import RUNNERS, RunnerAdapter, RunnerEvents, RunOptions, Staged


def _python(device):
    from .python_runner import PythonRunner

    return PythonRunner(device.python)


def _android(device):
    from .android_driver import AndroidRunner

    return AndroidRunner(device)


RUNNERS.add("python", _python)
RUNNERS.add("android", _android)

__all__ = ["RUNNERS", "RunOptions", "RunnerAdapter", "RunnerEvents", "Staged"]
