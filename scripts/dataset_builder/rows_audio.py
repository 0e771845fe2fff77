"""Audio (AUD) rows: every answer is audible in the synthesised clip (see audio.py)."""

from __future__ import annotations

from .audio import CLIPS
from .rowkit import row

ASK_SPOKEN = "Answer the question asked in the audio in a few words."
TRANSCRIBE = "Transcribe the speech in this audio clip."


def _aud(n: int, task: str, prompt: str, ref: str, variants=(), **kw) -> dict:
    tid = f"AUD-{n:03d}"
    return row(tid, task, prompt, audio=[f"{tid}.wav"], reference=ref, variants=variants, **kw)


def _said(n: int) -> str:
    return CLIPS[f"AUD-{n:03d}.wav"].text


AUDIO_ROWS = [
    _aud(1, "transcription", TRANSCRIBE, _said(1), ["The quick brown fox jumped over the lazy dog."]),
    _aud(2, "transcription", TRANSCRIBE, _said(2), ["Please turn off the kitchen lights."]),
    _aud(3, "transcription", TRANSCRIBE, _said(3), ["The meeting was moved to Thursday afternoon."]),
    _aud(
        4,
        "transcription",
        "Write down the digits you hear, separated by spaces.",
        "7 3 9 2 8",
        ["73928", "seven three nine two eight"],
    ),
    _aud(5, "transcription", TRANSCRIBE, _said(5), ["The train to Boston leaves at 9:15."]),
    _aud(6, "transcription", TRANSCRIBE, _said(6), ["I would like a cup of tea with milk please."]),
    _aud(
        7,
        "transcription",
        TRANSCRIBE,
        _said(7),
        ["Remember to back up your files every Friday"],
        tags=["fast"],
    ),
    _aud(8, "transcription", TRANSCRIBE, _said(8), ["Water boils at 100 degrees Celsius."], tags=["slow"]),
    _aud(9, "spoken_qa", ASK_SPOKEN, "Paris", ["The capital of France is Paris."]),
    _aud(10, "spoken_qa", ASK_SPOKEN, "Seven", ["7", "There are seven days in a week."]),
    _aud(11, "spoken_qa", ASK_SPOKEN, "Green", ["You get green.", "green"]),
    _aud(12, "spoken_qa", ASK_SPOKEN, "Two", ["2", "Two apples are left."]),
    _aud(
        13,
        "spoken_qa",
        "Listen to the story. What color was the bicycle Maria bought?",
        "Blue",
        ["light blue", "She bought a light blue bicycle."],
        tags=["stress", "long"],
    ),
    _aud(
        14,
        "translation",
        "Translate the spoken Spanish into English.",
        "Good morning, how are you?",
        ["Good morning, how are you doing?", "Hello, how are you?"],
    ),
    _aud(
        15,
        "translation",
        "Translate the spoken French into English.",
        "The cat is sleeping on the sofa.",
        ["The cat sleeps on the couch.", "The cat is sleeping on the couch."],
    ),
    _aud(
        16,
        "translation",
        "Translate the spoken English sentence into Spanish.",
        "¿Dónde está la estación de tren?",
        ["Dónde está la estación de tren", "¿Dónde está la estación?"],
    ),
    _aud(
        17,
        "noise_robustness",
        TRANSCRIBE,
        _said(17),
        ["The quick brown fox jumped over the lazy dog."],
        tags=["noise"],
    ),
    _aud(
        18,
        "noise_robustness",
        TRANSCRIBE,
        _said(18),
        ["Please turn off the kitchen lights."],
        tags=["noise", "low_snr"],
    ),
    _aud(
        19,
        "noise_robustness",
        TRANSCRIBE,
        _said(19),
        ["The meeting was moved to Thursday afternoon."],
        tags=["clipped"],
    ),
    _aud(20, "noise_robustness", ASK_SPOKEN, "Paris", ["The capital of France is Paris."], tags=["noise"]),
    _aud(
        21,
        "noise_robustness",
        TRANSCRIBE,
        _said(21),
        ["The train to Boston leaves at 9:15."],
        tags=["noise", "hum"],
    ),
    _aud(
        22,
        "audio_edge_case",
        "Transcribe this audio clip. If there is no speech, say 'no speech'.",
        "no speech",
        ["silence", "The clip is silent."],
        tags=["silence"],
    ),
    _aud(
        23,
        "audio_edge_case",
        "Transcribe the single word in this very short clip.",
        "yes",
        ["Yes.", "The word is yes."],
        tags=["short"],
    ),
    _aud(
        24,
        "audio_edge_case",
        "The speech starts after a long pause. Transcribe it.",
        _said(24),
        ["Hello can you hear me", "Hello, can you hear me"],
        tags=["leading_silence"],
    ),
    _aud(
        25,
        "audio_edge_case",
        "The recording is very quiet. Transcribe it.",
        _said(25),
        ["The door is open", "the door is open"],
        tags=["quiet"],
    ),
    _aud(
        26,
        "audio_edge_case",
        "How many times is the word 'red' said in the clip?",
        "3",
        ["three", "Red is said three times."],
    ),
    _aud(
        27,
        "audio_edge_case",
        "Is there any speech in this clip? Answer yes or no.",
        "No",
        ["no", "No, it is only a beep."],
        tags=["tone"],
    ),
]
