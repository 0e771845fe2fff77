"""Format checks of structured-output rows: JSON extraction, schema, regex, grammar shapes."""

from __future__ import annotations

import pytest

from orchestrator.datasets.types import Constraint
from orchestrator.scoring.structured import check_format, content_references, find_json, json_content

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def schema(output: str):
    return check_format(Constraint("json_schema", schema=PERSON), output)


@pytest.mark.parametrize(
    "output",
    [
        '{"name": "Ada", "age": 36}',
        '  {"name":"Ada","age":36}\n',
        'Here you go:\n```json\n{"name": "Ada", "age": 36}\n```\nAnything else?',
        '```\n{"name": "Ada", "age": 36}\n```',
        'Sure! {"name": "Ada", "age": 36} is the answer.',
        'The record {"name": "Ada", "age": 36}',
    ],
)
def test_json_found_whole_fenced_or_embedded(output: str) -> None:
    check = schema(output)
    assert check.valid and check.failed is None
    assert check.content == "Ada 36"  # content BLEU reads the leaf values


def test_embedded_json_with_braces_inside_strings() -> None:
    value, source = find_json('x {"name": "a } b", "age": 1} y')
    assert value == {"name": "a } b", "age": 1} and source == '{"name": "a } b", "age": 1}'


def test_first_parseable_candidate_wins_over_broken_braces() -> None:
    assert find_json("{oops} then [1, 2]") == ([1, 2], "[1, 2]")


@pytest.mark.parametrize(
    ("output", "failed"),
    [
        ('{"name": "Ada", "age": "36"}', "schema: '36' is not of type 'integer' at $.age"),
        ('{"name": "Ada"}', "schema: 'age' is a required property at $"),
        ('{"name": "Ada", "age": 36, "x": 1}', "schema: Additional properties"),
        ('{"name": "Ada", "age": 36', "no JSON found"),
        ("name: Ada, age: 36", "no JSON found"),
        ("", "no JSON found"),
    ],
)
def test_json_schema_failures_say_which_check(output: str, failed: str) -> None:
    check = schema(output)
    assert not check.valid and check.failed.startswith(failed)


def test_regex_full_match_after_trimming() -> None:
    c = Constraint("regex", pattern=r"\d{4}-\d{2}-\d{2}")
    assert check_format(c, "  2024-03-05\n").valid
    assert not check_format(c, "Date: 2024-03-05").valid
    assert not check_format(c, "2024-03-05.").valid
    assert "does not fully match" in check_format(c, "x").failed
    assert not check_format(Constraint("regex", pattern="(unclosed"), "x").valid


def grammar(output: str, **g):
    return check_format(Constraint("grammar", grammar=g), output)


def test_numbered_list() -> None:
    g = {"shape": "numbered_list", "min_items": 2, "max_items": 3}
    assert grammar("1. apple\n2. pear\n3) plum", **g).valid
    assert grammar("\n1. apple\n\n2. pear\n", **g).valid
    assert "fewer than min_items" in grammar("1. apple", **g).failed
    assert "more than max_items" in grammar("1. a\n2. b\n3. c\n4. d", **g).failed
    assert "numbering" in grammar("1. a\n3. b", **g).failed
    assert "not a numbered item" in grammar("Fruits:\n1. a\n2. b", **g).failed
    assert not grammar("1.apple\n2.pear", **g).valid  # needs a space after the number


def test_bullet_list() -> None:
    g = {"shape": "bullet_list", "min_items": 1, "max_items": 2}
    assert grammar("- red\n* blue", **g).valid
    assert not grammar("- red\nblue", **g).valid
    assert not grammar("- a\n- b\n- c", **g).valid
    assert not grammar("", **g).valid


def test_key_value() -> None:
    g = {"shape": "key_value", "keys": ["name", "age"]}
    assert grammar("name: Ada\nAge: 36\ncity: London", **g).valid  # keys case-insensitive, extras ok
    assert "missing key(s): age" in grammar("name: Ada", **g).failed
    assert not grammar("name: Ada\nage:", **g).valid  # empty value
    assert not grammar("name = Ada\nage: 3", **g).valid


def test_csv_with_and_without_header() -> None:
    g = {"shape": "csv", "columns": 2, "header": ["item", "price"]}
    assert grammar("item,price\napple,1.20\npear, 0.80", **g).valid
    assert "no data row" in grammar("item,price", **g).failed
    assert "is not the header" in grammar("apple,1.20", **g).failed
    assert "row 2 has 3 column(s)" in grammar("item,price\na,b,c", **g).failed
    assert grammar('x,"a, b"', shape="csv", columns=2).valid  # quoted comma
    assert not grammar("", shape="csv", columns=2).valid


def test_one_of() -> None:
    g = {"shape": "one_of", "options": ["yes", "no"]}
    assert grammar("  YES \n", **g).valid
    assert not grammar("Yes.", **g).valid
    assert not grammar("yes, it is", **g).valid


def test_unknown_shape_is_invalid_not_an_exception() -> None:
    assert "unknown grammar shape" in grammar("x", shape="tree").failed


def test_json_content_is_leaf_values_in_order() -> None:
    value = {"a": "x y", "b": [1, 2.5, True, None], "c": {"d": "z"}, "e": ""}
    assert json_content(value) == "x y 1 2.5 true z"
    c = Constraint("json_schema", schema={})
    assert content_references(c, ['{"k": "v"}', "plain text"]) == ["v", "plain text"]
    assert content_references(Constraint("regex", pattern="."), ['{"k": "v"}']) == ['{"k": "v"}']
