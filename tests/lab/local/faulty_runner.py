"""Stands in for a device's python to inject faults BELOW the runner seam: the real runner runs,
but dies or hangs on chosen sample ids, as a runtime crash, the OOM killer or a hung GPU would.

    EDGEFARM_TEST_FAULTS="KILL=ID1,ABORT=ID2,HANG=ID3,SLOW=0.5"   python faulty_runner.py <entry.py> <args>
    EDGEFARM_TEST_FAULTS="SLOWER=0.1"   a runtime 10% slower: each reply takes 10% longer, inside the
                                        sample's measured wall time (SLOW waits outside it)
    EDGEFARM_TEST_FAULTS="LATER=1.0"    each reply takes 1.0 s longer, inside the measured wall time: a
                                        slowdown no load on the host can hide (a ratio can be)
    EDGEFARM_TEST_FAULTS="ANSWER=ID4" EDGEFARM_TEST_ANSWER=TEXT   the model answers ID4 with exactly TEXT
    EDGEFARM_TEST_FAULTS="NOISE=0.5"  a runtime whose arithmetic drifts: Gaussian noise of that sd (nats)
                                   on every score run_text_scoring returns, and (sd > 0.05) the greedy
                                   answer departs from its second word on in a share of min(1, 2 sd) of
                                   the samples (seeded by the sample id: the same on every run)
    EDGEFARM_TEST_FAULTS="KILL_ON=WORD"   the runner is killed (SIGKILL) on a sample whose text has WORD
    EDGEFARM_TEST_FAULTS="DRIP_ON=WORD,DRIP_S=0.4"   `--serve`: each streamed piece of such a sample's
                                   answer comes DRIP_S later (a slow phone, so a client can leave mid-answer)
    EDGEFARM_TEST_THERMAL="43,2"   a board at 43 C that cools by 2 C per second (its only sensor);
                                   "none": a board without a readable sensor
"""

import dataclasses
import os
import random
import signal
import sys
import time

entry = sys.argv[1]
sys.path.insert(0, os.path.dirname(entry))
from android_runner import litert_runner

faults = dict(
    pair.split("=", 1) for pair in os.environ.get("EDGEFARM_TEST_FAULTS", "").split(",") if "=" in pair
)
real_run = litert_runner.LiteRtRunner.run


def _has(item, word: str) -> bool:
    return any(word in p.text for turn in item.turns for p in turn)


def run(self, item, memory, log):
    if "KILL_ON" in faults and _has(item, faults["KILL_ON"]):
        os.kill(os.getpid(), signal.SIGKILL)
    if "DRIP_ON" in faults and _has(item, faults["DRIP_ON"]) and self.pieces is not None:
        pieces, wait = self.pieces, float(faults.get("DRIP_S", "0.4"))
        self.pieces = lambda item_id, piece: time.sleep(wait) or pieces(item_id, piece)
        try:
            return real_run(self, item, memory, log)
        finally:
            self.pieces = pieces
    if "SLOW" in faults:  # SLOW=SECONDS: every sample takes that much longer (a slow board)
        time.sleep(float(faults["SLOW"]))
    for action, sample_id in faults.items():
        if item.id == sample_id:
            if action == "KILL":
                os.kill(os.getpid(), signal.SIGKILL)
            elif action == "ABORT":
                os.abort()
            elif action == "HANG":
                time.sleep(3600)
    if "NOISE" in faults:
        sd = float(faults["NOISE"])
        rng = random.Random(item.id)
        flips = sd > 0.05 and rng.random() < min(1.0, 2 * sd)
        if flips:  # the greedy decode departs: the model's answer turns at its second word
            real_send = self.engine.create_conversation

            def create_conversation(*a, **k):
                conv = real_send(*a, **k)
                send = conv.send_message

                def send_message(message):
                    reply = send(message)
                    words = str(reply.get("content", [{}])[0].get("text", "")).split(" ")
                    reply["content"] = [
                        {"type": "text", "text": " ".join(words[:1] + ["drifted"] * len(words[1:]))}
                    ]
                    return reply

                conv.send_message = send_message
                return conv

            self.engine.create_conversation = create_conversation
        result = real_run(self, item, memory, log)
        if flips:
            del self.engine.create_conversation
    else:
        result = real_run(self, item, memory, log)
    if faults.get("ANSWER") == item.id:  # a model that writes exactly this answer (hostile to a scorer)
        result = dataclasses.replace(result, output=os.environ["EDGEFARM_TEST_ANSWER"])
    return result


litert_runner.LiteRtRunner.run = run

if "NOISE" in faults:
    import litert_lm.session as lm_session

    real_scoring = lm_session.Session.run_text_scoring

    def run_text_scoring(self, target_text, store_token_lengths=False):
        out = real_scoring(self, target_text, store_token_lengths)
        rng = random.Random(repr(target_text))
        sd = float(faults["NOISE"])
        out.token_scores = [[x + rng.gauss(0.0, sd) for x in row] for row in out.token_scores]
        return out

    lm_session.Session.run_text_scoring = run_text_scoring


class _SlowerConversation:
    """A conversation whose every reply takes `fraction` longer, plus `later_s` (a slower runtime)."""

    def __init__(self, conv, fraction: float, later_s: float):
        self._conv, self._fraction, self._later_s = conv, fraction, later_s

    def __enter__(self):
        self._conv.__enter__()
        return self

    def __exit__(self, *exc):
        return self._conv.__exit__(*exc)

    def send_message(self, message):
        t0 = time.perf_counter()
        reply = self._conv.send_message(message)
        time.sleep(self._fraction * (time.perf_counter() - t0) + self._later_s)
        return reply

    def __getattr__(self, name):
        return getattr(self._conv, name)


if "SLOWER" in faults or "LATER" in faults:
    real_init = litert_runner.LiteRtRunner.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        engine, fraction, later_s = self.engine, float(faults.get("SLOWER", 0)), float(faults.get("LATER", 0))

        class Engine:
            def create_conversation(self, *a, **kw):
                return _SlowerConversation(engine.create_conversation(*a, **kw), fraction, later_s)

            def __getattr__(self, name):
                return getattr(engine, name)

        self.engine = Engine()

    litert_runner.LiteRtRunner.__init__ = init

thermal = os.environ.get("EDGEFARM_TEST_THERMAL", "")
if thermal:
    t0 = time.monotonic()

    def snapshot():
        if thermal == "none":  # a board without any readable sensor
            return None
        start_c, rate = map(float, thermal.split(","))
        return {"max_temp_c": round(start_c - rate * (time.monotonic() - t0), 2), "zones": 1}

    litert_runner.thermal_snapshot = snapshot
    litert_runner.cool_down.__kwdefaults__["read"] = snapshot
sys.exit(litert_runner.main(sys.argv[2:]))
