"""Structured-output (STO) rows: 12 JSON Schema, 10 regex, 10 grammar; each reference satisfies its constraint."""

from __future__ import annotations

import json
from typing import Any

from .rowkit import row

ONLY = "Reply with only the requested output, nothing else."


def compact(obj: Any) -> str:
    """One-line JSON (json.dumps defaults): the form of every JSON reference in this dataset."""
    return json.dumps(obj, ensure_ascii=False)


def _obj(props: dict, *, top: bool = True) -> dict:
    """A closed object schema requiring every property; only the top level names the draft."""
    head = {"$schema": "https://json-schema.org/draft/2020-12/schema"} if top else {}
    return head | {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


S, I, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}


def _json(n: int, prompt: str, schema: dict, ref: dict, alt: list[dict | str]) -> dict:
    return row(
        f"STO-{n:03d}",
        "json_schema",
        prompt,
        reference=compact(ref),
        variants=[a if isinstance(a, str) else compact(a) for a in alt],
        system=ONLY,
        constraint_type="json_schema",
        schema=schema,
    )


def _regex(n: int, prompt: str, pattern: str, ref: str, variants: list[str]) -> dict:
    return row(
        f"STO-{n:03d}",
        "regex",
        prompt,
        reference=ref,
        variants=variants,
        system=ONLY,
        constraint_type="regex",
        pattern=pattern,
    )


def _grammar(n: int, prompt: str, grammar: dict, ref: str, variants: list[str]) -> dict:
    return row(
        f"STO-{n:03d}",
        "grammar",
        prompt,
        reference=ref,
        variants=variants,
        system=ONLY,
        constraint_type="grammar",
        grammar=grammar,
    )


STRUCTURED_ROWS = [
    _json(
        1,
        "Return a JSON object with keys name and age for: Maria is 34 years old.",
        _obj({"name": S, "age": I}),
        {"name": "Maria", "age": 34},
        [{"age": 34, "name": "Maria"}],
    ),
    _json(
        2,
        "Return a JSON object with keys city and country for: Paris is the capital of France.",
        _obj({"city": S, "country": S}),
        {"city": "Paris", "country": "France"},
        [{"country": "France", "city": "Paris"}],
    ),
    _json(
        3,
        "Return a JSON object with keys product (string), price (number) and in_stock (boolean) for: "
        "The blue kettle costs 24.99 and is in stock.",
        _obj({"product": S, "price": N, "in_stock": B}),
        {"product": "blue kettle", "price": 24.99, "in_stock": True},
        [{"product": "Blue kettle", "price": 24.99, "in_stock": True}],
    ),
    _json(
        4,
        'List the three primary colors of paint as JSON of the form {"colors": [...]}.',
        _obj({"colors": {"type": "array", "items": S, "minItems": 3, "maxItems": 3}}),
        {"colors": ["red", "yellow", "blue"]},
        [{"colors": ["red", "blue", "yellow"]}],
    ),
    _json(
        5,
        "Classify the sentiment of this review as positive, negative or neutral and return "
        'JSON {"sentiment": ...}: I love this phone, the battery lasts all day.',
        _obj({"sentiment": {"enum": ["positive", "negative", "neutral"]}}),
        {"sentiment": "positive"},
        [{"sentiment": "positive"}, {"sentiment": "Positive"}],
    ),
    _json(
        6,
        "Convert the date March 5, 2024 to a JSON object with integer keys year, month and day.",
        _obj(
            {
                "year": I,
                "month": {"type": "integer", "minimum": 1, "maximum": 12},
                "day": {"type": "integer", "minimum": 1, "maximum": 31},
            }
        ),
        {"year": 2024, "month": 3, "day": 5},
        [{"day": 5, "month": 3, "year": 2024}],
    ),
    _json(
        7,
        "Return a JSON object with keys event, time (HH:MM) and place for: Team lunch at 12:30 at Cafe Rio.",
        _obj({"event": S, "time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"}, "place": S}),
        {"event": "Team lunch", "time": "12:30", "place": "Cafe Rio"},
        [{"event": "team lunch", "time": "12:30", "place": "Cafe Rio"}],
    ),
    _json(
        8,
        "Return a JSON object with name and a nested address object (street, city) for: "
        "John lives at 12 Oak Street in Denver.",
        _obj({"name": S, "address": _obj({"street": S, "city": S}, top=False)}),
        {"name": "John", "address": {"street": "12 Oak Street", "city": "Denver"}},
        [{"name": "John", "address": {"city": "Denver", "street": "12 Oak Street"}}],
    ),
    _json(
        9,
        'Is 17 a prime number? Reply as JSON {"answer": true or false}.',
        _obj({"answer": B}),
        {"answer": True},
        ['{"answer":true}', "true"],
    ),
    _json(
        10,
        'What is 12 times 11? Reply as JSON {"result": <integer>}.',
        _obj({"result": I}),
        {"result": 132},
        ['{"result":132}', "132"],
    ),
    _json(
        11,
        "Return JSON with keys animal and class (one of mammal, fish, bird, reptile) for a whale.",
        _obj({"animal": S, "class": {"enum": ["mammal", "fish", "bird", "reptile"]}}),
        {"animal": "whale", "class": "mammal"},
        [{"animal": "Whale", "class": "mammal"}],
    ),
    _json(
        12,
        "Return JSON with a list items of objects with name and qty for this shopping list: "
        "2 eggs and 1 loaf of bread.",
        _obj({"items": {"type": "array", "minItems": 1, "items": _obj({"name": S, "qty": I}, top=False)}}),
        {"items": [{"name": "eggs", "qty": 2}, {"name": "bread", "qty": 1}]},
        [{"items": [{"name": "egg", "qty": 2}, {"name": "bread", "qty": 1}]}],
    ),
    _regex(
        13,
        "What is the date of Christmas Day 2025? Reply in YYYY-MM-DD format.",
        r"\d{4}-\d{2}-\d{2}",
        "2025-12-25",
        ["25 December 2025"],
    ),
    _regex(
        14,
        "Format the US phone number 555 123 4567 as (XXX) XXX-XXXX.",
        r"\(\d{3}\) \d{3}-\d{4}",
        "(555) 123-4567",
        ["555-123-4567"],
    ),
    _regex(
        15,
        "Give the hex color code for pure red in the form #RRGGBB.",
        r"#[0-9A-Fa-f]{6}",
        "#FF0000",
        ["#ff0000"],
    ),
    _regex(
        16, "What is 3:45 PM in 24-hour HH:MM format?", r"([01]\d|2[0-3]):[0-5]\d", "15:45", ["15:45 hours"]
    ),
    _regex(17, "Is the Earth round? Reply with exactly YES or NO.", r"YES|NO", "YES", ["Yes"]),
    _regex(
        18,
        "Make an email address for the user jsmith at the domain example.com.",
        r"[a-z0-9._]+@[a-z0-9.-]+\.[a-z]{2,}",
        "jsmith@example.com",
        ["jsmith at example.com"],
    ),
    _regex(19, "How many minutes are in two hours? Reply with digits only.", r"\d+", "120", ["120 minutes"]),
    _regex(
        20,
        "Write twelve dollars and fifty cents as a price like $0.00.",
        r"\$\d+\.\d{2}",
        "$12.50",
        ["12.50 dollars"],
    ),
    _regex(21, "Give the three-letter IATA airport code for London Heathrow.", r"[A-Z]{3}", "LHR", ["lhr"]),
    _regex(
        22,
        "A program is at version 2.3.9. What is the version after a minor version bump? "
        "Reply as MAJOR.MINOR.PATCH.",
        r"\d+\.\d+\.\d+",
        "2.4.0",
        ["version 2.4.0"],
    ),
    _grammar(
        23,
        "List three fruits as a numbered list.",
        {"shape": "numbered_list", "min_items": 3, "max_items": 3},
        "1. Apple\n2. Banana\n3. Cherry",
        ["1. Apple\n2. Orange\n3. Banana"],
    ),
    _grammar(
        24,
        "List the first four planets from the Sun as a numbered list.",
        {"shape": "numbered_list", "min_items": 4, "max_items": 4},
        "1. Mercury\n2. Venus\n3. Earth\n4. Mars",
        ["1. Mercury\n2. Venus\n3. Earth\n4. Mars."],
    ),
    _grammar(
        25,
        "Give two tips for saving energy at home as a bullet list.",
        {"shape": "bullet_list", "min_items": 2, "max_items": 4},
        "- Turn off the lights when you leave a room\n- Unplug chargers when not in use",
        ["- Switch off lights you are not using\n- Unplug devices when not in use"],
    ),
    _grammar(
        26,
        "List the three primary colors of paint as a bullet list.",
        {"shape": "bullet_list", "min_items": 3, "max_items": 3},
        "- Red\n- Yellow\n- Blue",
        ["* Red\n* Yellow\n* Blue"],
    ),
    _grammar(
        27,
        "Write key: value lines with the keys name and age for: Omar is 29 years old.",
        {"shape": "key_value", "keys": ["name", "age"]},
        "name: Omar\nage: 29",
        ["age: 29\nname: Omar"],
    ),
    _grammar(
        28,
        "Write key: value lines with the keys city and country for: Tokyo is in Japan.",
        {"shape": "key_value", "keys": ["city", "country"]},
        "city: Tokyo\ncountry: Japan",
        ["country: Japan\ncity: Tokyo"],
    ),
    _grammar(
        29,
        "Write a CSV with the header name,age,city and one row for Alice, 28, from Oslo.",
        {"shape": "csv", "columns": 3, "header": ["name", "age", "city"]},
        "name,age,city\nAlice,28,Oslo",
        ["name, age, city\nAlice, 28, Oslo"],
    ),
    _grammar(
        30,
        "Write CSV rows without a header, columns product,price, for: a pen costs 2 and a book costs 12.",
        {"shape": "csv", "columns": 2},
        "pen,2\nbook,12",
        ["Pen,2\nBook,12"],
    ),
    _grammar(
        31,
        "Is water wet? Answer yes or no only.",
        {"shape": "one_of", "options": ["yes", "no"]},
        "yes",
        ["Yes"],
    ),
    _grammar(
        32,
        "Classify the sentiment of this review as positive, negative or neutral: "
        "The service was slow and the food was cold.",
        {"shape": "one_of", "options": ["positive", "negative", "neutral"]},
        "negative",
        ["Negative"],
    ),
]
