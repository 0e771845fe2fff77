"""Canned prompt/answer pairs the tiny model memorizes, and its chat templates.

The pairs are our own phrases (never evaluation questions): they exist so tests can assert an
exact greedy answer from a model whose weights are otherwise random.
"""

from __future__ import annotations

from dataclasses import dataclass

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
IMAGE_TAG = "<image>"
AUDIO_TAG = "<audio>"


@dataclass(frozen=True)
class Canned:
    """One memorized exchange: `history` is a fixed earlier (user, answer) turn, if any."""

    prompt: str
    answer: str
    media: str | None = None  # None | "image" | "audio"
    history: tuple[str, str] | None = None

    def to_json(self) -> dict:
        row: dict = {"prompt": self.prompt, "media": self.media, "answer": self.answer}
        if self.history is not None:
            row["history"] = [
                {"role": "user", "text": self.history[0]},
                {"role": "model", "text": self.history[1]},
            ]
        return row


CANNED: tuple[Canned, ...] = (
    Canned("edgefarm ping", "pong"),
    Canned("edgefarm status", "all green"),
    Canned("Name the tiny model.", "tiny-mm"),
    Canned("Count to three.", "one two three"),
    Canned("Which farm is this?", "the edge farm"),
    Canned("Describe the picture.", "a tiny picture", media="image"),
    Canned("What is in the clip?", "a short sound", media="audio"),
    Canned("Which word did I give?", "kiwi", history=("Keep the word kiwi.", "kept")),
)

# ChatML. The runtime passes each message's content as a string or as a list of
# {"type": "text"|"image"|"audio", ...} items; the multimodal template turns media items into the
# tags matched by the metadata's delimiter_regex, where the runtime splices the encoder output.
_HEAD = (
    "{% for message in messages %}"
    "{% set role = 'assistant' if message['role'] in ['model', 'assistant'] else message['role'] %}"
    "<|im_start|>{{ role }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'text' %}{{ item['text'] }}"
)
_MEDIA = "{% elif item['type'] == 'image' %}" + IMAGE_TAG + "{% elif item['type'] == 'audio' %}" + AUDIO_TAG
_TAIL = (
    "{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TEMPLATE_MM = _HEAD + _MEDIA + _TAIL
TEMPLATE_TEXT = _HEAD + _TAIL  # media items are dropped


def user_text(c: Canned) -> str:
    """The user turn as the multimodal template renders it (media tag first, then text)."""
    tag = {"image": IMAGE_TAG, "audio": AUDIO_TAG, None: ""}[c.media]
    return tag + c.prompt


def render(turns: list[tuple[str, str]], *, generation_prompt: bool) -> str:
    """ChatML text for (role, text) turns, the same string the Jinja template produces."""
    out = "".join(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns)
    return out + ("<|im_start|>assistant\n" if generation_prompt else "")
