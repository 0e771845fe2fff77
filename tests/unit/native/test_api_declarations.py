"""The runner's own C API declarations (litert_lm_c_api.h) against the pinned library's exported symbols
(always) and against an upstream c/engine.h (a differing signature or enum value must stop the build)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from android_runner.native.build import (
    API_HEADER,
    BuildError,
    check_against_upstream,
    check_exports,
    declared_functions,
    installed_runtime_lib,
    missing_functions,
    upstream_header,
)

CC = shutil.which("gcc") or shutil.which("cc") or "cc"
OURS = API_HEADER.read_text(encoding="utf-8")


def _upstream_like(tmp_path: Path, edit=lambda text: text) -> Path:
    """An engine.h shaped as upstream's (its include guard, its type names) made from our declarations,
    then `edit`ed: the stand-in for a checkout of another LiteRT-LM version."""
    types = OURS[OURS.index("#ifndef THIRD_PARTY") : OURS.index("#ifdef __cplusplus")]
    types = types.replace("#ifndef THIRD_PARTY_ODML_LITERT_LM_C_ENGINE_H_", "").replace("#endif", "", 1)
    decls = OURS[OURS.index("#ifdef __cplusplus") :]
    macros = OURS[OURS.index("#define EF_SAMPLER_TYPES") : OURS.index("#ifndef THIRD_PARTY")]
    text = (
        "#ifndef THIRD_PARTY_ODML_LITERT_LM_C_ENGINE_H_\n#define THIRD_PARTY_ODML_LITERT_LM_C_ENGINE_H_\n"
        "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
        + macros.replace("EF_", "UP_")
        + types.replace("EF_", "UP_")
        + decls.replace("#endif /* EDGEFARM_LITERT_LM_C_API_H_ */", "")
        + "#endif\n"
    )
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "engine.h").write_text(edit(text))
    return folder / "engine.h"


def test_every_part_calls_the_runtime_through_the_one_table_and_the_header_declares_it() -> None:
    folder = API_HEADER.parent
    table = re.findall(
        r"^\s*X\((litert_lm_\w+),", (folder / "api.h").read_text(encoding="utf-8"), re.MULTILINE
    )
    assert len(table) == len(set(table)) > 60  # each function once
    assert set(table) <= set(declared_functions(OURS))
    for part in ("edgefarm_runner.c", "bench.c", "fidelity.c", "stream.c"):
        called = set(re.findall(r"\bapi\.(litert_lm_\w+)", (folder / part).read_text(encoding="utf-8")))
        assert called and called <= set(table), (part, called - set(table))
    # no second table: only api.c resolves a function by name
    resolving = [p.name for p in folder.glob("*.c") if "dlsym(" in p.read_text(encoding="utf-8")]
    assert resolving == ["api.c"]


def test_the_pinned_library_exports_every_declared_function() -> None:
    lib = installed_runtime_lib()
    assert check_exports(lib) == len(declared_functions(OURS)) > 30
    assert missing_functions(lib, ("litert_lm_engine_create", "litert_lm_no_such_function")) == [
        "litert_lm_no_such_function"
    ]


def test_a_function_the_library_lacks_stops_the_build(tmp_path: Path) -> None:
    header = tmp_path / "more.h"
    header.write_text(
        OURS.replace("#ifdef __cplusplus\n}", "void litert_lm_no_such_function(void);\n#ifdef __cplusplus\n}")
    )
    with pytest.raises(BuildError, match="litert_lm_no_such_function"):
        check_exports(installed_runtime_lib(), header)


def test_a_matching_upstream_header_compiles(tmp_path: Path) -> None:
    check_against_upstream(CC, _upstream_like(tmp_path))


def test_a_different_signature_upstream_is_a_compile_error(tmp_path: Path) -> None:
    header = _upstream_like(
        tmp_path,
        lambda t: t.replace(
            "void litert_lm_engine_settings_set_num_threads(LiteRtLmEngineSettings *settings, int num_threads);",
            "void litert_lm_engine_settings_set_num_threads(LiteRtLmEngineSettings *settings, int64_t num_threads);",
        ),
    )
    with pytest.raises(BuildError, match="litert_lm_engine_settings_set_num_threads"):
        check_against_upstream(CC, header)


def test_a_streaming_callback_of_another_shape_upstream_is_a_compile_error(tmp_path: Path) -> None:
    """Our declaration spells the callback's type out, so upstream's (a named typedef there) is checked too:
    here an older shape, the piece's text and flags as arguments instead of a chunk object."""
    ours = "void (*callback)(void *callback_data, const LiteRtLmStreamChunk *chunk)"
    assert ours in OURS
    header = _upstream_like(
        tmp_path,
        lambda t: t.replace(
            ours, "void (*callback)(void *data, const char *text, bool final, const char *error)"
        ),
    )
    with pytest.raises(BuildError, match="litert_lm_conversation_send_message_stream"):
        check_against_upstream(CC, header)


def test_upstreams_own_conversation_header_is_read_where_there_is_one(tmp_path: Path) -> None:
    """From 2026-08 upstream declares the conversation functions in c/conversation.h (it includes
    "c/engine.h"): a differing signature there fails as in engine.h."""
    header = _upstream_like(tmp_path)
    text = header.read_text()
    line = next(x for x in text.splitlines() if x.startswith("void litert_lm_conversation_cancel_process("))
    header.write_text(text.replace(line, ""))
    (header.parent / "conversation.h").write_text(
        '#include "c/engine.h"\n'
        + line.replace("LiteRtLmConversation *conversation", "int conversation")
        + "\n"
    )
    with pytest.raises(BuildError, match="litert_lm_conversation_cancel_process"):
        check_against_upstream(CC, header)
    (header.parent / "conversation.h").write_text('#include "c/engine.h"\n' + line + "\n")
    check_against_upstream(CC, header)


def test_a_different_enum_value_upstream_is_a_compile_error(tmp_path: Path) -> None:
    header = _upstream_like(
        tmp_path, lambda t: t.replace("X(kLiteRtLmSamplerTypeTopP, 2)", "X(kLiteRtLmSamplerTypeTopP, 7)")
    )
    with pytest.raises(BuildError, match="kLiteRtLmSamplerTypeTopP"):
        check_against_upstream(CC, header)


def test_a_source_checkout_without_the_header_is_said(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="has no c/engine.h"):
        upstream_header({"EDGEFARM_LITERT_LM_SRC": str(tmp_path)})
    assert upstream_header({"EDGEFARM_CACHE_DIR": str(tmp_path)}) is None
