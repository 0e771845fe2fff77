"""Pure parser of the `litert-lm benchmark` command's layout (LiteRT-LM's Python CLI).

The command prints a header, then `----- Results -----` and four figures
(LM python/litert_lm_cli/commands/benchmark.py, `click.echo` lines, checked in the stored
versions of that file):

    Benchmarking model: <id> (<path>)
    Backend                    : cpu
    Number of tokens in prefill: 256
    Number of tokens in decode : 256
    Max number of tokens       : 2048          (only with --max-num-tokens)
    Cache                      : memory        (newer versions)
    Speculative decoding       : auto
    Target                     : Android       (only with --android)
    ----- Results -----
    Prefill speed:        31.03 tokens/s       ("%.2f tokens/s", the last prefill turn)
    Decode speed:         6.28 tokens/s
    Init time:            19.0319 s            ("%.4f s")
    Time to first token:  8.4094 s

Older versions print the header lines in another order; the runtime's own log lines (and a GPU
driver's) interleave with it (real: tests/unit/fixtures/real/lm2180_benchmark_cli_a770_gpu.log).
`Backend` is what the command was ASKED to use, not proof that it ran there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = re.compile(r"^Benchmarking model: (?P<model>.*?)(?: \((?P<path>.*)\))?\s*$")
_FIELD = re.compile(r"^(?P<key>Backend|Number of tokens in prefill|Number of tokens in decode|Max number of tokens"
                    r"|Cache|Speculative decoding|Target)\s*: ?(?P<value>.*?)\s*$")  # fmt: skip
_RESULTS = re.compile(r"^-+ Results -+\s*$")
_FIGURE = re.compile(
    r"^(?P<key>Prefill speed|Decode speed|Init time|Time to first token):\s+(?P<value>-?\d+(?:\.\d+)?)\s*(?P<unit>\S+)"
)


@dataclass(frozen=True)
class CliBenchmark:
    model: str = ""
    backend: str = ""  # as asked on the command line
    prefill_tokens: int | None = None
    decode_tokens: int | None = None
    max_num_tokens: int | None = None
    prefill_tps: float | None = None
    decode_tps: float | None = None
    init_ms: float | None = None
    ttft_ms: float | None = None
    has_results: bool = False  # the `----- Results -----` block was printed


def _int(value: str) -> int | None:
    return int(value) if value.strip().isdigit() else None


def parse_cli_benchmark(text: str) -> CliBenchmark | None:
    """`litert-lm benchmark` output -> its figures; None when the text is not that layout."""
    fields: dict[str, str] = {}
    figures: dict[str, float] = {}
    model = ""
    results = False
    for line in text.splitlines():
        line = line.strip()
        m = _HEADER.match(line)
        if m:
            model = m.group("model")
            continue
        m = _FIELD.match(line)
        if m and not results:
            fields[m.group("key")] = m.group("value")
            continue
        if _RESULTS.match(line):
            results = True
            continue
        m = _FIGURE.match(line)
        if m and results:
            figures[m.group("key")] = float(m.group("value"))
    if not (model or "Number of tokens in prefill" in fields) and not results:
        return None
    secs = {"Init time": "init", "Time to first token": "ttft"}
    ms = {v: (figures[k] * 1000.0 if k in figures else None) for k, v in secs.items()}
    return CliBenchmark(
        model=model,
        backend=fields.get("Backend", "").lower(),
        prefill_tokens=_int(fields.get("Number of tokens in prefill", "")),
        decode_tokens=_int(fields.get("Number of tokens in decode", "")),
        max_num_tokens=_int(fields.get("Max number of tokens", "")),
        prefill_tps=figures.get("Prefill speed"),
        decode_tps=figures.get("Decode speed"),
        init_ms=None if ms["init"] is None else round(ms["init"], 4),
        ttft_ms=None if ms["ttft"] is None else round(ms["ttft"], 4),
        has_results=results and bool(figures),
    )
