"""The emulated phone's filesystem and the bubblewrap sandbox its shell commands run in.

Inside the sandbox `/data` is the phone's own folder (`<root>/data`) and `/system/bin` is Android's
userland: mksh as `sh` and toybox's applets (Debian's `mksh` and `toybox` binaries), plus `getprop`
and `dumpsys` scripts answering from per-phone files and a `sha256sum` as fast as Android's
(SHA256SUM). PATH is `/system/bin` only, and the host's `/usr/bin` (so `/bin`: dash, GNU coreutils,
python3) is hidden behind an empty folder: what runs on the phone finds only what a phone has. The host's libraries stay readable, so host-built binaries
(the native runner, mksh, toybox) and the runtime library load. `/proc/meminfo` is the phone's
fake meminfo and `/sys` is visible (the runtime's tcmalloc needs it, a phone has it), except
`/sys/class/power_supply`: the phone's own battery folder (vendor units and signs differ, as on real
phones; tests/lab/adb/gauge.py makes it follow the phone's load), and
`/sys/devices/system/cpu/cpufreq`: the phone's clock (policy0, which the lab's governor steps down).
Nothing a test runs "on the phone" can write to the host outside `<root>`.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "unit" / "fixtures" / "android"
LAB_ETC = "/system/etc/edgefarm-lab"
CPU_MAX_KHZ = 2_910_000  # the lab phones' big-core clock at rest (a Tensor G3's X3 core)
# Host top-level folders the phone may read (everything else stays invisible).
HOST_RO = ("usr", "etc", "root", "opt", "var", "home", "srv")

GETPROP = f"""#!/system/bin/sh
# getprop stand-in: answers from the phone's props file
F={LAB_ETC}/props.txt
if [ $# -eq 0 ]; then cat "$F"; exit 0; fi
grep -F "[$1]: [" "$F" | head -n 1 | sed 's/^\\[[^]]*\\]: \\[\\(.*\\)\\]$/\\1/'
"""

LAB_LOGCAT = "/data/local/tmp/edgefarm-lab-logcat"  # the phone's main log (lab: what lmkd wrote)
# logcat stand-in: `logcat -d [-s TAG...]` dumps the phone's main log, only those tags' lines with -s.
# Lines are in logcat's default (threadtime) form, `MM-DD HH:MM:SS.mmm  PID  TID P TAG: message`, as
# in the real capture tests/unit/fixtures/real/lmkd_rk3588_rknn249.txt (rknn-llm#249).
LOGCAT = f"""#!/system/bin/sh
# logcat stand-in (lab): the phone's main log from {LAB_LOGCAT}
tags=
while [ $# -gt 0 ]; do
  case "$1" in
    -d) ;;
    -s) ;;
    -*) echo "logcat: option $1 is not emulated in the lab" >&2; exit 2 ;;
    *) tags="$tags ${{1%%:*}}" ;;
  esac
  shift
done
[ -f {LAB_LOGCAT} ] || exit 0
while IFS= read -r line; do
  [ -z "$tags" ] && {{ echo "$line"; continue; }}
  for t in $tags; do
    case "$line" in *" $t: "*) echo "$line"; break ;; esac
  done
done < {LAB_LOGCAT}
"""

# sha256sum stand-in: Android's toybox is built with CONFIG_TOYBOX_LIBCRYPTO (its android_defconfig), so a
# phone hashes with BoringSSL and the CPU's SHA instructions; Debian's toybox 0.8.9 has only its own C code,
# 8x slower (1.2 s of CPU for the lab's 131 MB runtime library, 0.15 s with OpenSSL), which every staging of
# every lab phone paid (one `sha256sum` over its targets per device and run). Python's hashlib is OpenSSL's.
# toybox's output and error lines; `--` and no other option (nothing else is emulated).
SHA256SUM = f"""#!{sys.executable} -IS
import hashlib, sys
names = sys.argv[1:]
if names[:1] == ["--"]:
    names = names[1:]
elif any(n.startswith("-") and n != "-" for n in names):
    sys.exit("sha256sum: only `sha256sum [--] FILE...` is emulated in the lab")
rc = 0
for name in names or ["-"]:
    try:
        with open(sys.stdin.fileno() if name == "-" else name, "rb", closefd=name != "-") as f:
            h = hashlib.sha256()
            while block := f.read(1 << 20):
                h.update(block)
    except OSError as e:
        print(f"sha256sum: {{name}}: {{e.strerror}}", file=sys.stderr)
        rc = 1
        continue
    print(f"{{h.hexdigest()}}  {{name}}")
sys.exit(rc)
"""

DUMPSYS = f"""#!/system/bin/sh
# dumpsys stand-in: battery and thermalservice from captured-style files
case "$1" in
  battery) cat {LAB_ETC}/battery.txt ;;
  thermalservice) cat {LAB_ETC}/thermal.txt ;;
  *) echo "Can't find service: $1" >&2; exit 1 ;;
esac
"""


@dataclass(frozen=True)
class PhoneSpec:
    """What an emulated phone says about itself."""

    name: str
    props: dict[str, str]
    battery: str = "battery_pixel8.txt"
    thermal: str = "thermal_pixel8.txt"
    meminfo_total_kb: int = 7812544
    meminfo_available_kb: int | None = None  # None: the Pixel 8 capture's MemAvailable
    free_storage_kb: int | None = None  # None: the host's real `df`; else a fake df reports this
    extra: dict[str, str] = field(default_factory=dict)
    # /sys/class/power_supply/battery files (constant values); {} = no readable battery folder
    power: dict[str, str] = field(default_factory=dict)

    @property
    def power_w(self) -> float | None:
        """The profile's constant power draw in watts (what energy per second must come out as)."""
        cur = self.power.get("current_now") or self.power.get("current_avg")
        volt = self.power.get("voltage_now")
        if cur is None or volt is None:
            return None
        i, v = abs(float(cur)), abs(float(volt))
        return i * (1e-6 if i >= 10_000 else 1e-3) * v * (1e-6 if v >= 100_000 else 1e-3)


PIXEL_8 = PhoneSpec(
    name="Pixel 8",
    props={
        "ro.product.name": "shiba",
        "ro.product.device": "shiba",
        "ro.product.model": "Pixel 8",
        "ro.product.manufacturer": "Google",
        "ro.soc.manufacturer": "Google",
        "ro.soc.model": "Tensor G3",
        "ro.board.platform": "zuma",
        "ro.product.cpu.abi": "arm64-v8a",
        "ro.build.version.release": "14",
        "ro.build.version.sdk": "34",
    },
    # Pixels: uA and uV, discharge NEGATIVE
    power={"current_now": "-450000", "voltage_now": "3900000", "status": "Discharging"},
)
GALAXY_S24 = PhoneSpec(
    name="Galaxy S24",
    props={
        "ro.product.name": "e1sxeea",
        "ro.product.device": "e1s",
        "ro.product.model": "SM-S921B",
        "ro.product.manufacturer": "samsung",
        "ro.soc.model": "",
        "ro.board.platform": "s5e9945",
        "ro.product.cpu.abi": "arm64-v8a",
        "ro.build.version.release": "14",
        "ro.build.version.sdk": "34",
    },
    battery="battery_galaxy_s24.txt",
    thermal="thermal_galaxy_s24.txt",
    meminfo_total_kb=7646208,
    # a vendor reporting mA and mV, discharge POSITIVE
    power={"current_now": "520", "voltage_now": "3850", "status": "Discharging"},
)
REDMI_NOTE_13 = PhoneSpec(
    name="Redmi Note 13",
    props={
        "ro.product.name": "sapphire_global",
        "ro.product.device": "sapphire",
        "ro.product.model": "23021RAAEG",
        "ro.product.marketname": "Redmi Note 13",  # Xiaomi names its phones here; Pixels and Galaxies do not
        "ro.product.manufacturer": "Xiaomi",
        "ro.board.platform": "mt6789",
        "ro.vendor.mediatek.platform": "MT6789",
        "ro.product.cpu.abi": "arm64-v8a",
        "ro.build.version.release": "13",
        "ro.build.version.sdk": "33",
    },
    battery="battery_minimal.txt",
    thermal="thermal_galaxy_s24.txt",
    meminfo_total_kb=5869052,
    # only the fuel gauge's average, and on the charger: energy is marked unreliable
    power={"current_avg": "610000", "voltage_now": "4100000", "status": "Charging"},
)

# a Galaxy J5 (2015): Android 6 on a 32-bit ARM CPU, as its getprop says
GALAXY_J5 = PhoneSpec(
    name="Galaxy J5",
    props={**GALAXY_S24.props, "ro.product.model": "SM-J500F", "ro.product.name": "j5ltexx",
           "ro.product.device": "j5lte", "ro.board.platform": "msm8916", "ro.product.cpu.abi": "armeabi-v7a",
           "ro.product.cpu.abilist": "armeabi-v7a,armeabi", "ro.build.version.release": "6.0.1",
           "ro.build.version.sdk": "23"},
)  # fmt: skip


# A lab phone runs this host's binaries (the native runner is built for the host): its ABI list says
# so, after the ABI it reports, as an x86_64 emulator with ARM translation lists both. A spec that sets
# `ro.product.cpu.abilist` itself (a 32-bit phone) keeps its own.
HOST_ABI = {"x86_64": "x86_64", "aarch64": "arm64-v8a"}.get(platform.machine(), platform.machine())


def lab_abilist(abi: str) -> str:
    return ",".join(dict.fromkeys(a for a in (abi, HOST_ABI) if a))


def build_phone_root(root: Path, spec: PhoneSpec) -> Path:
    """Lay out the phone's folders and telemetry files under root; returns root."""
    (root / "data" / "local" / "tmp").mkdir(parents=True, exist_ok=True)
    etc = root / LAB_ETC.lstrip("/")
    bin_ = root / "system" / "bin"
    etc.mkdir(parents=True, exist_ok=True)
    bin_.mkdir(parents=True, exist_ok=True)
    props = {"ro.product.cpu.abilist": lab_abilist(spec.props.get("ro.product.cpu.abi", "")), **spec.props}
    (etc / "props.txt").write_text("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
    shutil.copy(FIXTURES / spec.battery, etc / "battery.txt")
    shutil.copy(FIXTURES / spec.thermal, etc / "thermal.txt")
    meminfo = (FIXTURES / "meminfo_pixel8.txt").read_text().splitlines()
    meminfo[0] = f"MemTotal:       {spec.meminfo_total_kb} kB"
    if spec.meminfo_available_kb is not None:
        meminfo = [
            f"MemAvailable:   {spec.meminfo_available_kb} kB" if ln.startswith("MemAvailable:") else ln
            for ln in meminfo
        ]
    (root / "meminfo").write_text("\n".join(meminfo) + "\n")
    battery = root / "power_supply" / "battery"
    battery.mkdir(parents=True, exist_ok=True)
    for name, value in spec.power.items():
        (battery / name).write_text(value + "\n")
    policy = root / "cpufreq" / "policy0"  # the phone's CPU clock (/sys/devices/system/cpu/cpufreq)
    policy.mkdir(parents=True, exist_ok=True)
    for name in ("scaling_cur_freq", "scaling_max_freq", "cpuinfo_max_freq"):
        (policy / name).write_text(f"{CPU_MAX_KHZ}\n")
    install_android_userland(bin_)
    (bin_ / "sha256sum").unlink()  # toybox's applet: its libcrypto-backed one, as on Android (SHA256SUM)
    scripts = {"getprop": GETPROP, "dumpsys": DUMPSYS, "logcat": LOGCAT, "sha256sum": SHA256SUM}
    if spec.free_storage_kb is not None:
        (bin_ / "df").unlink(missing_ok=True)
        scripts["df"] = (
            "#!/system/bin/sh\n"
            "echo 'Filesystem       1K-blocks     Used Available Use% Mounted on'\n"
            f"echo '/dev/block/dm-7 {spec.free_storage_kb * 2} {spec.free_storage_kb} "
            f"{spec.free_storage_kb}  50% /data'\n"
        )
    for name, text in scripts.items():
        path = bin_ / name
        path.write_text(text)
        path.chmod(0o755)
    return root


def install_android_userland(bin_: Path) -> None:
    """mksh as /system/bin/sh and every toybox applet as a link to toybox, as on Android >= 7."""
    mksh, toybox = shutil.which("mksh"), shutil.which("toybox")
    if not mksh or not toybox:
        raise RuntimeError(
            "mksh and toybox are missing: `apt-get install mksh toybox` (the phone's userland)"
        )
    shutil.copy(mksh, bin_ / "sh")
    shutil.copy(toybox, bin_ / "toybox")
    applets = subprocess.run([toybox], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        if applet not in ("sh", "toybox", "getprop", "dumpsys", "logcat") and not (bin_ / applet).exists():
            os.symlink("toybox", bin_ / applet)


def _python_under_usr_bin(executable: str) -> list[str]:
    """The links and the file of the interpreter's symlink chain that lie in the hidden /usr/bin
    (a venv's python -> /usr/bin/python3 -> python3.11): only the upstream binary's stand-in execs
    it, by path, and a venv's python must keep its own path to find its site-packages."""
    args: list[str] = []
    path = executable
    for _ in range(16):
        if not os.path.islink(path):
            if path.startswith("/usr/bin/"):
                args += ["--ro-bind", path, path]
            return args
        target = os.readlink(path)
        if path.startswith("/usr/bin/"):
            args += ["--symlink", target, path]
        path = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return args


def bwrap_argv(root: Path, command: str) -> list[str]:
    """argv running `sh -c command` as the phone would: /data and /system are the phone's."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        raise RuntimeError("bubblewrap (bwrap) is missing: apt-get install bubblewrap")
    # No --unshare-pid: a phone's commands share one process table, so a resumed driver can see and
    # stop the runner an earlier connection left behind (it checks each pid's cmdline first).
    argv = [bwrap, "--clearenv"]
    for name in sorted(os.listdir("/")):
        host = Path("/") / name
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), f"/{name}"]
        elif name in HOST_RO:
            argv += ["--ro-bind", str(host), f"/{name}"]
    argv += ["--tmpfs", "/usr/bin"]  # no dash, no GNU coreutils, no python3 on the phone
    argv += [
        "--ro-bind", "/sys", "/sys",
        "--ro-bind", str(root / "power_supply"), "/sys/class/power_supply",
        "--ro-bind", str(root / "cpufreq"), "/sys/devices/system/cpu/cpufreq",
        "--ro-bind", "/proc", "/proc",
        "--dev", "/dev",
        "--tmpfs", "/tmp",
        "--bind", str(root / "data"), "/data",
        "--ro-bind", str(root / "system"), "/system",
        "--ro-bind", str(root / "meminfo"), "/proc/meminfo",
    ]  # fmt: skip
    for prefix in sorted({sys.prefix, sys.base_prefix}):  # a virtualenv elsewhere (./.venv, even under /tmp)
        if Path(prefix).parts[1] not in HOST_RO:
            argv += ["--ro-bind", prefix, prefix]
    argv += _python_under_usr_bin(sys.executable)
    argv += [
        "--chdir", "/",
        "--setenv", "PATH", "/system/bin",
        "--setenv", "HOME", "/",
        "--setenv", "TMPDIR", "/data/local/tmp",
        "--setenv", "ANDROID_DATA", "/data",
        "--setenv", "ANDROID_ROOT", "/system",
        "--setenv", "LANG", "C.UTF-8",
        "/system/bin/sh", "-c", command,
    ]  # fmt: skip
    return argv
