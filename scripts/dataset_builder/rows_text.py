"""Text (TXT) rows: short factual answers, translations, six summaries, word problems."""

from __future__ import annotations

from .rowkit import row


def _txt(n: int, task: str, prompt: str, ref: str, variants=(), **kw) -> dict:
    return row(f"TXT-{n:03d}", task, prompt, reference=ref, variants=variants, **kw)


SUMMARY = "Summarize the following passage in one sentence.\n\n"
PASSAGES = [
    (
        (
            "The town of Greenfield opened a new public library last month. The building has three floors, "
            "a children's reading room, a small café and forty computers that anyone with a library card can "
            "use for free. The old library, which was built in 1952, had become too small for the growing "
            "population and its roof leaked every winter. The mayor said the project cost eleven million "
            "dollars and was paid for by a local tax that voters approved four years ago. On the first "
            "weekend more than five thousand people visited, and the librarians signed up nine hundred new "
            "members."
        ),
        "Greenfield opened a larger new public library that replaced the old leaking one.",
        [
            "Greenfield opened a new three-floor library to replace its old, too small library.",
            "The town of Greenfield opened a new public library that many people visited.",
        ],
    ),
    (
        (
            "Honeybees communicate the location of food with a movement called the waggle dance. A worker "
            "that has found flowers returns to the hive and walks in a figure-eight pattern, shaking her body "
            "during the straight part of the run. The angle of that straight run relative to vertical tells "
            "the other bees the direction of the food relative to the sun, and the length of the waggle tells "
            "them how far away it is. Scientists first decoded the dance in the 1940s, and the discovery "
            "later earned a Nobel Prize."
        ),
        "Honeybees use a waggle dance to tell other bees the direction and distance of food.",
        [
            "Bees perform a waggle dance that shows where food is and how far away it is.",
            "The honeybee waggle dance communicates the direction and distance of food.",
        ],
    ),
    (
        (
            "Many people think that the best time to water a garden is in the middle of the day, when plants "
            "look thirsty. Gardeners recommend the early morning instead. In the morning the air is cool and "
            "the wind is usually calm, so less water evaporates before it reaches the roots. Plants then have "
            "moisture available through the hottest part of the day. Watering in the evening is the second "
            "best choice, but leaves that stay wet overnight are more likely to develop fungal diseases."
        ),
        "The best time to water a garden is early morning, because less water evaporates.",
        [
            "Gardeners recommend watering in the early morning rather than midday or evening.",
            "Water your garden in the early morning so less water is lost.",
        ],
    ),
    (
        (
            "A small software company noticed that its customer support team was answering the same twenty "
            "questions again and again. The team wrote a clear help page for each of those questions and "
            "added a search box to the support form, so customers saw matching answers before they sent a "
            "message. Within three months the number of support emails fell by forty percent, and the "
            "average time to answer the remaining emails dropped from two days to six hours."
        ),
        "Writing help pages for common questions cut support emails and sped up answers.",
        [
            "The company reduced support emails by forty percent by writing help pages for common questions.",
            "Help pages for frequent questions reduced support emails and response time.",
        ],
    ),
    (
        (
            "Sleep researchers say that teenagers naturally fall asleep later than adults because their body "
            "clock shifts during puberty. When schools start very early, many students get far less than the "
            "eight to ten hours of sleep they need. Several school districts moved their start times from "
            "7:30 to 8:30 in the morning. Students in those districts slept longer, were late less often and "
            "had slightly better grades, and fewer of them reported feeling sleepy in class."
        ),
        "Starting school later helps teenagers sleep more and do better in school.",
        [
            "Later school start times gave teenagers more sleep and better results.",
            "Schools that start later help teenagers get enough sleep.",
        ],
    ),
    (
        (
            "The Great Wall of China is not one single wall but a series of walls built over about two "
            "thousand years by different dynasties. Most of the wall that visitors see today was built during "
            "the Ming dynasty, between the fourteenth and seventeenth centuries, using bricks and stone. "
            "Earlier sections were often made of packed earth and have largely worn away. The wall was meant "
            "to protect against raids from the north and to control trade and movement along the border."
        ),
        "The Great Wall is a series of walls built over two thousand years, mostly by the Ming dynasty.",
        [
            "The Great Wall of China is many walls built over centuries, with most of today's wall from the Ming.",
            "The Great Wall was built by many dynasties to protect the northern border.",
        ],
    ),
]

TEXT_ROWS = [
    _txt(1, "qa", "What is the capital of Japan?", "Tokyo", ["The capital of Japan is Tokyo."]),
    _txt(2, "qa", "How many legs does a spider have?", "Eight", ["8", "A spider has eight legs."]),
    _txt(
        3,
        "qa",
        "What gas do plants absorb from the air for photosynthesis?",
        "Carbon dioxide",
        ["CO2", "Plants absorb carbon dioxide."],
    ),
    _txt(4, "qa", "Which planet is known as the Red Planet?", "Mars", ["Mars is the Red Planet."]),
    _txt(5, "qa", "What is the largest ocean on Earth?", "The Pacific Ocean", ["Pacific", "Pacific Ocean"]),
    _txt(
        6,
        "qa",
        "Who wrote the play Romeo and Juliet?",
        "William Shakespeare",
        ["Shakespeare", "It was written by William Shakespeare."],
    ),
    _txt(
        7,
        "qa",
        "What is the boiling point of water at sea level in Celsius?",
        "100 degrees Celsius",
        ["100", "100 °C"],
    ),
    _txt(8, "qa", "How many continents are there?", "Seven", ["7", "There are seven continents."]),
    _txt(9, "qa", "What is the chemical symbol for gold?", "Au", ["The symbol for gold is Au."]),
    _txt(
        10,
        "qa",
        "In which year did humans first land on the Moon?",
        "1969",
        ["In 1969.", "Humans first landed on the Moon in 1969."],
    ),
    _txt(
        11,
        "qa",
        "What is the freezing point of water in Fahrenheit?",
        "32 degrees Fahrenheit",
        ["32", "32 °F"],
    ),
    _txt(
        12, "qa", "What is the longest river in South America?", "The Amazon", ["Amazon", "The Amazon River"]
    ),
    _txt(13, "translation", "Translate into French: Good morning.", "Bonjour.", ["Bonjour", "Bonjour !"]),
    _txt(
        14,
        "translation",
        "Translate into Spanish: Thank you very much.",
        "Muchas gracias.",
        ["Muchas gracias", "Gracias."],
    ),
    _txt(
        15,
        "translation",
        "Translate into German: Where is the station?",
        "Wo ist der Bahnhof?",
        ["Wo ist die Station?", "Wo ist der Bahnhof"],
    ),
    _txt(
        16,
        "translation",
        "Translate into English: Je voudrais un café, s'il vous plaît.",
        "I would like a coffee, please.",
        ["I'd like a coffee, please.", "I would like a coffee please."],
    ),
    _txt(
        17,
        "translation",
        "Translate into English: El libro está sobre la mesa.",
        "The book is on the table.",
        ["The book is on the table", "The book lies on the table."],
    ),
    _txt(18, "translation", "Translate into Italian: I love you.", "Ti amo.", ["Ti amo", "Ti voglio bene."]),
    _txt(
        19,
        "translation",
        "Translate into English: Ich habe zwei Katzen.",
        "I have two cats.",
        ["I have two cats", "I've got two cats."],
    ),
    *[
        _txt(20 + i, "summarization", SUMMARY + passage, ref, variants, max_output_tokens=64)
        for i, (passage, ref, variants) in enumerate(PASSAGES)
    ],
    _txt(
        26,
        "reasoning",
        "All cats are animals. Tom is a cat. Is Tom an animal? Answer yes or no.",
        "Yes",
        ["yes", "Yes, Tom is an animal."],
    ),
    _txt(
        27,
        "reasoning",
        "Anna is taller than Ben. Ben is taller than Carl. Who is the shortest?",
        "Carl",
        ["Carl is the shortest."],
    ),
    _txt(
        28,
        "reasoning",
        "If today is Monday, what day will it be in three days?",
        "Thursday",
        ["It will be Thursday."],
    ),
    _txt(
        29,
        "reasoning",
        "Which word does not belong: apple, banana, carrot, cherry?",
        "Carrot",
        ["carrot", "Carrot, because it is a vegetable."],
    ),
    _txt(
        30,
        "reasoning",
        "A box holds only red and blue balls. It has no red balls. What color is any ball taken from it?",
        "Blue",
        ["blue", "The ball is blue."],
    ),
    _txt(
        31,
        "reasoning",
        "What comes next in the sequence 2, 4, 8, 16?",
        "32",
        ["thirty-two", "The next number is 32."],
    ),
    _txt(
        32,
        "reasoning",
        "The cup is on the table and the book is under the table. Which object is higher?",
        "The cup",
        ["cup", "The cup is higher."],
    ),
    _txt(
        33,
        "reasoning",
        "Mia was born before Leo, and Leo was born before Sam. Who is the oldest?",
        "Mia",
        ["Mia is the oldest."],
    ),
    _txt(34, "math", "What is 17 plus 25?", "42", ["forty-two", "17 plus 25 is 42."]),
    _txt(35, "math", "What is 9 times 8?", "72", ["seventy-two", "9 times 8 is 72."]),
    _txt(
        36,
        "math",
        "A shirt costs 20 dollars and is 25 percent off. What is the sale price?",
        "15 dollars",
        ["$15", "15"],
    ),
    _txt(
        37,
        "math",
        "Sara has 12 apples and gives away 5. How many apples does she have left?",
        "7",
        ["seven", "She has 7 apples left."],
    ),
    _txt(
        38,
        "math",
        "A train travels 60 kilometres per hour for 3 hours. How far does it go?",
        "180 kilometres",
        ["180 km", "180"],
    ),
    _txt(39, "math", "What is 144 divided by 12?", "12", ["twelve", "144 divided by 12 is 12."]),
    _txt(
        40,
        "math",
        "A rectangle is 5 metres long and 4 metres wide. What is its area?",
        "20 square metres",
        ["20", "20 m²"],
    ),
    _txt(41, "math", "Pencils cost 3 dollars each. How much do 6 pencils cost?", "18 dollars", ["$18", "18"]),
]
