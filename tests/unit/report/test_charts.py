"""The report's charts: a fixed layout computed before drawing (no constrained layout), checked on
1, 3 and 16 devices with long names: every text inside its figure, no two texts overlapping, the
legend in its own margin, and the same series as the figures behind them."""

from __future__ import annotations

import math
import re

import pytest

from android_runner.contract import SampleResult
from orchestrator.report.charts import FONT_PT, nice_ticks, render_charts, text_width_in
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.printers import MODALITY_ORDER

RUN = {"run_id": "20260101-000000-abcd", "model": {"path": "m.litertlm"}, "dataset": {"path": "d"}}
SAMPLES = 40


def _row(d: int, i: int) -> SampleResult:
    """Sample i on device d: a few crashes (gaps in the lines), figures that differ per device."""
    if (i + d) % 13 == 5:
        return SampleResult(id=f"s{i:03d}", status="crash", error="boom")
    speed = 1 + d / 4
    return SampleResult(
        id=f"s{i:03d}",
        status="ok",
        output=f"answer {i % (2 + d % 2)}",
        ttft_ms=(20 + i % 7 * 3) / speed,
        prefill_tps=40_000 * speed + 997 * i,
        decode_tps=3000 * speed + 53 * i,
        peak_rss_mb=900 + 40 * d + min(i, 10) * 12.5,
        peak_anon_mb=300 + 40 * d + min(i, 10) * 12.5,
        peak_file_mb=600.0,
        thermal_after={"max_temp_c": 35 + d + i * 0.3},
        energy_j=(2.5 + i % 5) / speed,
        energy_mj_per_token=(40 + i % 5) / speed,
    )


def _score(rows: list[SampleResult], d: int) -> dict:
    samples = [
        {
            "test_id": r.id,
            "modality": MODALITY_ORDER[k % len(MODALITY_ORDER)],
            "task": "qa",
            "metric": "bleu1",
            "score": 1.0,
            "passed": r.status == "ok" and (k + d) % 3 != 0,
        }
        for k, r in enumerate(rows)
    ]
    by_mod: dict[str, dict] = {}
    for s in samples:
        m = by_mod.setdefault(s["modality"], {"passed": 0, "total": 0, "avg_score": 1.0})
        m["total"] += 1
        m["passed"] += s["passed"]
    ok = sum(s["passed"] for s in samples)
    return {
        "scorer": "edgemmeval",
        "summary": {
            "total_scored": len(samples),
            "total_passed": ok,
            "pass_rate_pct": 100.0 * ok / len(samples),
        },
        "by_modality": by_mod,
        "samples": samples,
    }


def farm(n: int, samples: int = SAMPLES):
    names = [f"pixel-8-pro-lab-rack-{d}@site-a" for d in range(n)]
    per = {}
    for d, name in enumerate(names):
        rows = [_row(d, i) for i in range(samples)]
        per[name] = (rows, _score(rows, d))
    devices = [device_row({"name": name, "kind": "adb"}, {"wall_s": 1.0}, *per[name]) for name in names]
    return build_report(RUN, devices, sample_rows(per))


_TEXT = re.compile(
    r'<text style="([^"]*)" x="([-\d.]+)" y="([-\d.]+)" transform="rotate\((-?[\d.]+)[^"]*">([^<]*)</text>'
)


def texts(svg: str) -> list[tuple[str, float, tuple[float, float, float, float]]]:
    """Each text of a chart's SVG with its box (x0, y0, x1, y1 in pt, y down), estimated from the same
    character widths the layout uses; DejaVu Sans' ascent and descent (0.76, 0.24 em)."""
    out = []
    for style, x, y, angle, text in _TEXT.findall(svg):
        size = float(re.search(r"font-size: ([\d.]+)px", style).group(1))
        anchor = re.search(r"text-anchor: (\w+)", style).group(1)
        w = 72 * text_width_in(text.replace("&amp;", "&"), size)
        start = {"start": 0.0, "middle": -w / 2, "end": -w}[anchor]
        x, y = float(x), float(y)
        if float(angle) == 0:
            box = (x + start, y - 0.76 * size, x + start + w, y + 0.24 * size)
        else:  # rotate(-90): the text runs up, its top to the left
            box = (x - 0.76 * size, y - start - w, x + 0.24 * size, y - start)
        out.append((text, size, box))
    return out


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _viewbox(svg: str) -> tuple[float, float]:
    w, h = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups()
    return float(w), float(h)


@pytest.fixture(scope="module", params=[1, 3, 16])
def rendered(request):
    report = farm(request.param)
    return report, {key: svg for key, _, svg in render_charts(report)}


def test_every_chart_is_drawn_with_its_axis_labels(rendered):
    report, svgs = rendered
    assert all(svgs.values()), [k for k, v in svgs.items() if not v]
    for key, labels in {
        "chart-pass": ["pass rate (%)"],
        "chart-dist": ["TTFT (ms)", "Prefill (tok/s)", "Decode (tok/s)"],
        "chart-mem": ["peak memory (MB)", "file-backed (weights)", "anonymous (heap, KV cache)"],
        "chart-run": ["sample (run order)", "peak RSS (MB)", "temperature (°C)"],
        "chart-energy": ["Energy per sample (J)", "Energy per token (mJ)"],
    }.items():
        shown = [t for t, _, _ in texts(svgs[key])]
        assert all(label in shown for label in labels), (key, shown)
        for r in report.devices:  # every device is named: a row, or a legend entry
            assert r.device in shown, (key, r.device)


def test_texts_stay_inside_the_figure_and_never_overlap(rendered):
    _, svgs = rendered
    for key, svg in svgs.items():
        width, height = _viewbox(svg)
        boxes = texts(svg)
        for text, _, (x0, y0, x1, y1) in boxes:
            assert x0 >= 0 and y0 >= 0 and x1 <= width and y1 <= height, (key, text, (x0, y0, x1, y1))
        for i, (a, _, box_a) in enumerate(boxes):
            for b, _, box_b in boxes[i + 1 :]:
                assert not _overlap(box_a, box_b), (key, a, b)
        # the legend (its texts are the small ones) in a right margin of its own, never over data
        legend = _xs(svg, legend=True) + [box[0] for _, size, box in boxes if size < FONT_PT]
        plot = _xs(svg, legend=False) + [box[2] for _, size, box in boxes if size == FONT_PT]
        assert not legend or max(plot) < min(legend), key


def _xs(svg: str, legend: bool) -> list[float]:
    """The x of every point drawn (bars, boxes, lines, dots, spines, ticks), of the legend or not."""
    xs = []
    for group, body in re.findall(r'<g id="\w+?-(\w+)">(.*?)</g>', svg, flags=re.DOTALL):
        if group.startswith(("figure", "patch", "text")) or (group == "legend") != legend:
            continue
        xs += [float(x) for x in re.findall(r"[ML] ([-\d.]+) [-\d.]+", body)]
        xs += [float(x) for x in re.findall(r'<use [^>]*x="([-\d.]+)"', body)]
    return xs


def test_series_are_those_of_the_figures(rendered):
    report, svgs = rendered
    n, mods = len(report.devices), len({m for r in report.devices for m in r.by_modality})
    assert _paths(svgs["chart-pass"], "PolyCollection_1") == n * mods  # a bar per device and modality
    assert _paths(svgs["chart-dist"], "PolyCollection_1") == n  # a box per device and panel
    assert _paths(svgs["chart-dist"], "PolyCollection_3") == n
    assert _paths(svgs["chart-mem"], "PolyCollection_1") == 2 * n  # file-backed + anonymous per device
    assert len(re.findall(r'<g id="run-line2d_\d+"', svgs["chart-run"])) == 2 * n


def _paths(svg: str, group: str) -> int:
    body = re.search(rf'<g id="\w+-{group}">(.*?)</g>', svg, flags=re.DOTALL).group(1)
    return body.count("<path")


def test_text_width_estimate_is_never_below_the_fonts_own():
    """The margins rest on this estimate: it must cover DejaVu Sans (the SVG's first font)."""
    from matplotlib.font_manager import FontProperties, findfont, get_font

    font = get_font(findfont(FontProperties(family="DejaVu Sans")))
    font.set_size(FONT_PT, 72)
    for text in ("pixel-8-pro-lab-rack-2@site-a", "WWW-MMM-@@@", "this-host", "250,000", "combination",
                 "anonymous (heap, KV cache)", "Ünïcödé °C", "iiiilll"):  # fmt: skip
        font.set_text(text, 0.0)
        assert text_width_in(text) >= font.get_width_height()[0] / 64 / 72, text


def test_nice_ticks_cover_the_range_with_round_labels():
    for lo, hi in ((1.3, 13.1), (5000, 250000), (0.001, 0.0042), (-3, 7), (35.2, 48.7), (5, 5), (0, 0)):
        locs, labels = nice_ticks(lo, hi)
        assert locs[0] <= lo and locs[-1] >= hi and 2 <= len(locs) <= 7, (lo, hi, locs)
        assert len(set(labels)) == len(labels), labels
        assert all(math.isclose(float(t.replace(",", "").replace("−", "-")), x, abs_tol=1e-9) for t, x in
                   zip(labels, locs))  # fmt: skip
    assert nice_ticks(5000, 250000)[1][-1] == "300,000"
    assert nice_ticks(1, 2, integer=True)[1] == ["1", "2"]


def test_one_sample_and_missing_figures_still_draw():
    report = farm(2, samples=1)
    svgs = {key: svg for key, _, svg in render_charts(report)}
    assert svgs["chart-run"] and svgs["chart-dist"]
