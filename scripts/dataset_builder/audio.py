"""Every audio clip of the dataset: espeak-ng speech, shaped with sox into 16 kHz mono 16-bit WAV.

Determinism: espeak-ng output is deterministic; sox runs with -R (repeatable random numbers, used by
`synth whitenoise`) and -D (no dither), so a rebuild writes byte-identical files.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

FORMAT = ["-r", "16000", "-c", "1", "-b", "16"]
LONG_STORY = (
    "Last spring, Maria decided to ride to work instead of taking the bus. On Saturday morning she "
    "walked to the small shop next to the bakery and looked at every bicycle they had. The red one was "
    "too heavy and the green one was too expensive, so in the end she bought a light blue bicycle with "
    "a basket on the front. Now she rides eight kilometres along the river every day, and she says she "
    "has never felt better."
)


@dataclass(frozen=True)
class Clip:
    """How to make one file. kind: speech | silence | tone | concat; effects are extra sox effects."""

    kind: str
    text: str = ""
    voice: str = "en-us"
    speed: int = 150
    effects: tuple[str, ...] = ()
    noise: tuple[str, float] | None = None  # (sox noise type, volume) mixed over the speech
    parts: tuple[str, ...] = field(default_factory=tuple)  # concat: texts spoken one after another
    seconds: float = 0.0


def say(text: str, **kw) -> Clip:
    return Clip("speech", text=text, **kw)


CLIPS: dict[str, Clip] = {
    # transcription
    "AUD-001.wav": say("The quick brown fox jumps over the lazy dog."),
    "AUD-002.wav": say("Please turn off the lights in the kitchen."),
    "AUD-003.wav": say("The meeting has been moved to Thursday afternoon."),
    "AUD-004.wav": say("Seven. Three. Nine. Two. Eight.", speed=130),
    "AUD-005.wav": say("The train to Boston leaves at nine fifteen."),
    "AUD-006.wav": say("I would like a cup of tea with milk, please.", voice="en-gb"),
    "AUD-007.wav": say("Remember to back up your files every Friday.", speed=210),
    "AUD-008.wav": say("Water boils at one hundred degrees Celsius.", speed=110),
    # spoken_qa
    "AUD-009.wav": say("What is the capital of France?"),
    "AUD-010.wav": say("How many days are there in a week?"),
    "AUD-011.wav": say("What color do you get when you mix blue and yellow?"),
    "AUD-012.wav": say("If I have three apples and eat one, how many apples are left?"),
    "AUD-013.wav": say(LONG_STORY, speed=140),
    # translation
    "AUD-014.wav": say("Buenos días, ¿cómo estás?", voice="es"),
    "AUD-015.wav": say("Le chat dort sur le canapé.", voice="fr-fr"),
    "AUD-016.wav": say("Where is the train station?"),
    # noise_robustness
    "AUD-017.wav": say("The quick brown fox jumps over the lazy dog.", noise=("whitenoise", 0.08)),
    "AUD-018.wav": say("Please turn off the lights in the kitchen.", noise=("whitenoise", 0.2)),
    "AUD-019.wav": say("The meeting has been moved to Thursday afternoon.", effects=("gain", "18")),
    "AUD-020.wav": say("What is the capital of France?", noise=("pinknoise", 0.15)),
    "AUD-021.wav": say("The train to Boston leaves at nine fifteen.", noise=("brownnoise", 0.3)),
    # audio_edge_case
    "AUD-022.wav": Clip("silence", seconds=3.0),
    "AUD-023.wav": say("Yes.", speed=220, effects=("silence", "1", "0.01", "1%", "trim", "0", "0.3")),
    "AUD-024.wav": say("Hello, can you hear me?", effects=("pad", "4", "0")),
    "AUD-025.wav": say("The door is open.", effects=("gain", "-24")),
    "AUD-026.wav": Clip("concat", parts=("Red.", "Blue.", "Red.", "Green.", "Red.")),
    "AUD-027.wav": Clip("tone", seconds=2.0),
    # combination (spoken questions about an image)
    "CMB-001.wav": say("What color is the triangle?"),
    "CMB-002.wav": say("How much did the bagel cost?"),
    "CMB-003.wav": say("What is the value for Wednesday?"),
    "CMB-004.wav": say("Is Bluetooth turned on or off?"),
    "CMB-005.wav": say("What time does the clock show?"),
    "CMB-006.wav": say("Which box is green?"),
    "CMB-007.wav": say("Which category has the largest share?"),
    "CMB-008.wav": say("How much does the soup cost?"),
    "CMB-009.wav": say("What is written on the button?"),
    "CMB-010.wav": say("What appointment is written on the calendar?"),
    "CMB-011.wav": say("How many circles are in the picture?"),
    "CMB-012.wav": say("What was the temperature in March?"),
    "CMB-025.wav": say("I also bought a muffin for two dollars."),
    "CMB-026.wav": say("Please point to the shape that is yellow."),
    "CMB-027.wav": say("Which day had fifteen visitors?"),
    "CMB-028.wav": say("The meeting starts in two hours."),
}


def _sox(*args: str) -> None:
    subprocess.run(["sox", "-D", "-R", "-V1", *args], check=True)


def _speak(text: str, voice: str, speed: int, out: Path, tmp: Path) -> None:
    raw = tmp / "espeak.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text], check=True)
    _sox(str(raw), *FORMAT, str(out))


def _duration_s(path: Path) -> float:
    import wave

    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


def render(clip: Clip, out: Path, tmp: Path) -> None:
    """Write one clip to `out` (16 kHz mono 16-bit PCM WAV)."""
    base = tmp / "base.wav"
    if clip.kind == "silence":
        _sox("-n", *FORMAT, str(out), "trim", "0", str(clip.seconds))
        return
    if clip.kind == "tone":
        _sox("-n", *FORMAT, str(out), "synth", str(clip.seconds), "sine", "1000", "vol", "0.3")
        return
    if clip.kind == "concat":
        pieces = []
        for i, part in enumerate(clip.parts):
            piece = tmp / f"part{i}.wav"
            _speak(part, clip.voice, clip.speed, piece, tmp)
            pieces.append(str(piece))
        _sox(*pieces, *FORMAT, str(out))
        return
    _speak(clip.text, clip.voice, clip.speed, base, tmp)
    if clip.noise:
        kind, vol = clip.noise
        noise = tmp / "noise.wav"
        _sox("-n", *FORMAT, str(noise), "synth", f"{_duration_s(base):.4f}", kind, "vol", str(vol))
        _sox("-m", "-v", "1", str(base), "-v", "1", str(noise), *FORMAT, str(out), *clip.effects)
    else:
        _sox(str(base), *FORMAT, str(out), *clip.effects)


def write_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    with tempfile.TemporaryDirectory(prefix="edgemm-audio-") as t:
        for name, clip in CLIPS.items():
            render(clip, out_dir / name, Path(t))
            paths.append(out_dir / name)
    return paths
