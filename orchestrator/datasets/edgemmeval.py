"""EdgeMMEval rows (`data/<split>/metadata.jsonl`) -> Sample, with every problem reported at once.

The core is `row_to_sample(row, where, root)`: one parsed JSON row in, a Sample or the list of
its problems out. It touches the filesystem only to check media paths (through `paths.py`).
`load` is the edge: it finds metadata.jsonl, reads lines, and checks ids are unique.

Size: a check per field of the card's row schema, kept in one module so that a row's problems are
all found and reported at once.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError
from ..jsonio import DATASET_ROW, JsonBoundError, describe, loads
from .paths import resolve_media
from .types import Constraint, Dataset, ExpectedCall, Part, Problem, Sample, Turn

if TYPE_CHECKING:  # jsonschema is imported where rows are checked
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

FORMAT = "edgemmeval"
METADATA = "metadata.jsonl"
DEFAULT_SPLIT = "test"
MODALITIES = ("image", "audio", "text", "multi_turn", "combination", "structured_output", "tool_call")
# Rows of these modalities are meaningless without at least one media file of the given kinds.
_NEEDS_MEDIA = {"image": ("image",), "audio": ("audio",), "combination": ("image", "audio")}


def _check_schema(spec: Any) -> None:
    """Draft202012Validator.check_schema, once per distinct schema: a dataset repeats the same tool
    definitions row after row (the bundled set checks 39 schemas, 21 of them distinct: 55 -> 46 ms)."""
    _check_schema_text(json.dumps(spec, sort_keys=True))


@functools.lru_cache(maxsize=256)
def _check_schema_text(text: str) -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(json.loads(text))


@functools.cache
def _row_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = json.loads(Path(__file__).with_name("edgemmeval.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


# ---------------------------------------------------------------- pure checks


def _field_path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _schema_message(err: ValidationError) -> tuple[str, str]:
    """(field, message) for one jsonschema error, phrased for a dataset author."""
    path = list(err.absolute_path)
    v, expected = err.validator, err.validator_value
    if v == "required":
        missing = next((p for p in expected if err.message.startswith(repr(p))), "?")
        return _field_path([*path, missing]), "required field is missing"
    field = _field_path(path)
    if v == "type":
        kinds = " or ".join(expected) if isinstance(expected, list) else expected
        got = type(err.instance).__name__
        return field, f"must be {kinds}, got {got} {_short(err.instance)}"
    if v == "enum":
        name = {"modality": "modality", "grammar.shape": "grammar shape"}.get(field, "value")
        return field, f"unknown {name} {_short(err.instance)}; use one of: {', '.join(map(str, expected))}"
    if v == "const":
        return field, f"must be {_short(expected)}, got {_short(err.instance)}"
    if v in ("minLength", "minItems"):
        return field, "must not be empty"
    if v == "uniqueItems":
        return field, "items repeat; list each once"
    if v == "minimum":
        return field, f"must be >= {expected}, got {_short(err.instance)}"
    return field, err.message if len(err.message) < 200 else err.message[:197] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _grammar_problems(grammar: dict[str, Any]) -> list[tuple[str, str]]:
    """What the row schema cannot say about a grammar shape: bounds order and header width (pure)."""
    lo, hi = grammar.get("min_items"), grammar.get("max_items")
    if _is_int(lo) and _is_int(hi) and lo > hi:
        return [("grammar.max_items", f"max_items {hi} is below min_items {lo}")]
    cols, header = grammar.get("columns"), grammar.get("header")
    if grammar.get("shape") == "csv" and isinstance(header, list) and _is_int(cols) and len(header) != cols:
        return [("grammar.header", f"header has {len(header)} names but columns is {cols}")]
    return []


def _constraint(row: dict[str, Any], bad: set[str]) -> tuple[Constraint | None, list[tuple[str, str]]]:
    """The row's Constraint (if any) and the problems with it (pure)."""
    from jsonschema.exceptions import SchemaError

    ctype = row.get("constraint_type")
    if ctype is None:
        if row.get("modality") == "structured_output":
            return None, [("constraint_type", "structured_output rows need json_schema, regex or grammar")]
        return None, []
    if "constraint_type" in bad:
        return None, []
    spec_field = {"json_schema": "schema", "regex": "pattern", "grammar": "grammar"}[ctype]
    spec = row.get(spec_field)
    if spec is None:
        return None, [(spec_field, f"constraint_type {ctype} needs a '{spec_field}' field")]
    if spec_field in bad:
        return None, []
    if ctype == "json_schema":
        try:
            _check_schema(spec)
        except SchemaError as e:
            at = _field_path(["schema", *e.absolute_path])
            return None, [(at, f"not a valid JSON Schema (draft 2020-12): {e.message[:200]}")]
        return Constraint("json_schema", schema=spec), []
    if ctype == "regex":
        try:
            re.compile(spec)
        except re.error as e:
            return None, [("pattern", f"not a valid Python regex: {e}")]
        return Constraint("regex", pattern=spec), []
    problems = _grammar_problems(spec)
    return (None if problems else Constraint("grammar", grammar=spec)), problems


def _tools(row: dict[str, Any], bad: set[str]) -> tuple[tuple[dict, ...], ExpectedCall | None, list]:
    """Tools, the expected call or refusal, and their problems (pure)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    out: list[tuple[str, str]] = []
    tools = row.get("tools") if "tools" not in bad else None
    tools = tools if isinstance(tools, list) else []
    params: dict[str, Any] = {}
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str):
            continue  # the row schema already said so
        if name in params:
            out.append((f"tools[{i}].function.name", f"tool {name!r} is defined twice"))
        spec = fn.get("parameters")
        if isinstance(spec, dict):
            try:
                _check_schema(spec)
            except SchemaError as e:
                out.append((f"tools[{i}].function.parameters", f"not a valid JSON Schema: {e.message[:200]}"))
                spec = None
        params[name] = spec if isinstance(spec, dict) else None
    is_tool_row = row.get("modality") == "tool_call"
    if is_tool_row and "tools" not in row:
        out.append(("tools", "tool_call rows need 'tools': a list of function specs"))
    call, refuse = row.get("expected_call"), row.get("expect_refusal") is True
    if call is not None and refuse:
        out.append(("expected_call", "give either expected_call or expect_refusal: true, not both"))
        return tuple(tools), None, out
    if refuse:
        return tuple(tools), ExpectedCall(refuse=True), out
    if call is None:
        if is_tool_row:
            out.append(("expected_call", "tool_call rows need expected_call or expect_refusal: true"))
        return tuple(tools), None, out
    if "expected_call" in bad or not isinstance(call, dict):
        return tuple(tools), None, out
    name, args = call.get("name"), call.get("arguments", {})
    if "tools" in bad:
        pass  # the row schema already reported the tools; the name cannot be checked against them
    elif name not in params:
        known = ", ".join(params) or "none"
        out.append(("expected_call.name", f"{name!r} is not one of the row's tools ({known})"))
    elif params[name] is not None and isinstance(args, dict):
        for e in Draft202012Validator(params[name]).iter_errors(args):
            at = _field_path(["expected_call", "arguments", *e.absolute_path])
            out.append((at, f"does not match tool {name!r} parameters: {e.message[:200]}"))
    return tuple(tools), ExpectedCall(name=name, arguments=args if isinstance(args, dict) else {}), out


def _media_names(row: dict[str, Any], plural: str, singular: str) -> list[tuple[str, Any]]:
    """(field, name) pairs from `images`/`image` or `audio`; a string counts as a one-item list."""
    out: list[tuple[str, Any]] = []
    for key in dict.fromkeys((plural, singular)):
        value = row.get(key)
        if isinstance(value, str):
            out.append((key, value))
        elif isinstance(value, list):
            out.extend((f"{key}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str))
    seen: set[str] = set()
    return [(f, n) for f, n in out if not (n in seen or seen.add(n))]


MAX_TURNS_PER_ROW = 64  # a conversation longer than this is refused by the check (docs/dataset.md)


def row_to_sample(row: Any, where: str, root: Path, *, subset: str = DEFAULT_SPLIT) -> Sample | list[Problem]:
    """One parsed row -> a Sample, or every problem it has (media names resolved against `root`)."""
    if not isinstance(row, dict):
        return [Problem(where, f"each line must be a JSON object, got {type(row).__name__}")]
    test_id = row.get("test_id") if isinstance(row.get("test_id"), str) else ""
    problems: list[Problem] = []

    def add(field: str, message: str) -> None:
        problems.append(Problem(where=where, message=message, test_id=test_id, field=field))

    bad: set[str] = set()
    for err in sorted(_row_validator().iter_errors(row), key=lambda e: list(map(str, e.absolute_path))):
        field, message = _schema_message(err)
        bad.add(field.split(".")[0].split("[")[0])
        add(field, message)

    has_prompt, has_turns = "prompt" in row, "turns" in row
    if has_prompt == has_turns:
        add(
            "prompt",
            "give exactly one of 'prompt' (single turn) or 'turns' (multi-turn)"
            + (", not both" if has_prompt else ""),
        )
    texts: list[str] = []
    if has_prompt and "prompt" not in bad:
        texts = [row["prompt"]]
    elif has_turns and "turns" not in bad:
        texts = list(row["turns"])
        if len(texts) > MAX_TURNS_PER_ROW:
            add("turns", f"{len(texts)} turns: edgefarm runs at most {MAX_TURNS_PER_ROW} turns per row (each is "
                "a prefill and a decode on the device, and together they must fit the model's context); split "
                "the conversation into rows")  # fmt: skip

    media: list[Part] = []
    kinds_given: set[str] = set()
    for kind, plural, singular in (("image", "images", "image"), ("audio", "audio", "audio")):
        for field, name in _media_names(row, plural, singular):
            kinds_given.add(kind)
            got = resolve_media(root, name, where=where, test_id=test_id, field=field)
            if isinstance(got, Problem):
                problems.append(got)
            else:
                media.append(Part(kind, path=got))
    modality = row.get("modality") if isinstance(row.get("modality"), str) else ""
    needs = _NEEDS_MEDIA.get(modality, ())
    if needs and not kinds_given.intersection(needs):
        wanted = " or ".join("an image" if k == "image" else "an audio file" for k in needs)
        add("images" if "image" in needs else "audio", f"{modality} rows need at least {wanted}")

    constraint, c_problems = _constraint(row, bad)
    tools, expected, t_problems = _tools(row, bad)
    for field, message in c_problems + t_problems:
        add(field, message)
    if problems:
        return problems

    turns = [Turn(tuple(media) + (Part("text", text=texts[0]),))]
    turns += [Turn((Part("text", text=t),)) for t in texts[1:]]
    reference = row["reference"]
    references = tuple(dict.fromkeys([reference, *row.get("reference_variants", [])]))
    return Sample(
        id=row["test_id"],
        modality=row["modality"],
        task=row["task"],
        turns=tuple(turns),
        reference=reference,
        references=references,
        format=FORMAT,
        subset=subset,
        system=row.get("system"),
        constraint=constraint,
        tools=tools,
        expected_call=expected,
        max_output_tokens=row.get("max_output_tokens"),
        where=where,
    )


def parse_line(raw: bytes, where: str) -> Any | Problem:
    """One metadata.jsonl line -> the parsed JSON value, or a Problem (pure)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return Problem(where, f"not UTF-8 text ({e.reason} at byte {e.start}); save the file as UTF-8")
    try:
        return loads(text, DATASET_ROW)
    except JsonBoundError as e:
        return Problem(where, f"{describe(e, text)[0]}; shorten or flatten this row")
    except json.JSONDecodeError as e:
        return Problem(
            where, f"not valid JSON: {e.msg} at column {e.colno}; each line must be one JSON object"
        )


# ---------------------------------------------------------------- the edge: find and read files


def _splits(root: Path) -> list[str]:
    data = root / "data"
    return sorted(p.parent.name for p in data.glob(f"*/{METADATA}")) if data.is_dir() else []


def find_metadata(path: Path, subset: str | None = None) -> Path:
    """The metadata.jsonl `path` points at (file, folder, hub root, or a folder holding one root)."""
    if path.is_file():
        return path
    if not path.is_dir():
        raise DatasetError(f"no such file or folder: {path}", fix="check the path", where=str(path))
    splits = _splits(path)
    if splits:
        split = subset or (
            DEFAULT_SPLIT if DEFAULT_SPLIT in splits else (splits[0] if len(splits) == 1 else None)
        )
        if split in splits:
            return path / "data" / split / METADATA
        what = f"no split {subset!r}" if subset else "several splits and none is 'test'"
        raise DatasetError(
            f"{what} in {path / 'data'}",
            fix=f"pass --subset with one of: {', '.join(splits)}",
            where=str(path),
        )
    if (path / METADATA).is_file():
        if subset and subset != path.name:
            raise DatasetError(
                f"--subset {subset!r} selects data/<split>/, but {path} holds {METADATA} itself",
                fix="drop --subset, or pass the dataset root that holds data/",
                where=str(path),
            )
        return path / METADATA
    roots = sorted(p for p in path.iterdir() if p.is_dir() and _splits(p)) if path.is_dir() else []
    if len(roots) == 1:
        return find_metadata(roots[0], subset)
    if roots:
        raise DatasetError(
            f"{path} holds several datasets: {', '.join(r.name for r in roots)}",
            fix="pass one of them",
            where=str(path),
        )
    raise DatasetError(
        f"no {METADATA} in {path}",
        fix=f"pass a folder holding data/<split>/{METADATA} or {METADATA}, or the file itself",
        where=str(path),
    )


def detect(path: Path) -> bool:
    """True when `path` is (or holds) an EdgeMMEval metadata.jsonl; never raises."""
    try:
        meta = find_metadata(path)
        if meta.name == METADATA:
            return True
        if meta.suffix != ".jsonl":
            return False
        with meta.open("rb") as f:
            first = next((line for line in f if line.strip()), b"")
        row = parse_line(first.removeprefix(b"\xef\xbb\xbf"), str(meta))
        return isinstance(row, dict) and "test_id" in row and "modality" in row
    except (DatasetError, OSError):
        return False


def read_rows(meta: Path) -> Iterator[tuple[str, Any | Problem]]:
    """(where, parsed row or Problem) for every non-blank line of `meta`."""
    try:
        raw = meta.read_bytes()
    except OSError as e:
        raise DatasetError(
            f"cannot read {meta}: {e.strerror}", fix="check the file's permissions", where=str(meta)
        ) from e
    for number, line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        if line.strip():
            yield f"{meta}:{number}", parse_line(line, f"{meta}:{number}")


def load(path: Path, subset: str | None = None) -> Dataset:
    """Read an EdgeMMEval dataset: valid samples plus ALL problems (bad rows produce no sample)."""
    meta = find_metadata(Path(path), subset)
    hub_layout = meta.parent.parent.name == "data"
    split = meta.parent.name if hub_layout else (subset or DEFAULT_SPLIT)
    root = meta.parent.resolve()
    samples: list[Sample] = []
    problems: list[Problem] = []
    first_seen: dict[str, str] = {}
    for where, row in read_rows(meta):
        if isinstance(row, Problem):
            problems.append(row)
            continue
        got = row_to_sample(row, where, root, subset=split)
        tid = row.get("test_id") if isinstance(row, dict) else None
        if isinstance(tid, str) and tid:
            if tid in first_seen:
                got = [
                    *(got if isinstance(got, list) else []),
                    Problem(
                        where,
                        f"duplicate test_id (first used at {first_seen[tid]}); make ids unique",
                        test_id=tid,
                        field="test_id",
                    ),
                ]
            else:
                first_seen[tid] = where
        if isinstance(got, list):
            problems.extend(got)
        else:
            samples.append(got)
    if not samples and not problems:
        problems.append(Problem(f"{meta}:1", "the file holds no rows"))
    media = sorted({p.path for s in samples for p in s.media if p.path is not None})
    name = meta.resolve().parents[2].name if hub_layout else root.name
    return Dataset(
        name=name,
        format=FORMAT,
        root=root,
        files=(meta.resolve(), *media),
        samples=tuple(samples),
        problems=tuple(problems),
    )
