"""Build edgefarm's native phone runner: `--android` for arm64 phones (Android NDK), `--host` for the lab.

    python scripts/build_native_runner.py --android   # -> build/android_arm64/{edgefarm_runner,liblitert-lm.so,VERSION}
    python scripts/build_native_runner.py --host      # -> build/host/...

Both compile against the project's own declarations of the C API (android_runner/native/litert_lm_c_api.h),
checked against the library's exported symbols and, where a LiteRT-LM checkout is at hand
(EDGEFARM_LITERT_LM_SRC), against upstream's c/engine.h; both pin the runtime library's sha256 from its
wheel's RECORD. Nothing is downloaded but the android wheel, from the package index.

Phones pick build/android_arm64/ up by themselves (see docs/android.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from android_runner.native.build import BuildError, build_android, build_host


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--android", action="store_true", help="arm64 phones, with the NDK in ANDROID_NDK_HOME"
    )
    which.add_argument("--host", action="store_true", help="this host, against the installed litert-lm-api")
    ap.add_argument("--out", type=Path, help="output folder (default: build/android_arm64 or build/host)")
    args = ap.parse_args()
    out = args.out or REPO / "build" / ("android_arm64" if args.android else "host")
    try:
        runner, lib = build_android(out) if args.android else build_host(out)
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{runner}\n{lib}\n{(out / 'VERSION').read_text().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
