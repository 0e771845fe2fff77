"""Host sides of the on-device runners, by name (a device says which one drives it)."""

from .android_driver import AndroidRunner
from .base import RUNNERS, RunnerAdapter, RunnerEvents, RunOptions, Staged
from .python_runner import PythonRunner

RUNNERS.add("python", lambda device: PythonRunner(device.python))
RUNNERS.add("android", AndroidRunner)

__all__ = ["RUNNERS", "RunOptions", "RunnerAdapter", "RunnerEvents", "Staged"]
