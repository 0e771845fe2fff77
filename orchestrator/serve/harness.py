"""One device of the farm answering an evaluation harness in this process: the lm-eval plugin's farm half
(orchestrator/serve/lmeval.py is the half that speaks lm-eval; docs/lmeval.md).

The device is `edgefarm serve`'s own Engine (its runner staged as for a run and kept loaded, the model
loaded once), and every request is a row of a serve session's run folder (report, history), so a harness
run is recorded like a run. Why in this process and not over HTTP: a log-likelihood is the run's
--fidelity scoring pass (the runtime's run_text_scoring after a prefill, docs/fidelity.md), which
OpenAI's API has no shape for; a harness that only generates can already point lm-eval's own
`local-completions` model at `edgefarm serve`.

- `generate(context, max_tokens)`: the context as one user turn (the model's chat template applies, as
  /v1/completions), greedy; the answer text.
- `score(context, continuation)`: the same request with the run's fidelity pass asked: the row's
  per-token log-likelihoods of `continuation` teacher-forced after `context` (the scoring session's
  prefill; an empty context prefills nothing: scored from the session's start), summed; and whether the
  device's greedy answer to `context` begins with `continuation`.
- `rolling(text)`: the whole text's log-likelihood, window by window (`text_windows`, each fits one row's
  scores), each window scored from a fresh session's start, summed: lm-eval's loglikelihood_rolling.
"""

from __future__ import annotations

import queue
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from android_runner.backend import BACKENDS
from android_runner.contract import FIDELITY_TARGET_MAX_CHARS, SampleResult
from android_runner.status import DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_SAMPLE_TIMEOUT_S, Status

from ..bundled import BUNDLED_MODEL
from ..errors import ConfigError, EdgefarmError
from ..inventory import load_inventory, select_usable
from ..models import inspect_model
from ..progress import stderr_console
from ..runners.base import RunOptions
from .api import Ask, Bounds, parse_completion
from .engine import Engine
from .hold import DeviceHold
from .session import ServeSession

# (kind, low, high) of each numeric argument; every user count/size/time has a bound
NUMBERS = {"threads": (int, 1, 256), "sample_timeout_s": (float, 1.0, 86400.0),
           "max_gen_toks": (int, 1, Bounds().max_tokens_max)}  # fmt: skip
ROLLING_MAX_BYTES = 1_000_000  # the longest text loglikelihood_rolling scores (~4000 windows)


def text_windows(text: str, max_bytes: int) -> list[str]:
    """`text` as consecutive windows of at most `max_bytes` UTF-8 bytes that join back into `text`: each cut
    where its last run of whitespace begins (the next window starts with it, as a word's leading space is
    tokenized), else at a character. A token of the model's tokenizer covers at least one byte, beside the
    one leading token a tokenizer may add: a window has at most max_bytes + 1 tokens."""
    if max_bytes < 4:  # one character is up to 4 bytes
        raise ValueError(f"a window of {max_bytes} bytes cannot hold a character")
    windows, at = [], 0
    while at < len(text):
        chunk = text[at : at + max_bytes]  # a character is at least one byte
        if at + len(chunk) == len(text) and len(chunk.encode()) <= max_bytes:
            windows.append(chunk)
            break
        head = len(chunk.encode()[:max_bytes].decode("utf-8", "ignore"))  # whole characters only
        run = (k for k in range(head, 0, -1) if text[at + k].isspace() and not text[at + k - 1].isspace())
        cut = next(run, head)  # where the window's last whitespace run begins, else its end
        windows.append(text[at : at + cut])
        at += cut
    return windows


def window_bytes(context_tokens: int | None, where: str = "lm-eval request") -> int:
    """A rolling window's bytes: its tokens fit the device's context (None: the model's, unknown), of which
    the runtime scores at most context - 1 from a session's start, and it is a reference the scoring pass
    takes (FIDELITY_TARGET_MAX_CHARS)."""
    window = min(
        FIDELITY_TARGET_MAX_CHARS, (context_tokens - 2) if context_tokens else FIDELITY_TARGET_MAX_CHARS
    )
    if window < 4:
        raise EdgefarmError(f"a context of {context_tokens} tokens leaves no window to score a text in",
                            where=where, fix="raise the device's max_num_tokens")  # fmt: skip
    return window


@dataclass(frozen=True)
class HarnessArgs:
    """lm-eval's `--model_args` for `--model edgefarm`: which device, and how it runs."""

    device: str = ""  # a devices.yaml name (`edgefarm devices`), or this host's
    backend: str | None = None  # default: the device's devices.yaml backend, else cpu
    inventory: Path | None = None
    model: Path = BUNDLED_MODEL
    threads: int | None = None
    out: Path = Path("runs")  # the session's run folder goes here
    db: str | None = None  # the results database (history's default; "none": not recorded)
    sample_timeout_s: float = DEFAULT_SAMPLE_TIMEOUT_S
    max_gen_toks: int = DEFAULT_MAX_OUTPUT_TOKENS  # generate_until's cap when a task names none

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> HarnessArgs:
        """--model_args as lm-eval parsed them (`k=v,...`; numbers already numbers), checked."""
        known = [f.name for f in fields(cls)]
        where, fix = "lm_eval --model_args", f"keys are {', '.join(known)} (docs/lmeval.md)"
        if unknown := sorted(set(args) - set(known)):
            raise ConfigError(f"unknown key(s) {', '.join(unknown)}", where=where, fix=fix)
        if not str(args.get("device") or "").strip():
            raise ConfigError("no device named", where=where,
                              fix="pass device=NAME, one device of `edgefarm devices` (e.g. device=this-host)")  # fmt: skip
        if "," in str(args["device"]) or str(args["device"]) in ("all", "local"):
            raise ConfigError(f"device={args['device']} is not ONE device", where=where,
                              fix="name one device: lm-eval evaluates one model per run")  # fmt: skip
        if args.get("backend") is not None and args["backend"] not in BACKENDS:
            raise ConfigError(f"backend={args['backend']} is not a backend", where=where,
                              fix=f"use one of {', '.join(BACKENDS)}")  # fmt: skip
        values: dict[str, Any] = {k: v for k, v in args.items() if k not in NUMBERS}
        for name, (kind, low, high) in NUMBERS.items():
            if args.get(name) is None:
                continue
            try:
                v = kind(args[name])
            except (TypeError, ValueError):
                raise ConfigError(
                    f"{name}={args[name]} is not a number", where=where, fix=f"{name}={low}..{high}"
                ) from None
            if not low <= v <= high:
                raise ConfigError(
                    f"{name}={args[name]} is out of its range", where=where, fix=f"{name}={low}..{high}"
                )
            values[name] = v
        for name in ("inventory", "model", "out"):
            if values.get(name) is not None:
                values[name] = Path(str(values[name])).expanduser()
        values["device"] = str(values["device"])
        return cls(**values)


@dataclass(frozen=True)
class Scored:
    """One continuation's score on the device: lm-eval's (log-likelihood, is_greedy), and the row."""

    logp: float  # nats, summed over the continuation's tokens
    tokens: int
    greedy: bool  # the device's greedy answer to the context begins with the continuation
    row: SampleResult


@dataclass(frozen=True)
class Rolled:
    """A text's rolling log-likelihood: its windows' log-likelihoods (each from a session's start), summed."""

    logp: float  # nats, summed over every token of every window
    tokens: int
    windows: tuple[Scored, ...]


class DeviceHarness:
    """One device's Engine and the serve session its requests are recorded in; `close()` ends both."""

    def __init__(self, args: HarnessArgs) -> None:
        self.args, self.console = args, stderr_console()
        model = inspect_model(args.model)
        selection = select_usable(load_inventory(args.inventory), args.device)
        (device,) = selection.devices  # select_devices refused an unknown name, naming the known ones
        opts = RunOptions(run_id="", sample_timeout_s=args.sample_timeout_s).for_device(
            device, args.backend, args.threads
        )
        flags = {"harness": "lm-eval", "devices": args.device, "backend": args.backend, "threads": args.threads,
                 "inventory": str(args.inventory or ""), "sample_timeout_s": args.sample_timeout_s}  # fmt: skip
        self.session = ServeSession(args.out, model, (device.name,), flags, None)
        self.engine = Engine(device, model, replace(opts, run_id=self.session.run_id),
                             self.session.folder(device.name), self.session.row,
                             hold=DeviceHold(device, self.session.run_id))  # fmt: skip
        self.engine.start()
        self._ids = 0
        self.console.print(
            f"edgefarm lm-eval {self.session.run_id}: {self.engine.id} -> {self.session.run_dir}"
        )

    def _ask(self, context: str, max_tokens: int, continuation: str | None) -> SampleResult:
        """One request on the device, waited for; its row (an error row or a lost device raises)."""
        self._ids += 1
        rid = f"req-{self._ids:07d}"
        body = {"model": self.engine.id, "prompt": context, "max_tokens": max_tokens}
        ask: Ask = parse_completion(body, Bounds(text_max_chars=10**8), rid)
        if continuation is not None:  # the run's --fidelity pass: the continuation is the reference scored
            ask = replace(ask, sample=replace(ask.sample, reference=continuation), fidelity=True)
        events: queue.Queue = queue.Queue()
        folder = Path(tempfile.mkdtemp(prefix=f"edgefarm-lmeval-{rid}-"))
        try:
            self.engine.ask(ask, folder, events, threading.Event())
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        while True:
            kind, value = events.get_nowait() if not events.empty() else ("end", None)
            if kind == "piece":
                continue
            if kind == "result" and value.status == Status.OK:
                return value
            why = value.error if kind == "result" else getattr(value, "message", value)
            raise EdgefarmError(f"{self.engine.id} did not answer request {rid}: {why or kind}",
                                where=str(self.session.folder(self.engine.device.name) / "results.jsonl"),
                                fix="see the row and runner.log in the device's job folder")  # fmt: skip

    def generate(self, context: str, max_tokens: int | None = None) -> str:
        return self._ask(context, max_tokens or self.args.max_gen_toks, None).output

    def score(self, context: str, continuation: str, answer_tokens: int | None = None) -> Scored:
        """`continuation` scored after `context`; the greedy answer (for is_greedy) is at most
        `answer_tokens` long, by default one token per character of the continuation."""
        if not continuation.strip():
            raise EdgefarmError("a continuation of whitespace only cannot be scored (the run's --fidelity "
                                "scores no empty reference)", where="lm-eval request",
                                fix="give the task's targets some text (docs/lmeval.md)")  # fmt: skip
        if len(continuation) > FIDELITY_TARGET_MAX_CHARS:
            raise EdgefarmError(f"a continuation of {len(continuation)} characters is over the scoring pass's "
                                f"{FIDELITY_TARGET_MAX_CHARS}", where="lm-eval request",
                                fix="shorten the task's targets (docs/fidelity.md)")  # fmt: skip
        want = answer_tokens or min(
            Bounds().max_tokens_max, len(continuation)
        )  # a token: at least a character
        row = self._ask(context, want, continuation)
        f = row.fidelity
        if f is None or f.unscored or f.target_tokens is None:
            raise EdgefarmError(f"{self.engine.id} did not score request {row.id}: "
                                f"{f.unscored if f else 'no scores on the row'}", where=row.id,
                                fix="the runtime's words are in the row; a runtime without "
                                "run_text_scoring cannot score")  # fmt: skip
        if f.logp_sum is None:
            raise EdgefarmError(f"{self.engine.id} scored request {row.id} without the sum of its scores "
                                "(logp_sum)", where=row.id, fix="a runner of this edgefarm gives it: restage the device")  # fmt: skip
        greedy = row.output.lstrip().startswith(continuation.strip())
        return Scored(logp=f.logp_sum, tokens=f.target_tokens, greedy=greedy, row=row)

    def rolling(self, text: str) -> Rolled:
        """lm-eval's loglikelihood_rolling: every token of `text` scored, window by window (`text_windows`),
        each window from a fresh session's start (lm-eval's own windows condition on one prefix token); an
        empty text is 0, as lm-eval's own models give it."""
        if len(text.encode()) > ROLLING_MAX_BYTES:
            raise EdgefarmError(f"a text of {len(text.encode())} bytes is over loglikelihood_rolling's bound of "
                                f"{ROLLING_MAX_BYTES}", where="lm-eval request",
                                fix="split the task's documents (docs/lmeval.md)")  # fmt: skip
        context = self.engine.opts.max_num_tokens or self.engine.model.max_context_tokens
        windows = text_windows(text, window_bytes(context, where=self.engine.id))
        scored = tuple(self.score("", w, answer_tokens=1) for w in windows)
        return Rolled(logp=sum(s.logp for s in scored), tokens=sum(s.tokens for s in scored), windows=scored)

    def close(self) -> None:
        """Stop the runner; the session's reports and database row (a run's). Once."""
        if self.engine.state == "stopped":
            return
        self.engine.stop()
        if self.engine.hold is not None:
            self.engine.hold.release()
        self.session.finish([self.engine], self.args.db, self.console)
