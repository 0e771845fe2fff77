"""Pure parser of `litert_lm_advanced_main --benchmark --report_peak_memory_footprint` output.

Input: the binary's stdout and stderr. Output: the answer text, init phases, TTFT, per-turn
prefill/decode figures, peak memory, and a classification of known field failures, so a farm
can report "GPU fell back to CPU on this phone" instead of dying on it.

Accepted variations (all seen in real captures): a glog prefix before `BenchmarkInfo:`,
`(Total: 1)` / `(Total 1 turns)`, mixed duration units (ms, s, us), an `Init Total` phase or a
`Total init time` line, `No prefill turns recorded.`, `--num_iterations` per-iteration blocks
with no header followed by an aggregated block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Failure kinds, most specific first. `gpu_unavailable` alone is a warning (the run fell back).
FAILURE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("link_error", re.compile(r"CANNOT LINK EXECUTABLE", re.IGNORECASE)),
    ("truncated_model", re.compile(r"Length and offset too large", re.IGNORECASE)),
    ("npu_dispatch_missing", re.compile(r"No usable Dispatch runtime found", re.IGNORECASE)),
    (
        "oom",
        re.compile(
            r"std::bad_alloc|out of memory|\bOOM\b|lowmemorykiller|Cannot allocate memory", re.IGNORECASE
        ),
    ),
    (
        "opencl_crash",
        re.compile(
            r"(SIGSEGV|Segmentation fault|Fatal signal 11)[^\n]*(OpenCL|libOpenCL|cl_|GL_|gpu)"
            r"|(OpenCL|libOpenCL)[^\n]*(SIGSEGV|Segmentation fault|crash)"
            r"|Invalid command queue",
            re.IGNORECASE,
        ),
    ),
    (
        "gpu_unavailable",
        re.compile(
            r"(OpenCL|GPU|libOpenCL|GPU accelerator)[^\n]*(not found|unavailable|not available|"
            r"failed to (?:load|create|initialize))|fall(?:ing|s)? ?back to CPU|Can't find OpenCL",
            re.IGNORECASE,
        ),
    ),
)
FATAL_KINDS = ("link_error", "truncated_model", "npu_dispatch_missing", "oom", "opencl_crash")

_GLOG = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+\s+[\w./-]+:\d+\]\s?")
_NUM = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_DURATION = re.compile(_NUM + r"\s*(ns|us|µs|ms|s|min)\b")
_UNIT_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "min": 60000.0}
_MEMORY_LINE = re.compile(r"Peak (system ram usage|private footprint):\s*" + _NUM + r"\s*MB", re.IGNORECASE)


@dataclass(frozen=True)
class TurnStat:
    turn: int
    tokens: int | None = None
    duration_ms: float | None = None
    tps: float | None = None


@dataclass(frozen=True)
class BenchmarkOutput:
    answer: str = ""
    has_benchmark: bool = False
    init_phases_ms: tuple[tuple[str, float], ...] = ()
    init_total_ms: float | None = None
    ttft_ms: float | None = None
    prefill: tuple[TurnStat, ...] = ()
    decode: tuple[TurnStat, ...] = ()
    peak_ram_mb: float | None = None
    peak_private_mb: float | None = None
    iterations: int = 1
    failure: str = ""  # one of FATAL_KINDS, "no_benchmark", or "" (fine)
    warnings: tuple[str, ...] = ()  # non-fatal kinds seen, e.g. gpu_unavailable
    detail: str = ""  # the stderr line that gave the failure away

    @property
    def prefill_tokens(self) -> int | None:
        vals = [t.tokens for t in self.prefill if t.tokens is not None]
        return sum(vals) if vals else None

    @property
    def decode_tokens(self) -> int | None:
        vals = [t.tokens for t in self.decode if t.tokens is not None]
        return sum(vals) if vals else None

    @property
    def infer_ms(self) -> float | None:
        vals = [t.duration_ms for t in self.prefill + self.decode if t.duration_ms is not None]
        return round(sum(vals), 3) if vals else None


def duration_ms(text: str) -> float | None:
    """`819.9514ms` / `8.7038005s` / `11.2us` -> milliseconds."""
    m = _DURATION.search(text)
    if not m:
        return None
    return float(m.group(1)) * _UNIT_MS[m.group(2)]


def _strip_glog(line: str) -> str:
    return _GLOG.sub("", line)


def _benchmark_blocks(lines: list[str]) -> tuple[list[str], int]:
    """The lines of the block to read and the number of iterations seen.

    With --num_iterations the per-iteration blocks have no header and the aggregated one does;
    the LAST `BenchmarkInfo` header wins. Without any header, the last TTFT line starts it.
    """
    headers = [i for i, ln in enumerate(lines) if "BenchmarkInfo" in ln]
    ttfts = [i for i, ln in enumerate(lines) if "Time to first token" in ln]
    if headers:
        start = headers[-1]
        iterations = max(1, len([i for i in ttfts if i < start]) or 1)
    elif ttfts:
        # find the start of the last block: the init phases preceding the last TTFT, if any
        start = ttfts[-1]
        for j in range(ttfts[-1] - 1, -1, -1):
            if "Init Phases" in lines[j]:
                start = j
                break
            if "Time to first token" in lines[j] or "Decode Turn" in lines[j]:
                break
        iterations = len(ttfts)
    else:
        return [], 0
    return lines[start:], iterations


def _turns(block: list[str], kind: str) -> tuple[TurnStat, ...]:
    stats: dict[int, dict] = {}
    current = None
    for ln in block:
        m = re.search(kind + r" Turn (\d+):(.*)", ln)
        if m:
            current = int(m.group(1))
            rest = m.group(2)
            tok = re.search(r"Processed\s+(\d+)\s+tokens", rest)
            stats[current] = {
                "tokens": int(tok.group(1)) if tok else None,
                "duration_ms": duration_ms(rest.split(" in ", 1)[-1]) if " in " in rest else None,
                "tps": None,
            }
            continue
        m = re.search(kind + r" Speed:\s*" + _NUM, ln)
        if m and current is not None and current in stats:
            stats[current]["tps"] = float(m.group(1))
            current = None
    return tuple(TurnStat(turn=n, **v) for n, v in sorted(stats.items()))


def _section(block: list[str], title: str, stop: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    inside = False
    for ln in block:
        if title in ln:
            inside = True
            continue
        if inside and any(s in ln for s in stop):
            break
        if inside:
            out.append(ln)
    return out


def parse_benchmark_output(stdout: str, stderr: str = "") -> BenchmarkOutput:
    """Read the upstream binary's output; BenchmarkInfo may be on either stream."""
    out_lines = [_strip_glog(ln) for ln in stdout.splitlines()]
    err_lines = [_strip_glog(ln) for ln in stderr.splitlines()]
    # The answer is stdout up to a BenchmarkInfo header, without the memory lines.
    answer_lines: list[str] = []
    for ln in out_lines:
        if "BenchmarkInfo" in ln or re.match(r"^\s*(Init Phases|Time to first token)", ln):
            break
        if _MEMORY_LINE.search(ln):
            continue
        answer_lines.append(ln)
    answer = "\n".join(answer_lines).strip("\n")

    all_lines = out_lines + err_lines
    in_stdout = any("BenchmarkInfo" in ln or "Time to first token" in ln for ln in out_lines)
    block, iterations = _benchmark_blocks(out_lines if in_stdout else err_lines)

    phases: list[tuple[str, float]] = []
    init_total = None
    ttft = None
    if block:
        for ln in _section(block, "Init Phases", ("Time to first token", "Prefill Turns", "Decode Turns")):
            m = re.match(r"^\s*-?\s*([^:]+):\s*(.+)$", ln)
            if not m:
                continue
            ms = duration_ms(m.group(2))
            if ms is None:
                continue
            name = m.group(1).strip()
            if name.lower() in ("init total", "total", "total init time"):
                init_total = ms
            else:
                phases.append((name, ms))
        for ln in block:
            m = re.search(r"Total init time:\s*(.+)$", ln)
            if m and duration_ms(m.group(1)) is not None:
                init_total = duration_ms(m.group(1))
            m = re.search(r"Time to first token:\s*(.+)$", ln)
            if m and ttft is None:
                ttft = duration_ms(m.group(1))
        if init_total is None and phases:
            init_total = round(sum(ms for _, ms in phases), 4)
    prefill = _turns(block, "Prefill") if block else ()
    decode = _turns(block, "Decode") if block else ()
    no_prefill = any("No prefill turns recorded" in ln for ln in block)
    if no_prefill or (ttft == 0.0 and not prefill):
        ttft = None

    peak_ram = peak_private = None
    for ln in all_lines:
        m = _MEMORY_LINE.search(ln)
        if m:
            if m.group(1).lower().startswith("peak system") or "system" in m.group(1).lower():
                peak_ram = float(m.group(2))
            else:
                peak_private = float(m.group(2))

    kinds: list[str] = []
    detail = ""
    for kind, pattern in FAILURE_PATTERNS:
        for ln in all_lines:
            if pattern.search(ln):
                kinds.append(kind)
                if kind in FATAL_KINDS and not detail:
                    detail = ln.strip()
                break
    fatal = [k for k in kinds if k in FATAL_KINDS]
    has_benchmark = bool(block) and not no_prefill and bool(prefill or decode)
    failure = ""
    if fatal and not has_benchmark:
        failure = fatal[0]
    elif fatal and "oom" in fatal:
        failure = "oom"
    elif not has_benchmark:
        failure = "no_benchmark"
        if "gpu_unavailable" in kinds and not detail:
            detail = next(ln.strip() for ln in all_lines if FAILURE_PATTERNS[-1][1].search(ln))
    warnings = tuple(k for k in kinds if k not in FATAL_KINDS or k != failure)
    return BenchmarkOutput(
        answer=answer,
        has_benchmark=has_benchmark,
        init_phases_ms=tuple(phases),
        init_total_ms=init_total,
        ttft_ms=ttft,
        prefill=prefill,
        decode=decode,
        peak_ram_mb=peak_ram,
        peak_private_mb=peak_private,
        iterations=max(iterations, 1),
        failure=failure,
        warnings=warnings,
        detail=detail,
    )
