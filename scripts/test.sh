#!/usr/bin/env bash
# The whole test suite on a fresh machine: system packages the lab tests need, the project in
# .venv with its test extras, then pytest. README.md and .ci/run both call this.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v bwrap >/dev/null || need+=(bubblewrap)      # sandbox standing in for a phone's filesystem
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || need+=(openssh-server)  # loopback "board"
command -v rsync >/dev/null || need+=(rsync)
command -v chromium >/dev/null || need+=(chromium)      # renders report.html in the report test (Playwright drives it)
command -v mksh >/dev/null || need+=(mksh)              # the lab phones' /system/bin/sh (Android's shell)
command -v toybox >/dev/null || need+=(toybox)          # ... and their coreutils (Android's toybox)
command -v cc >/dev/null || need+=(gcc)                 # builds the native phone runner for the lab
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)  # ... and for aarch64 (qemu-user)
command -v ip >/dev/null || need+=(iproute2)            # the Ray lab cluster's private network namespace
command -v qemu-aarch64-static >/dev/null || need+=(qemu-user-static)  # the aarch64 lab board (Pi userland)
command -v pg_ctl >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || need+=(postgresql)  # history's shared DB (tests/lab/history)
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)  # its arm64 .debs
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}"
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# --no-compile: no .pyc for all of Ray's files up front (half the install's time); Python compiles what
# the tests import, once.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-compile -e '.[test,cluster]'  # cluster: Ray, for tests/lab/cluster

# Four pytest-xdist workers on the 2 cores: the suite waits on subprocesses, phones and Ray far more
# than it computes. loadgroup keeps each lab's expensive fixture on one worker (tests/conftest.py);
# `-n 0` after it runs serially. docs/testing.md.
# --durations 25: CI's log names where the minutes went (docs/testing.md keeps the table).
# pytest exits 5 when it collected no test: with `set -e` that fails the script, as it should.
exec .venv/bin/python -m pytest -q -n 4 --dist loadgroup --no-loadscope-reorder --durations 25 "$@"
