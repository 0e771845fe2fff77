"""Start the runner from a copied folder: `python3 entry.py ...` puts this folder on sys.path.

The process ends with os._exit once main() has returned and stdout/stderr are flushed: the results
file is closed by then, and tearing down the runtime's engine and modules would only keep the host
waiting for the exit (25-35 ms per run on a 2-core host).
"""

import os
import sys

from android_runner.litert_runner import main

code = main()
try:
    sys.stdout.flush()
    sys.stderr.flush()
except (OSError, ValueError):
    code = code or 120
os._exit(code)
