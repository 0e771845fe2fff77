"""Tool-call parsing (JSON, wrappers, Python syntax) and argument matching."""

from __future__ import annotations

import pytest

from orchestrator.datasets.types import ExpectedCall
from orchestrator.scoring.toolcall import check_call, parse_call, values_match

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer"},
            },
            "required": ["city"],
        },
    },
}
TOOLS = (WEATHER,)
EXPECT = ExpectedCall("get_weather", {"city": "Paris", "unit": "celsius"})


@pytest.mark.parametrize(
    "output",
    [
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
        '```json\n{"name": "get_weather", "arguments": {"city": "paris", "unit": "Celsius"}}\n```',
        'Calling: {"tool_call": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}',
        '{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\", \\"unit\\": \\"celsius\\"}"}}',
        (
            '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", '
            '"arguments": "{\\"city\\":\\"Paris\\",\\"unit\\":\\"celsius\\"}"}}]}'
        ),
        '[{"name": "get_weather", "parameters": {"city": " Paris ", "unit": "celsius"}}]',
        'get_weather(city="Paris", unit="celsius")',
        "[get_weather(city='Paris', unit='celsius')]",
        "I'll check. functions.get_weather(city = 'PARIS', unit='celsius')",
        'get_weather("Paris", "celsius")',  # positional -> parameters in declared order
    ],
)
def test_expected_call_in_every_accepted_shape_passes(output: str) -> None:
    check = check_call(EXPECT, output, TOOLS)
    assert check.failed is None, check.failed
    assert check.call is not None and check.call.name == "get_weather"


@pytest.mark.parametrize(
    ("output", "failed"),
    [
        ('{"name": "get_time", "arguments": {"city": "Paris"}}', "called 'get_time', expected 'get_weather'"),
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', "missing argument 'unit'"),
        ('{"name": "get_weather", "arguments": {"city": "London", "unit": "celsius"}}', "argument 'city' is"),
        (
            '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "mood": "happy"}}',
            "unexpected argument 'mood'",
        ),
        (
            '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "days": "many"}}',
            "argument 'days': 'many' is not of type 'integer'",
        ),
        ('{"name": "get_weather", "arguments": "{city: Paris}"}', "arguments are not valid JSON"),
        ('{"name": "get_weather", "arguments": ["Paris"]}', "arguments are a list"),
        ('{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}', "no tool call found"),
        ("The weather in Paris is sunny.", "no tool call found"),
        ("", "no tool call found"),
    ],
)
def test_wrong_calls_fail_with_the_check_that_failed(output: str, failed: str) -> None:
    check = check_call(EXPECT, output, TOOLS)
    assert check.failed is not None and check.failed.startswith(failed), check.failed


def test_extra_documented_argument_with_valid_value_passes() -> None:
    out = '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "days": 3}}'
    assert check_call(EXPECT, out, TOOLS).failed is None


def test_extra_documented_argument_outside_its_enum_fails() -> None:
    expect = ExpectedCall("get_weather", {"city": "Paris"})
    out = '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}'
    assert check_call(expect, out, TOOLS).failed.startswith("argument 'unit': 'kelvin' is not one of")


def test_refusal_rows() -> None:
    refuse = ExpectedCall(refuse=True)
    assert check_call(refuse, "Sorry, I can't book flights with the tools I have.", TOOLS).failed is None
    assert check_call(refuse, "I can't do that (no booking tool).", TOOLS).failed is None
    assert "empty output" in check_call(refuse, "  ", TOOLS).failed
    made = check_call(refuse, '{"name": "get_weather", "arguments": {"city": "Paris"}}', TOOLS)
    assert made.call is not None and "where a text refusal was expected" in made.failed
    assert check_call(refuse, "get_weather(city='Paris')", TOOLS).failed is not None


def test_prose_with_parentheses_is_not_a_call() -> None:
    assert parse_call("It is warm (about 20 degrees) today.", TOOLS) is None
    assert parse_call("print(x)", TOOLS) is None  # not a literal argument, not a known tool


def test_first_call_is_taken() -> None:
    out = '{"name": "get_weather", "arguments": {"city": "Rome"}} {"name": "get_weather", "arguments": {}}'
    assert parse_call(out, TOOLS).arguments == {"city": "Rome"}


@pytest.mark.parametrize(
    ("want", "got", "same"),
    [
        (3, 3.0, True),
        (3, "3", True),
        ("3", 3, True),
        (2.5, "2.50", True),
        (3, 4, False),
        (True, "true", True),
        (True, 1, False),
        (False, 0, False),
        ("New  York", " new york ", True),
        ("New York", "NewYork", False),
        ("3", "3.0", False),  # two strings compare as text
        (None, None, True),
        (None, "", False),
        (["a", 1], ["A", 1.0], True),
        (["a", "b"], ["b", "a"], False),
        ({"x": 1}, {"x": "1"}, True),
        ({"x": 1}, {"x": 1, "y": 2}, False),
    ],
)
def test_values_match(want, got, same: bool) -> None:
    assert values_match(want, got) is same
