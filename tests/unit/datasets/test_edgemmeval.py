"""EdgeMMEval loader: valid rows normalise to Samples, and every kind of broken row is reported at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.datasets import BUNDLED_DATASET, Part, Problem, Sample, edgemmeval
from orchestrator.datasets.paths import resolve_media
from orchestrator.errors import DatasetError

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
                "required": ["city"],
            },
        },
    }
]

GOOD = [
    {
        "test_id": "IMG-001",
        "modality": "image",
        "task": "vqa",
        "prompt": "Colour?",
        "images": ["images/a.png"],
        "reference": "red",
        "reference_variants": ["red", "Red", "it is red"],
        "tags": ["x"],
        "extra": 1,
    },
    {
        "test_id": "AUD-001",
        "modality": "audio",
        "task": "transcription",
        "prompt": "Transcribe.",
        "audio": ["audio/a.wav"],
        "reference": "hello",
        "max_output_tokens": 32,
    },
    {
        "test_id": "TXT-001",
        "modality": "text",
        "task": "qa",
        "prompt": "2+2?",
        "reference": "4",
        "system": "Be brief.",
    },
    {
        "test_id": "MTR-001",
        "modality": "multi_turn",
        "task": "context_retention",
        "turns": ["My name is Ada.", "What is my name?"],
        "images": ["images/a.png"],
        "reference": "Ada",
        "reference_variants": ["Your name is Ada", "Ada"],
    },
    {
        "test_id": "CMB-001",
        "modality": "combination",
        "task": "cross_modal",
        "prompt": "Match them.",
        "image": "images/a.png",
        "audio": "audio/a.wav",
        "reference": "yes",
    },
    {
        "test_id": "STO-001",
        "modality": "structured_output",
        "task": "json_schema",
        "prompt": "JSON please",
        "constraint_type": "json_schema",
        "schema": {"type": "object", "required": ["a"]},
        "reference": '{"a":1}',
    },
    {
        "test_id": "STO-002",
        "modality": "structured_output",
        "task": "regex",
        "prompt": "A date",
        "constraint_type": "regex",
        "pattern": r"\d{4}-\d{2}-\d{2}",
        "reference": "2024-01-02",
    },
    {
        "test_id": "STO-003",
        "modality": "structured_output",
        "task": "grammar",
        "prompt": "Three fruits",
        "constraint_type": "grammar",
        "grammar": {"shape": "numbered_list", "min_items": 3, "max_items": 3},
        "reference": "1. a\n2. b\n3. c",
    },
    {
        "test_id": "TCL-001",
        "modality": "tool_call",
        "task": "tool_call",
        "prompt": "Weather in Paris?",
        "tools": TOOLS,
        "expected_call": {"name": "get_weather", "arguments": {"city": "Paris"}},
        "reference": '{"name":"get_weather","arguments":{"city":"Paris"}}',
    },
    {
        "test_id": "TCL-002",
        "modality": "tool_call",
        "task": "refusal",
        "prompt": "Book a flight.",
        "tools": TOOLS,
        "expect_refusal": True,
        "reference": "I cannot book flights.",
    },
]


def write_dataset(root: Path, lines: list, *, split: str = "test") -> Path:
    """A hub-layout dataset under `root`; dict lines are JSON-encoded, str lines written as is."""
    folder = root / "data" / split
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "audio").mkdir(exist_ok=True)
    (folder / "images" / "a.png").write_bytes(b"\x89PNG fake")
    (folder / "audio" / "a.wav").write_bytes(b"RIFF fake")
    text = "\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n"
    (folder / "metadata.jsonl").write_text(text, encoding="utf-8")
    return folder


def test_valid_rows_normalise_to_samples(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "edgemini", GOOD)
    ds = edgemmeval.load(tmp_path / "edgemini")
    assert ds.problems == ()
    assert [s.id for s in ds.samples] == [r["test_id"] for r in GOOD]
    assert ds.name == "edgemini" and ds.format == "edgemmeval" and ds.root == folder.resolve()
    assert ds.by_modality == {
        "image": 1,
        "audio": 1,
        "text": 1,
        "multi_turn": 1,
        "combination": 1,
        "structured_output": 3,
        "tool_call": 2,
    }
    img, aud, txt, mtr, cmb, sto1, sto2, sto3, tcl, ref = ds.samples
    assert img.where == f"{tmp_path / 'edgemini' / 'data' / 'test' / 'metadata.jsonl'}:1"
    assert img.turns[0].parts == (
        Part("image", path=folder.resolve() / "images" / "a.png"),
        Part("text", "Colour?"),
    )
    assert img.references == ("red", "Red", "it is red") and img.subset == "test"
    assert aud.max_output_tokens == 32 and aud.media_kinds == {"audio"}
    assert txt.system == "Be brief." and txt.media == ()
    assert [t.text for t in mtr.turns] == ["My name is Ada.", "What is my name?"]
    assert mtr.turns[0].media and not mtr.turns[1].media  # media attach to the first turn only
    assert mtr.references == ("Ada", "Your name is Ada")  # reference first, duplicates dropped
    assert [p.kind for p in cmb.turns[0].parts] == ["image", "audio", "text"]  # singular aliases
    assert sto1.constraint.type == "json_schema" and sto1.constraint.schema == {
        "type": "object",
        "required": ["a"],
    }
    assert sto2.constraint.pattern == r"\d{4}-\d{2}-\d{2}"
    assert sto3.constraint.grammar["shape"] == "numbered_list"
    assert tcl.expected_call.name == "get_weather" and tcl.expected_call.arguments == {"city": "Paris"}
    assert tcl.tools[0]["function"]["name"] == "get_weather" and not tcl.expected_call.refuse
    assert ref.expected_call.refuse and ref.expected_call.name is None
    assert ds.files[0] == (folder / "metadata.jsonl").resolve() and len(ds.files) == 3  # + 2 media


def row(**changes) -> dict:
    """A valid text row with `changes` applied (value None deletes the key)."""
    base = {"test_id": "T-1", "modality": "text", "task": "qa", "prompt": "Hi?", "reference": "hi"}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


BROKEN = {  # name -> (row, field the problem names, fragment of its message)
    "missing required field": (row(task=None), "task", "required field is missing"),
    "unknown modality": (row(modality="video"), "modality", "unknown modality 'video'"),
    "wrong type": (row(max_output_tokens="64"), "max_output_tokens", "must be integer, got str"),
    "zero max tokens": (row(max_output_tokens=0), "max_output_tokens", "must be >= 1"),
    "prompt and turns": (row(turns=["a", "b"]), "prompt", "not both"),
    "neither prompt nor turns": (row(prompt=None), "prompt", "exactly one of 'prompt'"),
    "empty turns": (row(prompt=None, turns=[]), "turns", "must not be empty"),
    "missing media": (row(images=["images/nope.png"]), "images[0]", "not found"),
    "dotdot escape": (row(images=["../outside.png"]), "images[0]", "outside the dataset folder"),
    "absolute path": (row(audio=["/etc/hostname"]), "audio[0]", "is absolute"),
    "symlink escape": (row(images=["images/link.png"]), "images[0]", "through a symlink outside"),
    "image row without image": (row(modality="image"), "images", "at least an image"),
    "bad json schema": (
        row(modality="structured_output", constraint_type="json_schema", schema={"type": 5}),
        "schema.type",
        "not a valid JSON Schema",
    ),
    "bad regex": (
        row(modality="structured_output", constraint_type="regex", pattern="(unclosed"),
        "pattern",
        "not a valid Python regex",
    ),
    "unknown grammar shape": (
        row(modality="structured_output", constraint_type="grammar", grammar={"shape": "table"}),
        "grammar.shape",
        "unknown grammar shape 'table'",
    ),
    "grammar missing keys": (
        row(modality="structured_output", constraint_type="grammar", grammar={"shape": "key_value"}),
        "grammar.keys",
        "required field is missing",
    ),
    "grammar repeated keys": (
        row(
            modality="structured_output",
            constraint_type="grammar",
            grammar={"shape": "key_value", "keys": ["a", "a"]},
        ),
        "grammar.keys",
        "repeat",
    ),
    "grammar bounds reversed": (
        row(
            modality="structured_output",
            constraint_type="grammar",
            grammar={"shape": "bullet_list", "min_items": 3, "max_items": 2},
        ),
        "grammar.max_items",
        "below min_items 3",
    ),
    "grammar negative count": (
        row(
            modality="structured_output",
            constraint_type="grammar",
            grammar={"shape": "numbered_list", "min_items": -1},
        ),
        "grammar.min_items",
        "must be >= 0",
    ),
    "csv header width": (
        row(
            modality="structured_output",
            constraint_type="grammar",
            grammar={"shape": "csv", "columns": 3, "header": ["a", "b"]},
        ),
        "grammar.header",
        "2 names but columns is 3",
    ),
    "one_of without options": (
        row(
            modality="structured_output",
            constraint_type="grammar",
            grammar={"shape": "one_of", "options": []},
        ),
        "grammar.options",
        "not be empty",
    ),
    "structured without constraint": (
        row(modality="structured_output"),
        "constraint_type",
        "need json_schema",
    ),
    "constraint spec missing": (
        row(modality="structured_output", constraint_type="regex"),
        "pattern",
        "needs a 'pattern' field",
    ),
    "tool row without expectation": (
        row(modality="tool_call", tools=TOOLS),
        "expected_call",
        "expected_call or expect_refusal",
    ),
    "tool row with both": (
        row(
            modality="tool_call",
            tools=TOOLS,
            expect_refusal=True,
            expected_call={"name": "get_weather", "arguments": {"city": "X"}},
        ),
        "expected_call",
        "not both",
    ),
    "tool row without tools": (row(modality="tool_call", expect_refusal=True), "tools", "need 'tools'"),
    "expected call to unknown tool": (
        row(modality="tool_call", tools=TOOLS, expected_call={"name": "get_time", "arguments": {}}),
        "expected_call.name",
        "not one of the row's tools (get_weather)",
    ),
    "arguments break tool schema": (
        row(
            modality="tool_call",
            tools=TOOLS,
            expected_call={"name": "get_weather", "arguments": {"unit": "kelvin"}},
        ),
        "expected_call.arguments",
        "does not match tool 'get_weather'",
    ),
    "tool spec of wrong type": (
        row(tools=[{"type": "retrieval", "function": {"name": "x"}}]),
        "tools[0].type",
        "must be 'function'",
    ),
}


@pytest.fixture
def media_root(tmp_path: Path) -> Path:
    root = write_dataset(tmp_path / "ds", [])
    (tmp_path / "ds" / "data" / "outside.png").write_bytes(b"x")  # exists, but outside the root
    (root / "images" / "link.png").symlink_to(tmp_path / "ds" / "data" / "outside.png")
    return root


@pytest.mark.parametrize("name", list(BROKEN))
def test_each_broken_row_is_reported_with_field(name: str, media_root: Path) -> None:
    bad_row, field, fragment = BROKEN[name]
    got = edgemmeval.row_to_sample(bad_row, "m.jsonl:7", media_root)
    assert isinstance(got, list), f"{name}: expected problems, got a Sample"
    assert any(p.field == field and fragment in p.message for p in got), [str(p) for p in got]
    assert all(p.where == "m.jsonl:7" and p.test_id == "T-1" for p in got)


def test_every_problem_in_a_file_is_reported_at_once(media_root: Path) -> None:
    lines = ['{"test_id": "J-1", broken', "[1, 2]", json.dumps(GOOD[2])]
    lines += [dict(r[0], test_id=f"B-{i}") for i, r in enumerate(BROKEN.values())]
    lines += [dict(GOOD[2], prompt="again")]  # duplicate TXT-001
    write_dataset(media_root.parents[1], lines)
    (media_root / "images" / "link.png").unlink(missing_ok=True)
    (media_root / "images" / "link.png").symlink_to(media_root.parent / "outside.png")
    ds = edgemmeval.load(media_root / "metadata.jsonl")
    meta = media_root / "metadata.jsonl"
    assert [s.id for s in ds.samples] == ["TXT-001"]  # rows with problems produce no Sample
    by_line = {}
    for p in ds.problems:
        by_line.setdefault(int(p.where.rsplit(":", 1)[1]), []).append(p)
    assert "not valid JSON" in by_line[1][0].message and by_line[1][0].where == f"{meta}:1"
    assert "must be a JSON object, got list" in by_line[2][0].message
    for i, (bad_row, field, fragment) in enumerate(BROKEN.values()):
        found = by_line[4 + i]
        assert any(p.field == field and fragment in p.message and p.test_id == f"B-{i}" for p in found), found
    dup = by_line[4 + len(BROKEN)]
    assert [(p.field, p.test_id) for p in dup] == [("test_id", "TXT-001")]
    assert f"first used at {meta}:3" in dup[0].message
    assert str(dup[0]).startswith(f"{meta}:{4 + len(BROKEN)} TXT-001 field 'test_id': duplicate")


def test_bad_utf8_and_empty_file(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path, [])
    (folder / "metadata.jsonl").write_bytes(b'{"test_id": "\xff"}\n')
    assert "not UTF-8" in edgemmeval.load(tmp_path).problems[0].message
    (folder / "metadata.jsonl").write_text("\n\n", encoding="utf-8")
    assert [p.message for p in edgemmeval.load(tmp_path).problems] == ["the file holds no rows"]


def test_resolve_media_accepts_inside_and_refuses_escapes(media_root: Path, tmp_path: Path) -> None:
    inside = resolve_media(media_root, "images/../images/a.png", where="w")
    assert inside == media_root.resolve() / "images" / "a.png"
    (media_root / "images" / "alias.png").symlink_to(media_root / "images" / "a.png")
    assert resolve_media(media_root, "images/alias.png", where="w") == inside
    for name, fragment in [
        ("", "empty"),
        ("images\\a.png", "backslashes"),
        ("https://x.org/a.png", "URL"),
        ("C:/a.png", "URL or drive"),
        ("~/a.png", "absolute"),
        ("images", "not a regular file"),
        (5, "must be a string"),
    ]:
        got = resolve_media(media_root, name, where="w", test_id="T", field="images[0]")
        assert isinstance(got, Problem) and fragment in got.message, (name, got)
        assert (got.where, got.test_id, got.field) == ("w", "T", "images[0]")


def test_layouts_and_subsets(tmp_path: Path) -> None:
    write_dataset(tmp_path / "parent" / "mini", GOOD[:3])
    write_dataset(tmp_path / "parent" / "mini", GOOD[3:5], split="val")
    meta = tmp_path / "parent" / "mini" / "data" / "test" / "metadata.jsonl"
    for spec in (tmp_path / "parent", tmp_path / "parent" / "mini", meta.parent, meta):
        assert edgemmeval.find_metadata(spec) == meta, spec
        assert edgemmeval.detect(spec)
    val = edgemmeval.load(tmp_path / "parent", "val")
    assert [s.id for s in val.samples] == ["MTR-001", "CMB-001"] and val.samples[0].subset == "val"
    assert val.name == "mini"
    with pytest.raises(DatasetError, match=r"no split 'dev'[\s\S]*fix: pass --subset with one of: test, val"):
        edgemmeval.find_metadata(tmp_path / "parent", "dev")
    with pytest.raises(DatasetError, match="holds metadata.jsonl itself"):
        edgemmeval.find_metadata(meta.parent, "val")
    write_dataset(tmp_path / "parent" / "other", GOOD[:1])
    with pytest.raises(DatasetError, match="several datasets: mini, other"):
        edgemmeval.find_metadata(tmp_path / "parent")


def test_detect_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "vqa.jsonl").write_text('{"messages": [], "answer": "x"}\n')
    (tmp_path / "rows.jsonl").write_text('\n{"test_id": "A", "modality": "text"}\n')
    assert not edgemmeval.detect(tmp_path / "empty")
    assert not edgemmeval.detect(tmp_path / "vqa.jsonl")
    assert not edgemmeval.detect(tmp_path / "missing")
    assert edgemmeval.detect(tmp_path / "rows.jsonl")


# ---------------------------------------------------------------- the bundled 200-row dataset

BUNDLED_META = BUNDLED_DATASET / "data" / "test" / "metadata.jsonl"
needs_bundled = pytest.mark.skipif(not BUNDLED_META.exists(), reason="bundled dataset not built yet")


@needs_bundled
def test_bundled_dataset_loads_clean_with_its_composition() -> None:
    ds = edgemmeval.load(BUNDLED_DATASET)
    assert [str(p) for p in ds.problems] == []
    assert len(ds.samples) == 200
    assert ds.by_modality == {
        "image": 34,
        "audio": 27,
        "text": 41,
        "multi_turn": 24,
        "combination": 28,
        "structured_output": 32,
        "tool_call": 14,
    }


@needs_bundled
def test_bundled_rows_round_trip() -> None:
    rows = [
        json.loads(line) for line in BUNDLED_META.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    samples = {s.id: s for s in edgemmeval.load(BUNDLED_DATASET).samples}
    root = BUNDLED_META.parent.resolve()
    for r in rows:
        s: Sample = samples[r["test_id"]]
        assert (s.modality, s.task, s.reference) == (r["modality"], r["task"], r["reference"])
        assert [t.text for t in s.turns] == (r["turns"] if "turns" in r else [r["prompt"]])
        expected_media = [root / n for n in r.get("images", [])] + [root / n for n in r.get("audio", [])]
        assert [p.path for p in s.turns[0].media] == expected_media
        assert all(not t.media for t in s.turns[1:])
        assert s.references[0] == r["reference"] and set(s.references) == {
            r["reference"],
            *r.get("reference_variants", []),
        }
        assert s.system == r.get("system") and s.max_output_tokens == r.get("max_output_tokens")
        if "constraint_type" in r:
            spec = {"json_schema": "schema", "regex": "pattern", "grammar": "grammar"}[r["constraint_type"]]
            assert s.constraint.type == r["constraint_type"] and getattr(s.constraint, spec) == r[spec]
        else:
            assert s.constraint is None
        assert list(s.tools) == r.get("tools", [])
        if r.get("expect_refusal"):
            assert s.expected_call.refuse
        elif "expected_call" in r:
            assert (s.expected_call.name, dict(s.expected_call.arguments)) == (
                r["expected_call"]["name"],
                r["expected_call"].get("arguments", {}),
            )
        else:
            assert s.expected_call is None


FULL_ROW = {
    **GOOD[8],
    "images": ["images/a.png"],
    "audio": "audio/a.wav",
    "system": "s",
    "tags": ["t"],
    "reference_variants": ["r"],
    "max_output_tokens": 5,
    "constraint_type": "grammar",
    "grammar": {"shape": "csv", "columns": 2, "header": ["a", "b"]},
    "turns": ["x"],
}
ODD_VALUES = [None, 0, 1.5, True, "", "x", [], [1], ["x"], {}, {"name": 1}, {"shape": "csv"}]


@pytest.mark.parametrize("field", sorted(FULL_ROW))
def test_any_field_of_any_type_gives_problems_not_crashes(field: str, media_root: Path) -> None:
    for value in ODD_VALUES:
        bad = {k: v for k, v in FULL_ROW.items() if k != field}
        if value is not None:
            bad[field] = value
        got = edgemmeval.row_to_sample(bad, "m:1", media_root)
        if field in ("prompt", "turns") and value is None:  # removes the prompt/turns clash: valid
            assert isinstance(got, Sample), got
        else:  # FULL_ROW has both prompt and turns, so it never becomes a Sample
            assert isinstance(got, list) and got and all(isinstance(p, Problem) for p in got), (field, value)


def test_patterns_known_to_backtrack_are_named_and_plain_ones_are_not():
    from orchestrator.datasets.patterns import backtracking_risk

    assert "nested quantifier" in backtracking_risk(r"(\w+\s?)*")
    assert "nested quantifier" in backtracking_risk(r"(a+)+b")
    assert "overlap" in backtracking_risk(r"(a|aa)+$")
    for plain in (r"\d{4}-\d{2}-\d{2}", r"YES|NO", r"(ab|cd)+", r"[a-z0-9._]+@[a-z0-9.-]+\.[a-z]{2,}", "(["):
        assert backtracking_risk(plain) is None, plain
