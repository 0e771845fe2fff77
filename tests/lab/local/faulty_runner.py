"""Stands in for a device's python to inject faults BELOW the runner seam: the real runner runs,
but dies or hangs on chosen sample ids, as a runtime crash, the OOM killer or a hung GPU would.

    EDGEFARM_TEST_FAULTS="KILL=ID1,ABORT=ID2,HANG=ID3,SLOW=0.5"   python faulty_runner.py <entry.py> <args>
    EDGEFARM_TEST_FAULTS="ANSWER=ID4" EDGEFARM_TEST_ANSWER=TEXT   the model answers ID4 with exactly TEXT
    EDGEFARM_TEST_THERMAL="43,2"   a board at 43 C that cools by 2 C per second (its only sensor);
                                   "none": a board without a readable sensor
"""

import dataclasses
import os
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


def run(self, item, memory, log):
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
    result = real_run(self, item, memory, log)
    if faults.get("ANSWER") == item.id:  # a model that writes exactly this answer (hostile to a scorer)
        result = dataclasses.replace(result, output=os.environ["EDGEFARM_TEST_ANSWER"])
    return result


litert_runner.LiteRtRunner.run = run

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
