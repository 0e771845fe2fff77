"""The native runner's view of the settings file, generated from the Python record at build time.

The settings' keys (RunnerSettings' fields, in the file's order), each whole number's bound (BOUNDS),
which may be empty (OPTIONAL), the header line, the size bounds (android_runner/settings.py), the
backend names (android_runner/backend.py BACKENDS) and the serve folder's file names (android_runner/inbox.py:
<n>.job, <n>.cancel) have one home, in Python. build.py writes this
module's `render()` as `settings_gen.h` into the build's own folder (never the source tree) and
compiles the runner with it on the include path, so edgefarm_runner.c and job.c hold no copy of them:
a bound changed in settings.py is the runner's bound at its next build.
Host-side only (never copied to a device).
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from android_runner.backend import BACKENDS
from android_runner.inbox import CANCEL_SUFFIX, REQUEST_SUFFIX
from android_runner.settings import BOUNDS, HEADER, MAX_BYTES, MAX_PATH_BYTES, OPTIONAL, RunnerSettings

HEADER_FILE = "settings_gen.h"
_IDENT = re.compile(r"[a-z][a-z0-9_]*\Z")


def macro(key: str) -> str:
    """The C name of a settings key (`max_num_tokens` -> `SETTING_MAX_NUM_TOKENS`)."""
    if not _IDENT.match(key):
        raise ValueError(f"settings key {key!r} is not a C identifier's part")
    return f"SETTING_{key.upper()}"


def _c_string(text: str) -> str:
    if any(c in text for c in '"\\\n') or not text.isascii():
        raise ValueError(f"{text!r} would need escaping in C")
    return f'"{text}"'


def render() -> str:
    """settings_gen.h's text (pure, deterministic)."""
    keys = [f.name for f in fields(RunnerSettings)]
    unknown = sorted(set(BOUNDS) - set(keys))
    if unknown:
        raise ValueError(f"BOUNDS names keys RunnerSettings lacks: {unknown}")
    out = [
        "/* settings_gen.h: GENERATED at build time by android_runner/native/settings_header.py from",
        " * android_runner/settings.py (RunnerSettings, BOUNDS, OPTIONAL) and android_runner/backend.py",
        " * (BACKENDS) and android_runner/inbox.py (the serve folder's names). Do not edit: change the Python",
        " * record and rebuild. */",
        "#ifndef EDGEFARM_SETTINGS_GEN_H",
        "#define EDGEFARM_SETTINGS_GEN_H",
        "",
        "#include <stddef.h>",
        "#include <string.h>",
        "",
        f"#define SETTINGS_HEADER {_c_string(HEADER)}",
        f"#define SETTINGS_MAX_BYTES {MAX_BYTES}",
        f"#define SETTINGS_MAX_PATH_BYTES {MAX_PATH_BYTES}",
        "",
        "/* the file's keys, in the order the host writes them */",
        "enum setting_key {",
        *(f"  {macro(k)} = {i}," for i, k in enumerate(keys)),
        f"  SETTING_COUNT = {len(keys)}",
        "};",
        "static const char *const SETTING_KEYS[SETTING_COUNT] = {",
        *(f"  {_c_string(k)}," for k in keys),
        "};",
        "",
        "/* each whole number's bound, least..most; OPTIONAL: an empty value turns its gate off */",
    ]
    for key, (least, most) in BOUNDS.items():
        out += [
            f"#define {macro(key)}_LEAST {least}L",
            f"#define {macro(key)}_MOST {most}L",
            f"#define {macro(key)}_RANGE {_c_string(f'{least}..{most}')}",
            f"#define {macro(key)}_OPTIONAL {int(key in OPTIONAL)}",
        ]
    out += [
        "",
        "/* the backends a setting (and a bench line) may name */",
        f"#define BACKEND_COUNT {len(BACKENDS)}",
        "static const char *const BACKEND_NAMES[BACKEND_COUNT] = {"
        + ", ".join(_c_string(b) for b in BACKENDS)
        + "};",
        f"#define BACKENDS_TEXT {_c_string(', '.join(BACKENDS[:-1]) + ' or ' + BACKENDS[-1])}",
        f"#define BACKENDS_BAR {_c_string('|'.join(BACKENDS))}",
        "static inline int is_backend(const char *v) {",
        "  for (size_t i = 0; i < BACKEND_COUNT; i++)",
        "    if (strcmp(v, BACKEND_NAMES[i]) == 0) return 1;",
        "  return 0;",
        "}",
        "",
        "/* `--serve DIR`: a request's file DIR/<n>.job, its cancel mark DIR/<n>.cancel */",
        f"#define REQUEST_SUFFIX {_c_string(REQUEST_SUFFIX)}",
        f"#define CANCEL_SUFFIX {_c_string(CANCEL_SUFFIX)}",
        "",
        "#endif",
    ]
    return "\n".join(out) + "\n"


def write(folder: Path) -> Path:
    """settings_gen.h in `folder` (a build's own folder, put on the include path with -I)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / HEADER_FILE
    text = render()
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
