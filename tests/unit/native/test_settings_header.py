"""The native runner's settings keys, bounds and backend names are generated from the Python record at
build time (android_runner/native/settings_header.py -> settings_gen.h): the header a real C compiler
reads says what android_runner/settings.py says, and the C sources keep no copy of it."""

from __future__ import annotations

import re
import subprocess
from dataclasses import fields
from pathlib import Path

from android_runner.backend import BACKENDS
from android_runner.inbox import CANCEL_SUFFIX, REQUEST_SUFFIX
from android_runner.native import settings_header
from android_runner.native.build import CFLAGS, HERE
from android_runner.settings import BOUNDS, HEADER, MAX_BYTES, OPTIONAL, RunnerSettings

PRINT_ALL = r"""
#include <stdio.h>
#include "settings_gen.h"
int main(void) {
  printf("header %s\nmax_bytes %d\n", SETTINGS_HEADER, SETTINGS_MAX_BYTES);
  for (size_t k = 0; k < SETTING_COUNT; k++) printf("key %s\n", SETTING_KEYS[k]);
  for (size_t i = 0; i < BACKEND_COUNT; i++) printf("backend %s %d\n", BACKEND_NAMES[i], is_backend(BACKEND_NAMES[i]));
  printf("backend tpu %d\n", is_backend("tpu"));
  printf("serve %s %s\n", REQUEST_SUFFIX, CANCEL_SUFFIX);
%s
  return 0;
}
"""


def test_the_generated_header_compiled_says_what_the_python_record_says(tmp_path: Path, cc: str):
    settings_header.write(tmp_path)
    bounds = "\n".join(
        f'  printf("bound {k} %ld %ld %d\\n", {m}_LEAST, {m}_MOST, {m}_OPTIONAL);'
        for k in BOUNDS
        if (m := settings_header.macro(k))
    )
    (tmp_path / "print.c").write_text(PRINT_ALL.replace("%s\n  return", bounds + "\n  return", 1))
    argv = [
        cc,
        *CFLAGS,
        "-Werror",
        "-I",
        str(tmp_path),
        "-o",
        str(tmp_path / "print"),
        str(tmp_path / "print.c"),
    ]
    built = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    said = subprocess.run(
        [str(tmp_path / "print")], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert said[:2] == [f"header {HEADER}", f"max_bytes {MAX_BYTES}"]
    assert [x[4:] for x in said if x.startswith("key ")] == [f.name for f in fields(RunnerSettings)]
    assert [x for x in said if x.startswith("backend ")] == [f"backend {b} 1" for b in BACKENDS] + [
        "backend tpu 0"
    ]
    assert [x for x in said if x.startswith("serve ")] == [f"serve {REQUEST_SUFFIX} {CANCEL_SUFFIX}"]
    assert [x for x in said if x.startswith("bound ")] == [
        f"bound {k} {lo} {hi} {int(k in OPTIONAL)}" for k, (lo, hi) in BOUNDS.items()
    ]


def test_a_bound_changed_in_python_is_the_headers_at_the_next_build(monkeypatch):
    monkeypatch.setitem(BOUNDS, "threads", (0, 64))
    monkeypatch.setattr(settings_header, "BOUNDS", BOUNDS)
    text = settings_header.render()
    assert "#define SETTING_THREADS_MOST 64L" in text and '#define SETTING_THREADS_RANGE "0..64"' in text


def test_the_c_sources_hold_no_copy_of_the_bounds_keys_or_backend_names():
    sources = {p.name: p.read_text(encoding="utf-8") for p in (HERE / "edgefarm_runner.c", HERE / "job.c")}
    for name, text in sources.items():
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
        for backend in BACKENDS:
            assert f'"{backend}"' not in code, f"{name} names the backend {backend!r}: use is_backend()"
        assert "EFSETTINGS" not in code, name
        for suffix in (REQUEST_SUFFIX, CANCEL_SUFFIX):  # the serve folder's names: inbox.py's
            assert f'"{suffix}' not in code and f'{suffix}"' not in code, f"{name} spells {suffix!r}"
        read_here = (
            BOUNDS if name == "edgefarm_runner.c" else {"threads": BOUNDS["threads"]}
        )  # job.c: bench's
        for key, (least, most) in read_here.items():  # a bound as the old code wrote it: `least, most`
            assert not re.search(rf"\b{least}L?\s*,\s*{most}L?\b", code), f"{name} holds {key}'s bound"
        for f in fields(RunnerSettings):
            assert f'"{f.name}"' not in code, f"{name} spells the key {f.name!r}: SETTING_KEYS has it"
