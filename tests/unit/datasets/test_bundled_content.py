"""The bundled dataset (data/edgemmeval) itself, checked without the loader: composition, ids, media,
and that every structured / tool reference satisfies its own constraint (so a perfect model can pass)."""

from __future__ import annotations

import json
import re
import wave
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[3] / "data" / "edgemmeval"
SPLIT = ROOT / "data" / "test"
COMPOSITION = {
    "image": 34,
    "audio": 27,
    "text": 41,
    "multi_turn": 24,
    "combination": 28,
    "structured_output": 32,
    "tool_call": 14,
}
PREFIX = {
    "image": "IMG",
    "audio": "AUD",
    "text": "TXT",
    "multi_turn": "MTR",
    "combination": "CMB",
    "structured_output": "STO",
    "tool_call": "TCL",
}
TASKS = {
    "image": {
        "vqa",
        "ocr",
        "caption",
        "counting",
        "classification",
        "chart_qa",
        "resolution_stress",
        "robustness",
    },
    "audio": {"transcription", "spoken_qa", "translation", "noise_robustness", "audio_edge_case"},
    "text": {"qa", "translation", "summarization", "reasoning", "math"},
    "multi_turn": {"context_retention", "kv_cache_stress"},
    "combination": {"cross_modal"},
    "structured_output": {"json_schema", "regex", "grammar"},
    "tool_call": {"tool_call", "refusal"},
}
KEY_ORDER = [
    "test_id",
    "modality",
    "task",
    "prompt",
    "turns",
    "images",
    "audio",
    "reference",
    "reference_variants",
    "system",
    "max_output_tokens",
    "tags",
    "constraint_type",
    "schema",
    "pattern",
    "grammar",
    "tools",
    "expected_call",
    "expect_refusal",
]


def _rows() -> list[dict]:
    lines = (SPLIT / "metadata.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


ROWS = _rows()
BY_ID = {r["test_id"]: r for r in ROWS}


def of(modality: str) -> list[dict]:
    return [r for r in ROWS if r["modality"] == modality]


def media(r: dict) -> list[str]:
    return r.get("images", []) + r.get("audio", [])


def grammar_ok(text: str, g: dict) -> bool:
    """The grammar-shape rules of the row contract (docs/dataset.md), written independently of the scorer."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    shape = g["shape"]
    if shape == "numbered_list":
        ok = all(re.fullmatch(rf"{i}\.\s+\S.*", ln) for i, ln in enumerate(lines, 1))
        return ok and g["min_items"] <= len(lines) <= g["max_items"]
    if shape == "bullet_list":
        return (
            all(re.fullmatch(r"[-*]\s+\S.*", ln) for ln in lines)
            and g["min_items"] <= len(lines) <= g["max_items"]
        )
    if shape == "key_value":
        pairs = [re.fullmatch(r"([^:]+):\s*(\S.*)", ln) for ln in lines]
        return all(pairs) and set(g["keys"]) <= {m.group(1).strip() for m in pairs}
    if shape == "csv":
        cells = [ln.split(",") for ln in lines]
        header = g.get("header")
        data = cells[1:] if header and [c.strip() for c in cells[0]] == header else cells
        return (
            all(len(c) == g["columns"] for c in cells)
            and len(data) >= 1
            and (not header or data is not cells)
        )
    if shape == "one_of":
        return text.strip().lower() in {o.lower() for o in g["options"]}
    raise AssertionError(f"unknown grammar shape {shape!r}")


def test_exactly_200_rows_with_the_published_composition():
    assert len(ROWS) == 200
    assert Counter(r["modality"] for r in ROWS) == COMPOSITION


def test_ids_are_unique_prefixed_and_numbered_from_one():
    assert len(BY_ID) == len(ROWS)
    for modality, n in COMPOSITION.items():
        assert [r["test_id"] for r in of(modality)] == [
            f"{PREFIX[modality]}-{i:03d}" for i in range(1, n + 1)
        ]


@pytest.mark.parametrize("r", ROWS, ids=lambda r: r["test_id"])
def test_row_follows_the_format(r):
    assert list(r) == [k for k in KEY_ORDER if k in r], "unknown key or keys out of order"
    assert r["task"] in TASKS[r["modality"]]
    assert ("prompt" in r) != ("turns" in r)
    texts = r["turns"] if "turns" in r else [r["prompt"]]
    assert all(isinstance(t, str) and t.strip() for t in texts)
    assert ("turns" in r) == (r["modality"] == "multi_turn")
    if "turns" in r:
        assert 2 <= len(r["turns"]) <= 6 and sum(map(len, r["turns"])) < 2000
    assert all(len(t) < 1500 for t in texts)
    assert isinstance(r["reference"], str) and r["reference"].strip()
    assert 2 <= len(r["reference_variants"]) <= 5 and r["reference_variants"][0] == r["reference"]
    assert len(set(r["reference_variants"])) == len(r["reference_variants"])
    for key in ("images", "audio"):
        assert key not in r or (r[key] and all(p.startswith(f"{key}/") for p in r[key]))
    assert "edgefarm" not in json.dumps(r).lower()


def test_every_media_file_exists_opens_and_is_referenced():
    used = {p for r in ROWS for p in media(r)}
    on_disk = {str(p.relative_to(SPLIT)) for sub in ("images", "audio") for p in (SPLIT / sub).iterdir()}
    assert used == on_disk
    for rel in used:
        path = SPLIT / rel
        if rel.startswith("images/"):
            with Image.open(path) as img:
                img.load()
                assert img.format in ("PNG", "JPEG") and min(img.size) >= 16
        else:
            with wave.open(str(path)) as w:
                assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
                assert w.getnframes() > 0


def test_media_kinds_match_the_modality():
    assert all(r.get("images") and not r.get("audio") for r in of("image"))
    assert all(r.get("audio") and not r.get("images") for r in of("audio"))
    assert not any(media(r) for r in of("text") + of("structured_output") + of("tool_call"))
    assert all(r.get("images") for r in of("combination"))
    assert sum(bool(r.get("audio")) for r in of("combination")) >= 10


def _image_sizes() -> dict[str, tuple[int, int]]:
    sizes = {}
    for p in (SPLIT / "images").iterdir():
        with Image.open(p) as img:
            sizes[p.name] = img.size
    return sizes


def _seconds(path: Path) -> float:
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


def test_resolution_and_audio_edge_cases_are_present():
    sizes = _image_sizes()
    assert Counter(sizes.values())[(3840, 2160)] == 1
    assert (16, 16) in sizes.values() and (2000, 50) in sizes.values()
    durations = [_seconds(SPLIT / r["audio"][0]) for r in of("audio")]
    assert any(d <= 0.35 for d in durations)
    assert any(25 <= d <= 30 for d in durations)
    silent = [r for r in of("audio") if "silence" in r.get("tags", [])]
    assert len(silent) == 1
    with wave.open(str(SPLIT / silent[0]["audio"][0])) as w:
        assert not any(w.readframes(w.getnframes()))


def test_summarization_rows_have_passages_of_400_to_900_characters():
    rows = [r for r in ROWS if r["task"] == "summarization"]
    assert len(rows) == 6
    for r in rows:
        passage = r["prompt"].split("\n\n", 1)[1]
        assert 400 <= len(passage) <= 900, r["test_id"]


def test_structured_rows_split_and_references_satisfy_their_constraint():
    rows = of("structured_output")
    assert Counter(r["constraint_type"] for r in rows) == {"json_schema": 12, "regex": 10, "grammar": 10}
    for r in rows:
        kind, ref = r["constraint_type"], r["reference"]
        assert r["task"] == kind
        spec_key = {"json_schema": "schema", "regex": "pattern", "grammar": "grammar"}[kind]
        assert {k for k in ("schema", "pattern", "grammar") if k in r} == {spec_key}
        if kind == "json_schema":
            jsonschema.Draft202012Validator.check_schema(r["schema"])
            jsonschema.Draft202012Validator(r["schema"]).validate(json.loads(ref))
            assert isinstance(json.loads(ref), dict) and "\n" not in ref
        elif kind == "regex":
            assert re.fullmatch(r["pattern"], ref.strip()), r["test_id"]
        else:
            assert grammar_ok(ref, r["grammar"]), r["test_id"]


def test_grammar_checker_rejects_wrong_shapes():
    """Guards the check above: it must be able to fail."""
    assert not grammar_ok("1. a\n3. b", {"shape": "numbered_list", "min_items": 1, "max_items": 5})
    assert not grammar_ok("- a\n- b\n- c", {"shape": "bullet_list", "min_items": 1, "max_items": 2})
    assert not grammar_ok("name: Ada", {"shape": "key_value", "keys": ["name", "age"]})
    assert not grammar_ok("a,b,c", {"shape": "csv", "columns": 3, "header": ["a", "b", "c"]})
    assert not grammar_ok("maybe", {"shape": "one_of", "options": ["yes", "no"]})


def test_tool_rows_reference_is_the_expected_call_or_a_refusal():
    rows = of("tool_call")
    assert Counter(r["task"] for r in rows) == {"tool_call": 10, "refusal": 4}
    for r in rows:
        specs = {t["function"]["name"]: t["function"] for t in r["tools"]}
        assert all(t["type"] == "function" for t in r["tools"]) and len(specs) == len(r["tools"])
        for fn in specs.values():
            jsonschema.Draft202012Validator.check_schema(fn["parameters"])
            assert fn["parameters"]["type"] == "object" and fn["description"]
        if r["task"] == "tool_call":
            call = r["expected_call"]
            assert "expect_refusal" not in r
            assert json.loads(r["reference"]) == call and set(call) == {"name", "arguments"}
            jsonschema.validate(call["arguments"], specs[call["name"]]["parameters"])
        else:
            assert r["expect_refusal"] is True and "expected_call" not in r
            with pytest.raises(json.JSONDecodeError):
                json.loads(r["reference"])


def test_dataset_is_small_and_has_its_card():
    total = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
    assert total < 20_000_000
    card = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in card and "scripts/build_dataset.py" in card


def test_docs_examples_are_real_rows():
    doc = (ROOT.parents[1] / "docs" / "dataset.md").read_text(encoding="utf-8")
    examples = re.findall(r"```json\n(.*?)\n```", doc, flags=re.DOTALL)
    lines = set((SPLIT / "metadata.jsonl").read_text(encoding="utf-8").splitlines())
    assert len(examples) == len(COMPOSITION)
    assert {json.loads(e)["modality"] for e in examples} == set(COMPOSITION)
    assert all(e in lines for e in examples)
