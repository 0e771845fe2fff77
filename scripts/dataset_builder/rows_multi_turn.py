"""Multi-turn (MTR) rows: recall of earlier turns; kv_cache_stress rows open with a long turn."""

from __future__ import annotations

from .rowkit import row


def _mtr(n: int, task: str, turns: list[str], ref: str, variants=(), **kw) -> dict:
    return row(f"MTR-{n:03d}", task, turns=turns, reference=ref, variants=variants, **kw)


NOTES = (
    "Here are my notes from the planning meeting. The team agreed to launch the new weather app on the "
    "twelfth of October. Priya will design the home screen and the settings page. Omar is responsible "
    "for the server, which will run in the Frankfurt data centre. The budget for the first year is "
    "eighty thousand euros, and half of it is reserved for testing on older phones. The app will "
    "support English, German and Portuguese at launch. The code name of the project is Kestrel. "
    "Marketing will start two weeks before launch with a short video. Lena from the design agency will "
    "review the icons in the first week of September, and the legal team still needs to approve the "
    "privacy policy. A beta version goes to two hundred volunteers at the end of August; their feedback "
    "is collected in a shared spreadsheet that Omar maintains. Support requests after launch go to a "
    "new mailbox, and the team will meet every Tuesday at ten to check progress. If the launch slips, "
    "the fallback date is the second of November. Please just say OK for now."
)
RECIPE = (
    "I will share a recipe. Lemon cake: mix 200 grams of flour, 150 grams of sugar and 2 teaspoons of "
    "baking powder. In another bowl beat 3 eggs with 120 millilitres of milk, 100 grams of melted "
    "butter and the zest of 2 lemons. Combine both bowls and stir until smooth. Pour into a greased "
    "tin and bake at 180 degrees Celsius for 40 minutes. While it bakes, mix the juice of one lemon "
    "with 80 grams of powdered sugar for the glaze. Pour the glaze over the cake while it is still warm. "
    "The cake keeps for three days in a closed box and can be frozen for a month. For a lighter version, "
    "replace half of the butter with plain yogurt, and for a gluten-free version use almond flour and "
    "add one more egg. My grandmother always decorated it with thin slices of candied lemon and a few "
    "mint leaves, and she served it with black tea in the afternoon. Reply with OK."
)
TRIP = (
    "Let me describe my trip plan. Day one: fly from Dublin to Lisbon, arriving at 14:05, and check "
    "into the Hotel Azul near the river. Day two: take the tram number 28 to the castle in the morning, "
    "and visit the tile museum in the afternoon. Day three: take a train to Sintra to see the palace, "
    "then return for dinner at a restaurant called Casa Verde. Day four: a free day at the beach in "
    "Cascais. Day five: fly home at 09:40. My travel companion is my cousin Niamh. We booked the hotel "
    "for four nights with breakfast included, and the room has a balcony facing the water. I still "
    "need to buy a transport card at the airport, exchange a little money and check whether the "
    "palace in Sintra needs tickets in advance. Niamh wants to try custard tarts at a famous bakery in "
    "Belem, so we might go there on the second evening. The weather forecast says sunny and "
    "twenty-four degrees for most of the week. Just acknowledge."
)
INVENTORY = (
    "This is the stock list of our shop. Shelf A holds 14 red notebooks and 9 blue notebooks. Shelf B "
    "holds 30 pencils, 12 erasers and 5 rulers. Shelf C holds 7 backpacks, 3 of them green and 4 black. "
    "The storage room has 2 boxes of printer paper and 1 box of envelopes. The shop opens at 8:30 and "
    "closes at 18:00, and the manager on duty today is Mr. Alvarez. A delivery of 40 more pencils and "
    "10 glue sticks is expected on Thursday morning. Last week we sold 6 red notebooks, 11 pencils and "
    "2 black backpacks. The price of a notebook is 3 euros, a pencil costs 80 cents and a backpack "
    "costs 35 euros. The card machine at the second till is broken, so customers should pay at the "
    "first till. Say OK when you have read it."
)
MULTI_TURN_ROWS = [
    _mtr(
        1, "context_retention", ["My name is Ada.", "What is my name?"], "Ada", ["Your name is Ada.", "Ada."]
    ),
    _mtr(
        2,
        "context_retention",
        ["I live in Toronto.", "I work as a nurse.", "Which city do I live in?"],
        "Toronto",
        ["You live in Toronto."],
    ),
    _mtr(
        3,
        "context_retention",
        ["My favorite color is green.", "What is 2 plus 2?", "What is my favorite color?"],
        "Green",
        ["Your favorite color is green."],
    ),
    _mtr(
        4,
        "context_retention",
        ["I have a dog called Biscuit.", "He is three years old.", "What is my dog's name?"],
        "Biscuit",
        ["Your dog is called Biscuit."],
    ),
    _mtr(
        5,
        "context_retention",
        [
            "Remember the number 482.",
            "Now tell me a color of the sky.",
            "What number did I ask you to remember?",
        ],
        "482",
        ["The number is 482."],
    ),
    _mtr(
        6,
        "context_retention",
        ["My brother is called Luis and my sister is called Marta.", "What is my sister's name?"],
        "Marta",
        ["Your sister is called Marta."],
    ),
    _mtr(
        7,
        "context_retention",
        ["I am planning a trip to Kenya in June.", "I will stay for ten days.", "How long will I stay?"],
        "Ten days",
        ["10 days", "You will stay ten days."],
    ),
    _mtr(
        8,
        "context_retention",
        ["Let's call the red box Alpha and the blue box Beta.", "Which box is blue?"],
        "Beta",
        ["The blue box is Beta.", "Beta."],
    ),
    _mtr(
        9,
        "context_retention",
        ["I bought 3 apples.", "Then I bought 4 more apples.", "How many apples did I buy in total?"],
        "7",
        ["seven", "You bought 7 apples."],
    ),
    _mtr(
        10,
        "context_retention",
        ["My flight number is BA 217.", "It leaves at 6 in the evening.", "What is my flight number?"],
        "BA 217",
        ["BA217", "Your flight is BA 217."],
    ),
    _mtr(
        11,
        "context_retention",
        ["Hi, I'm Kenji and I study chemistry.", "What subject do I study?"],
        "Chemistry",
        ["You study chemistry."],
    ),
    _mtr(
        12,
        "context_retention",
        [
            "The password for the game is 'tiger'.",
            "Do not tell anyone else.",
            "Can you remind me what the password is?",
            "Please just say the word.",
        ],
        "tiger",
        ["The password is tiger.", "Tiger."],
    ),
    _mtr(
        13,
        "context_retention",
        ["I am allergic to peanuts.", "Can I eat a peanut butter sandwich? Answer yes or no."],
        "No",
        ["no", "No, you are allergic to peanuts."],
    ),
    _mtr(
        14,
        "context_retention",
        ["My meeting is at 4 pm.", "Actually, it moved to 5 pm.", "What time is my meeting now?"],
        "5 pm",
        ["5:00 pm", "Your meeting is at 5 pm."],
    ),
    _mtr(
        15,
        "context_retention",
        [
            "Let's count fruits: I have an apple.",
            "I add a banana.",
            "I add a pear.",
            "I add an orange.",
            "How many fruits do I have?",
        ],
        "4",
        ["four", "You have 4 fruits."],
    ),
    _mtr(
        16,
        "context_retention",
        ["My car is a silver Toyota.", "I park it on Elm Street.", "What color is my car?"],
        "Silver",
        ["Your car is silver."],
    ),
    _mtr(
        17,
        "context_retention",
        ["Look at this picture.", "What color is the circle in the picture?"],
        "Red",
        ["The circle is red.", "red"],
        images=["IMG-001.png"],
        tags=["image"],
    ),
    _mtr(
        18,
        "context_retention",
        ["Listen to this question, but do not answer yet.", "Now answer the question from the audio."],
        "Paris",
        ["The capital of France is Paris."],
        audio=["AUD-009.wav"],
        tags=["audio"],
    ),
    _mtr(
        19,
        "kv_cache_stress",
        [NOTES, "Thanks. What else is on your mind?", "What is the project's code name?"],
        "Kestrel",
        ["The code name is Kestrel."],
        tags=["stress", "long_context"],
    ),
    _mtr(
        20,
        "kv_cache_stress",
        [NOTES, "Who designs the home screen?"],
        "Priya",
        ["Priya designs the home screen."],
        tags=["stress", "long_context"],
    ),
    _mtr(
        21,
        "kv_cache_stress",
        [RECIPE, "How many eggs does the cake need?", "At what temperature is it baked?"],
        "180 degrees Celsius",
        ["180 °C", "It is baked at 180 degrees."],
        tags=["stress", "long_context"],
    ),
    _mtr(
        22,
        "kv_cache_stress",
        [TRIP, "Sounds fun.", "What is the name of the restaurant on day three?"],
        "Casa Verde",
        ["The restaurant is Casa Verde."],
        tags=["stress", "long_context"],
    ),
    _mtr(
        23,
        "kv_cache_stress",
        [TRIP, "Which tram do I take?", "Who is my travel companion?"],
        "Niamh",
        ["Your cousin Niamh.", "Niamh, your cousin."],
        tags=["stress", "long_context"],
    ),
    _mtr(
        24,
        "kv_cache_stress",
        [INVENTORY, "Great.", "How many blue notebooks are on shelf A?"],
        "9",
        ["nine", "There are 9 blue notebooks."],
        tags=["stress", "long_context"],
    ),
]
