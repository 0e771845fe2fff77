"""Stands in for a device's python to inject faults BELOW the runner seam: the real runner runs,
but dies or hangs on chosen sample ids, as a runtime crash, the OOM killer or a hung GPU would.

    EDGEFARM_TEST_FAULTS="KILL=ID1,ABORT=ID2,HANG=ID3"   python faulty_runner.py <entry.py> <runner args>
"""

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
    for action, sample_id in faults.items():
        if item.id == sample_id:
            if action == "KILL":
                os.kill(os.getpid(), signal.SIGKILL)
            elif action == "ABORT":
                os.abort()
            elif action == "HANG":
                time.sleep(3600)
    return real_run(self, item, memory, log)


litert_runner.LiteRtRunner.run = run
sys.exit(litert_runner.main(sys.argv[2:]))
