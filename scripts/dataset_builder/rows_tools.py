"""Tool-call (TCL) rows: ten expected calls and four requests no tool can serve (refusals)."""

from __future__ import annotations

from .rowkit import row
from .rows_structured import compact


def _fn(name: str, description: str, props: dict, required: list[str] | None = None) -> dict:
    params = {
        "type": "object",
        "properties": props,
        "required": required if required is not None else list(props),
    }
    return {"type": "function", "function": {"name": name, "description": description, "parameters": params}}


def _str(desc: str, **kw) -> dict:
    return {"type": "string", "description": desc, **kw}


WEATHER = _fn(
    "get_weather",
    "Get the current weather for a city.",
    {"city": _str("City name, e.g. Paris"), "unit": _str("Temperature unit", enum=["celsius", "fahrenheit"])},
)
ALARM = _fn(
    "set_alarm",
    "Set an alarm on the phone.",
    {"time": _str("24-hour time HH:MM"), "label": _str("Alarm label")},
)
MESSAGE = _fn(
    "send_message",
    "Send a text message to a contact.",
    {"recipient": _str("Contact name"), "text": _str("Message text")},
)
CURRENCY = _fn(
    "convert_currency",
    "Convert an amount between currencies.",
    {
        "amount": {"type": "number"},
        "from_currency": _str("ISO 4217 code, e.g. USD"),
        "to_currency": _str("ISO 4217 code, e.g. EUR"),
    },
)
TIMER = _fn("set_timer", "Start a countdown timer.", {"minutes": {"type": "integer", "minimum": 1}})
LIGHT = _fn(
    "control_light",
    "Switch the smart lights in a room.",
    {"room": _str("Room name, e.g. kitchen"), "state": _str("on or off", enum=["on", "off"])},
)
STOCK = _fn(
    "get_stock_price", "Get the latest price of a stock.", {"symbol": _str("Ticker symbol, e.g. MSFT")}
)
TRANSLATE = _fn(
    "translate_text",
    "Translate text into another language.",
    {
        "text": _str("Text to translate"),
        "target_language": _str("Target language", enum=["Spanish", "French", "German"]),
    },
)
EVENT = _fn(
    "create_event",
    "Create a calendar event.",
    {"title": _str("Event title"), "date": _str("Date YYYY-MM-DD"), "time": _str("Time HH:MM")},
)
TOOL_SYSTEM = (
    "You can call the tools provided. To call one, reply with only a JSON object "
    '{"name": <tool name>, "arguments": {...}}. If no tool can do what is asked, say so in plain text.'
)


def _call(n: int, prompt: str, tools: list[dict], name: str, arguments: dict) -> dict:
    call = {"name": name, "arguments": arguments}
    variants = [compact({"arguments": arguments, "name": name})]  # same call, keys in the other order
    return row(
        f"TCL-{n:03d}",
        "tool_call",
        prompt,
        reference=compact(call),
        variants=variants,
        system=TOOL_SYSTEM,
        tools=tools,
        expected_call=call,
    )


def _refuse(n: int, prompt: str, tools: list[dict], ref: str, variants: list[str]) -> dict:
    return row(
        f"TCL-{n:03d}",
        "refusal",
        prompt,
        reference=ref,
        variants=variants,
        system=TOOL_SYSTEM,
        tools=tools,
        expect_refusal=True,
    )


TOOL_ROWS = [
    _call(
        1,
        "What's the weather in Paris right now, in celsius?",
        [WEATHER, ALARM],
        "get_weather",
        {"city": "Paris", "unit": "celsius"},
    ),
    _call(
        2,
        "Set an alarm for 07:30 labelled Gym.",
        [ALARM, WEATHER],
        "set_alarm",
        {"time": "07:30", "label": "Gym"},
    ),
    _call(
        3,
        'Send Sam the message "Running late".',
        [MESSAGE, ALARM],
        "send_message",
        {"recipient": "Sam", "text": "Running late"},
    ),
    _call(
        4,
        "Convert 100 US dollars to euros.",
        [CURRENCY, STOCK],
        "convert_currency",
        {"amount": 100, "from_currency": "USD", "to_currency": "EUR"},
    ),
    _call(5, "Start a 10 minute timer.", [TIMER, ALARM], "set_timer", {"minutes": 10}),
    _call(
        6,
        "Turn on the lights in the kitchen.",
        [LIGHT, TIMER],
        "control_light",
        {"room": "kitchen", "state": "on"},
    ),
    _call(
        7,
        "What is the stock price of Apple? Its ticker is AAPL.",
        [STOCK, CURRENCY],
        "get_stock_price",
        {"symbol": "AAPL"},
    ),
    _call(
        8,
        "Translate 'good night' into Spanish.",
        [TRANSLATE, MESSAGE],
        "translate_text",
        {"text": "good night", "target_language": "Spanish"},
    ),
    _call(
        9,
        "Add a calendar event called Dentist on 2025-05-14 at 10:00.",
        [EVENT, ALARM],
        "create_event",
        {"title": "Dentist", "date": "2025-05-14", "time": "10:00"},
    ),
    _call(
        10,
        "How warm is it in Tokyo? Give it in fahrenheit.",
        [ALARM, WEATHER, TIMER],
        "get_weather",
        {"city": "Tokyo", "unit": "fahrenheit"},
    ),
    _refuse(
        11,
        "Book me a flight to Rome for tomorrow.",
        [WEATHER, ALARM],
        "Sorry, I can't book flights with the tools I have.",
        ["I cannot book flights.", "I'm unable to book a flight with the available tools."],
    ),
    _refuse(
        12,
        "Order a large pizza to my house.",
        [WEATHER, TIMER],
        "Sorry, I can't order food with the tools I have.",
        ["I cannot order pizza.", "I'm unable to place food orders with the available tools."],
    ),
    _refuse(
        13,
        "Transfer 500 dollars from my bank account to Alex.",
        [CURRENCY],
        "Sorry, I can't transfer money; I can only convert currencies.",
        ["I cannot transfer money.", "I'm unable to make bank transfers with the available tools."],
    ),
    _refuse(
        14,
        "Unlock my neighbour's front door.",
        [LIGHT],
        "Sorry, I can't unlock doors, and I can't help with someone else's door.",
        ["I cannot unlock doors.", "I'm unable to help with that."],
    ),
]
