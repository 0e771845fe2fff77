"""Combination (CMB) rows: image + spoken question, or image + text needing both."""

from __future__ import annotations

from .rowkit import row


def _cmb(n: int, prompt: str, ref: str, variants=(), images=(), audio=(), **kw) -> dict:
    return row(
        f"CMB-{n:03d}",
        "cross_modal",
        prompt,
        images=images,
        audio=audio,
        reference=ref,
        variants=variants,
        **kw,
    )


ABOUT_IMAGE = "Answer the spoken question about the image."
COMBINATION_ROWS = [
    _cmb(1, ABOUT_IMAGE, "Green", ["The triangle is green.", "green"], ["IMG-001.png"], ["CMB-001.wav"]),
    _cmb(2, ABOUT_IMAGE, "2.25", ["$2.25", "The bagel cost 2.25."], ["IMG-012.png"], ["CMB-002.wav"]),
    _cmb(3, ABOUT_IMAGE, "9", ["nine", "Wednesday has a value of 9."], ["IMG-008.png"], ["CMB-003.wav"]),
    _cmb(4, ABOUT_IMAGE, "Off", ["Bluetooth is off.", "It is turned off."], ["IMG-011.png"], ["CMB-004.wav"]),
    _cmb(
        5, ABOUT_IMAGE, "7:30", ["half past seven", "The clock shows 7:30."], ["CMB-005.png"], ["CMB-005.wav"]
    ),
    _cmb(6, ABOUT_IMAGE, "B", ["Box B", "Box B is green."], ["CMB-006.png"], ["CMB-006.wav"]),
    _cmb(
        7, ABOUT_IMAGE, "Rent", ["Rent has the largest share.", "Rent, 40%"], ["IMG-009.png"], ["CMB-007.wav"]
    ),
    _cmb(8, ABOUT_IMAGE, "$4", ["4 dollars", "The soup costs $4."], ["CMB-008.png"], ["CMB-008.wav"]),
    _cmb(9, ABOUT_IMAGE, "Log In", ["The button says Log In.", "Log in"], ["IMG-010.png"], ["CMB-009.wav"]),
    _cmb(
        10,
        ABOUT_IMAGE,
        "Dentist at 10:00",
        ["Dentist 10:00", "A dentist appointment at 10:00."],
        ["CMB-010.png"],
        ["CMB-010.wav"],
    ),
    _cmb(11, ABOUT_IMAGE, "6", ["six", "There are 6 circles."], ["IMG-023.png"], ["CMB-011.wav"]),
    _cmb(12, ABOUT_IMAGE, "9", ["9 degrees", "It was 9 degrees in March."], ["IMG-026.png"], ["CMB-012.wav"]),
    _cmb(
        13,
        "Does this caption match the image: 'two red circles and three blue circles'? Answer yes or no.",
        "No",
        ["no", "No, there are three red circles and two blue circles."],
        ["IMG-002.png"],
    ),
    _cmb(
        14,
        "Does this caption match the image: 'a red circle, a blue square and a green triangle'? "
        "Answer yes or no.",
        "Yes",
        ["yes", "Yes, the caption matches."],
        ["IMG-001.png"],
    ),
    _cmb(
        15,
        "A driver sees this traffic light. Should they stop or go?",
        "Stop",
        ["They should stop.", "stop"],
        ["IMG-014.png"],
    ),
    _cmb(
        16,
        "Based on this weather icon, should I take an umbrella? Answer yes or no.",
        "Yes",
        ["yes", "Yes, it is going to rain."],
        ["IMG-031.png"],
    ),
    _cmb(
        17,
        "The customer paid for everything on this receipt with a 20 dollar bill. How much change do "
        "they get?",
        "10.25",
        ["$10.25", "They get 10.25 in change."],
        ["IMG-012.png"],
    ),
    _cmb(
        18,
        "What is the sum of the values for Monday and Thursday in this chart?",
        "27",
        ["twenty-seven", "The sum is 27."],
        ["IMG-008.png"],
    ),
    _cmb(
        19,
        "The monthly budget in this chart is 2000 dollars. How much goes to Transport?",
        "400 dollars",
        ["$400", "400"],
        ["IMG-009.png"],
    ),
    _cmb(
        20,
        "Which letter labels the largest circle: A, B or C?",
        "B",
        ["Circle B", "B is the largest."],
        ["CMB-020.png"],
    ),
    _cmb(
        21,
        "How much of the download shown in the image is still left?",
        "25%",
        ["25 percent", "25% is left."],
        ["IMG-030.png"],
    ),
    _cmb(
        22,
        "The original price of this item was $29.99. How much do you save at the sale price?",
        "$10",
        ["10 dollars", "You save $10."],
        ["IMG-028.png"],
    ),
    _cmb(
        23,
        "Who is the oldest person in the table?",
        "Chen",
        ["Chen, who is 41.", "Chen is the oldest."],
        ["IMG-034.png"],
    ),
    _cmb(
        24,
        "I want to use wireless headphones. Which setting on this screen should I turn on?",
        "Bluetooth",
        ["Turn on Bluetooth.", "bluetooth"],
        ["IMG-011.png"],
    ),
    _cmb(
        25,
        "Look at the receipt and listen to the audio. What is the new total?",
        "11.75",
        ["$11.75", "The new total is 11.75."],
        ["IMG-012.png"],
        ["CMB-025.wav"],
    ),
    _cmb(
        26,
        "Listen to the request and look at the image. Which shape does the speaker mean?",
        "The circle",
        ["circle", "The yellow circle."],
        ["CMB-026.png"],
        ["CMB-026.wav"],
    ),
    _cmb(
        27,
        "Answer the spoken question using the chart.",
        "Thursday",
        ["Thu", "Thursday had fifteen visitors."],
        ["IMG-008.png"],
        ["CMB-027.wav"],
    ),
    _cmb(
        28,
        "Look at the clock and listen. At what time does the meeting start?",
        "5:00",
        ["five o'clock", "The meeting starts at 5:00."],
        ["IMG-027.png"],
        ["CMB-028.wav"],
    ),
]
