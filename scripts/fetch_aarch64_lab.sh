#!/usr/bin/env bash
# Pre-fetch the aarch64 lab board into the cache (~/.cache/edgefarm-lab, or $EDGEFARM_LAB_CACHE): Debian
# arm64 .debs (python3.11 from bookworm, python3.9 from bullseye) unpacked into rootfs folders, and the
# manylinux_2_27_aarch64 wheel of litert-lm-api. The lab tests build the same on first use; run this
# ahead (e.g. in a CI cache step) so tests need no network. Needs qemu-user-static (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python; [ -x "$PY" ] || PY=python3
exec "$PY" -m tests.lab.ssh.aarch64 "$@"
