"""Start the runner from a copied folder: `python3 entry.py ...` puts this folder on sys.path."""

import sys

from android_runner.litert_runner import main

sys.exit(main())
