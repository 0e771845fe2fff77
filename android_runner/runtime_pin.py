"""The LiteRT-LM runtime every runner is held to: its distribution, its library's file name and the one
version edgefarm pins (pyproject.toml's `litert-lm-api==`). The native build, the Python runner, board
setup and the host's pre-run checks read it here. No imports: a run's start-up reads these three names
without paying for the build's modules (zipfile, importlib.metadata; docs/testing.md)."""

RUNTIME_DIST = "litert-lm-api"
RUNTIME_LIB = "liblitert-lm.so"
PINNED_VERSION = "0.18.1"  # the runner refuses any other library (edgefarm_runner.c check_runtime)
PINNED_REQUIREMENT = f"{RUNTIME_DIST}=={PINNED_VERSION}"
