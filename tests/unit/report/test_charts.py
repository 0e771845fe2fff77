"""The report's charts: SVG written directly from a fixed layout computed before drawing, checked on
1, 3 and 16 devices with long names: valid SVG, every text inside its figure, no two texts
overlapping, the legend in its own margin, ids unique on the page, the same series as the figures
behind them (a gap in a line where a sample has no figure), and matplotlib's choice of ticks."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from android_runner.contract import SampleResult
from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson
from orchestrator.farm.types import DeviceOutcome
from orchestrator.report.cells import MODALITY_ORDER
from orchestrator.report.charts import render_charts
from orchestrator.report.combine import build_report, device_row, sample_rows
from orchestrator.report.svg import FONT_PT, TAB10, TAB20, Canvas, nice_ticks, round_ticks, text_width_in

RUN = {"run_id": "20260101-000000-abcd", "model": {"path": "m.litertlm"}, "dataset": {"path": "d"}}
SAMPLES = 40


def _crashes(d: int, i: int) -> bool:
    return (i + d) % 13 == 5


def _row(d: int, i: int) -> SampleResult:
    """Sample i on device d: a few crashes (gaps in the lines), figures that differ per device."""
    if _crashes(d, i):
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
    devices = [
        device_row(
            DeviceInfo.from_dict({"name": name, "kind": "adb"}),
            DeviceOutcome.from_dict({"wall_s": 1.0}),
            *per[name],
        )
        for name in names
    ]
    return build_report(RunJson.from_dict(RUN), devices, sample_rows(per))


SVG = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[tuple[str, float, tuple[float, float, float, float]]]:
    """Each text of a chart's SVG with its box (x0, y0, x1, y1 in pt, y down), estimated from the same
    character widths the layout uses; DejaVu Sans' ascent and descent (0.76, 0.24 em)."""
    out = []
    for t in ET.fromstring(svg).iter(f"{SVG}text"):
        size, x, y = float(t.get("font-size")), float(t.get("x")), float(t.get("y"))
        w = 72 * text_width_in(t.text, size)
        start = x + {"start": 0.0, "middle": -w / 2, "end": -w}[t.get("text-anchor")]
        box = (start, y - 0.76 * size, start + w, y + 0.24 * size)
        turn = re.fullmatch(r"rotate\((-?[\d.]+) ([-\d.]+) ([-\d.]+)\)", t.get("transform", "rotate(0 0 0)"))
        angle, cx, cy = (float(v) for v in turn.groups())
        if angle == -90:  # a quarter turn counterclockwise about (cx, cy): the text runs up
            box = (cx + box[1] - cy, cy - (box[2] - cx), cx + box[3] - cy, cy - (box[0] - cx))
        else:
            assert angle == 0, t.get("transform")
        out.append((t.text, size, box))
    return out


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _viewbox(svg: str) -> tuple[float, float]:
    root = ET.fromstring(svg)
    x, y, w, h = (float(v) for v in root.get("viewBox").split())
    assert (x, y) == (0, 0) and root.get("width") == f"{root.get('viewBox').split()[2]}pt"
    assert root.get("height") == f"{root.get('viewBox').split()[3]}pt"  # 72 user units per inch
    return w, h


def _groups(svg: str, cls: str) -> list[ET.Element]:
    return [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == cls]


def _xs(svg: str, legend: bool) -> list[float]:
    """The x of every shape drawn (bars, boxes, lines, dots, spines, ticks), of the legend or not."""
    xs = []
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if (g.get("class") == "legend") != legend:
            continue
        for e in g:
            if e.tag == f"{SVG}rect":
                xs += [float(e.get("x")), float(e.get("x")) + float(e.get("width"))]
            elif e.tag == f"{SVG}circle":
                xs += [float(e.get("cx")) - float(e.get("r")), float(e.get("cx")) + float(e.get("r"))]
            elif e.tag == f"{SVG}path":
                xs += [float(x) for x in re.findall(r"[ML]([-\d.]+) [-\d.]+", e.get("d"))]
    return xs


@pytest.fixture(scope="module", params=[1, 3, 16])
def rendered(request):
    report = farm(request.param)
    return report, {key: svg for key, _, svg in render_charts(report)}


def test_every_chart_is_valid_svg_with_its_axis_labels(rendered):
    report, svgs = rendered
    assert all(svgs.values()), [k for k, v in svgs.items() if not v]
    for key, labels in {
        "chart-pass": ["pass rate (%)", "image", "combination"],
        "chart-dist": ["TTFT (ms)", "Prefill (tok/s)", "Decode (tok/s)"],
        "chart-mem": ["peak memory (MB)", "file-backed (weights)", "anonymous (heap, KV cache)"],
        "chart-run": ["sample (run order)", "peak RSS (MB)", "temperature (°C)"],
        "chart-energy": ["Energy per sample (J)", "Energy per token (mJ)"],
    }.items():
        root = ET.fromstring(svgs[key])  # well-formed XML, one SVG element
        assert root.tag == f"{SVG}svg" and "DejaVu Sans" in root.get("font-family"), key
        assert not root.findall(f".//{SVG}script") and "<style" not in svgs[key], key
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
        assert all(0 <= x <= width for x in legend + plot), key
        assert not legend or max(plot) < min(legend), key


def test_ids_are_unique_on_a_page_of_charts(rendered):
    """Several charts share report.html: every id is its chart's, none twice, every reference resolves
    within its own chart."""
    _, svgs = rendered
    seen = []
    for key, svg in svgs.items():
        ids = [e.get("id") for e in ET.fromstring(svg).iter() if e.get("id")]
        assert ids and all(i.startswith(key.removeprefix("chart-") + "-") for i in ids), (key, ids)
        refs = re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', svg)
        assert all((a or b) in ids for a, b in refs), (key, refs)
        seen += ids
    assert len(seen) == len(set(seen))
    assert all(len(_groups(svg, "legend")) <= 1 for svg in svgs.values())


def _runs(ok: list[bool]) -> int:
    """How many runs of two or more consecutive samples with a figure: a line each."""
    runs, n = 0, 0
    for good in [*ok, False]:
        runs, n = (runs + (n > 1), 0) if not good else (runs, n + 1)
    return runs


def test_series_are_those_of_the_figures(rendered):
    report, svgs = rendered
    n, mods = len(report.devices), len({m for r in report.devices for m in r.by_modality})
    count = lambda svg, cls, tag: [len(g.findall(f"{SVG}{tag}")) for g in _groups(svg, cls)]
    assert count(svgs["chart-pass"], "bars", "rect") == [n * mods]  # a bar per device and modality
    assert count(svgs["chart-dist"], "boxes", "rect") == [n, n, n]  # a box per device and panel
    assert count(svgs["chart-dist"], "extremes", "circle") == [2 * n] * 3  # its min and max
    assert count(svgs["chart-energy"], "boxes", "rect") == [n, n]
    assert count(svgs["chart-mem"], "bars", "rect") == [2 * n]  # file-backed + anonymous per device
    # a line per device and panel (memory, then temperature), broken where a sample crashed
    series = _groups(svgs["chart-run"], "series")
    assert len(series) == 2 * n
    for g, d in zip(series, [*range(n), *range(n)]):
        (path,) = g.findall(f"{SVG}path")
        assert path.get("d").count("M") == _runs([not _crashes(d, i) for i in range(SAMPLES)]) > 1
    # a colour per device, the legend's and the bars' the same: tab10's, tab20's past ten devices
    bars = {r.get("fill") for r in _groups(svgs["chart-pass"], "bars")[0]}
    swatches = [r.get("fill") for r in _groups(svgs["chart-pass"], "legend")[0].findall(f"{SVG}rect")]
    assert bars == set(swatches) and swatches == list((TAB10 if n <= 10 else TAB20)[:n])


def test_a_nan_breaks_a_line_and_a_lone_point_draws_nothing():
    nan = float("nan")
    c = Canvas("t", 2.0, 1.0)
    c.polylines([[(0, 0), (1, 1), (nan, 0.5), (1.5, 0), (2, 1), (0, nan), (2, 0)]], "#000", 1)
    assert 'd="M0 72 L72 0 M108 72 L144 0"' in c.svg()
    c = Canvas("t", 2.0, 1.0)
    c.polylines([[(0, 0), (nan, nan), (1, 1)]], "#000", 1)
    assert "<path" not in c.svg()


def test_text_is_aligned_as_matplotlib_aligns_it():
    """(1, 0.5) in inches on a 1-inch-high canvas is (72, 36); 9 pt DejaVu Sans: ascent 6.84 pt,
    descent 2.16 pt, a line 11.25 pt."""
    c = Canvas("t", 2.0, 1.0)
    c.text(1, 0.5, "top", ha="center", va="top")
    c.text(1, 0.5, "bottom", ha="right", va="bottom")
    c.text(1, 0.5, "middle", va="center_baseline")
    c.text(1, 0.5, "two\nlines", ha="center", va="top")
    c.text(1, 0.5, "up", ha="center", va="top", rotation=90)
    c.text(1, 0.5, "a < b & c", size=7)
    got = [(t.text, t.get("x"), t.get("y"), t.get("text-anchor"), t.get("font-size"), t.get("transform"))
           for t in ET.fromstring(c.svg()).iter(f"{SVG}text")]  # fmt: skip
    assert got == [
        ("top", "72", "42.84", "middle", "9", None),
        ("bottom", "72", "33.84", "end", "9", None),
        ("middle", "72", "39.42", "start", "9", None),
        ("two", "72", "42.84", "middle", "9", None),
        ("lines", "72", "54.09", "middle", "9", None),
        ("up", "72", "42.84", "middle", "9", "rotate(-90 72 36)"),
        ("a < b & c", "72", "36", "start", "7", None),
    ]


# DejaVu Sans at 9 pt, ink widths in inches as matplotlib's FreeType measured them (rounded up)
DEJAVU_WIDTHS = (
    ("pixel-8-pro-lab-rack-2@site-a", 1.829),
    ("WWW-MMM-@@@", 1.2034),
    ("this-host", 0.5417),
    ("250,000", 0.5417),
    ("combination", 0.7917),
    ("anonymous (heap, KV cache)", 1.8195),
    ("Ünïcödé °C", 0.7084),
    ("iiiilll", 0.2917),
    ("temperature (°C)", 1.0945),
    ("−1,000", 0.4862),
)


@pytest.mark.parametrize("text, width", DEJAVU_WIDTHS)
def test_text_width_estimate_is_never_below_the_fonts_own(text, width):
    """The margins rest on this estimate: it must cover DejaVu Sans (the SVG's first font)."""
    assert text_width_in(text) >= width


def test_nice_ticks_cover_the_range_with_round_labels():
    for lo, hi in ((1.3, 13.1), (5000, 250000), (0.001, 0.0042), (-3, 7), (35.2, 48.7), (5, 5), (0, 0)):
        locs, labels = nice_ticks(lo, hi)
        assert locs[0] <= lo and locs[-1] >= hi and 2 <= len(locs) <= 7, (lo, hi, locs)
        assert len(set(labels)) == len(labels), labels
        assert all(math.isclose(float(t.replace(",", "").replace("−", "-")), x, abs_tol=1e-9) for t, x in
                   zip(labels, locs))  # fmt: skip
    assert nice_ticks(5000, 250000)[1][-1] == "300,000"
    assert nice_ticks(1, 2, integer=True)[1] == ["1", "2"]
    assert nice_ticks(-3, 7, 4)[1] == ["−5.0", "−2.5", "0.0", "2.5", "5.0", "7.5"]


# (lo, hi, bins, integer) -> matplotlib 3.11's MaxNLocator(bins, steps=[1, 2, 2.5, 5, 10],
# integer=integer).tick_values(lo, hi), float for float: a sample of the 680 cases round_ticks was
# checked equal on (random spans and magnitudes, far from zero, integer axes, the charts' own ranges)
MAX_N_LOCATOR = (
    ((110671.06936061509, 272761.54820393794, 4, False), [100000.0, 150000.0, 200000.0, 250000.0, 300000.0]),
    (
        (771.3321253923561, 771.6257252661162, 4, False),
        [771.3000000000001, 771.4000000000001, 771.5000000000001, 771.6, 771.7],
    ),
    ((0.0, 0.00017018721809452242, 2, False), [0.0, 0.0001, 0.0002]),
    ((-0.29640879681803023, 0.30926330457126416, 1, False), [-0.5, -0.25, 0.0, 0.25, 0.5]),
    ((-87.91217162571643, -87.44416843701484, 4, False), [-88.0, -87.8, -87.6, -87.4]),
    ((1.0, 1794.0, 4, False), [0.0, 500.0, 1000.0, 1500.0, 2000.0]),
    ((92.0, 101.3, 1, False), [90.0, 95.0, 100.0, 105.0]),
    ((50.08, 75.47999999999999, 3, True), [50.0, 60.0, 70.0, 80.0]),
    ((94.091, 123.091, 4, True), [90.0, 100.0, 110.0, 120.0, 130.0]),
    ((0.0, 3.365979375454998, 3, True), [0.0, 2.0, 4.0]),
    ((1.0, 1343.0, 4, False), [0.0, 500.0, 1000.0, 1500.0]),
    ((0.0, 18.48322073078238, 4, False), [0.0, 5.0, 10.0, 15.0, 20.0]),
    ((-0.030583849383276202, -0.011565175415429386, 2, False), [-0.04, -0.03, -0.02, -0.010000000000000002]),
    (
        (-487600780.2613549, -486252141.4385716, 1, False),
        [-488000000.0, -487500000.0, -487000000.0, -486500000.0, -486000000.0],
    ),
    ((93.8, 119.69999999999999, 4, False), [90.0, 100.0, 110.0, 120.0]),
    ((4840.99384171966, 4861.290485006028, 3, False), [4840.0, 4850.0, 4860.0, 4870.0]),
    ((62648362.403082676, 63197650.0269516, 3, True), [62600000.0, 62800000.0, 63000000.0, 63200000.0]),
    (
        (-54.604396763803244, -54.33277961845432, 4, True),
        [-54.7, -54.6, -54.5, -54.400000000000006, -54.300000000000004],
    ),
    ((0.0, 108903.80406875923, 1, True), [0.0, 100000.0, 200000.0]),
    ((-0.2826389832939049, 0.7399579433811643, 1, True), [-0.5, 0.0, 0.5, 1.0]),
    ((1.0, 1809.0, 4, True), [0.0, 500.0, 1000.0, 1500.0, 2000.0]),
    ((1.0, 1482.0, 1, False), [0.0, 500.0, 1000.0, 1500.0]),
    ((1.3, 13.1, 1, False), [0.0, 5.0, 10.0, 15.0]),
    ((1.3, 13.1, 4, False), [0.0, 5.0, 10.0, 15.0]),
    ((5000.0, 250000.0, 1, False), [0.0, 100000.0, 200000.0, 300000.0]),
    ((5000.0, 250000.0, 4, False), [0.0, 100000.0, 200000.0, 300000.0]),
    ((0.001, 0.0042, 1, False), [0.0, 0.002, 0.004, 0.006]),
    ((0.001, 0.0042, 4, False), [0.001, 0.002, 0.003, 0.004, 0.005]),
    ((-3.0, 7.0, 1, False), [-5.0, 0.0, 5.0, 10.0]),
    ((-3.0, 7.0, 4, False), [-5.0, -2.5, 0.0, 2.5, 5.0, 7.5]),
    ((35.2, 48.7, 1, False), [35.0, 40.0, 45.0, 50.0]),
    ((35.2, 48.7, 4, False), [35.0, 40.0, 45.0, 50.0]),
    ((1.0, 2.0, 1, False), [1.0, 2.0]),
    ((1.0, 2.0, 4, False), [1.0, 1.25, 1.5, 1.75, 2.0]),
    ((1.0, 2.0, 4, True), [1.0, 2.0]),
    ((1.0, 40.0, 1, True), [0.0, 20.0, 40.0]),
    ((1.0, 40.0, 4, True), [0.0, 10.0, 20.0, 30.0, 40.0]),
    ((1.0, 200.0, 1, True), [0.0, 100.0, 200.0]),
    ((1.0, 200.0, 4, True), [0.0, 50.0, 100.0, 150.0, 200.0]),
    ((0.0, 1.0, 1, False), [0.0, 1.0]),
    ((0.0, 1.0, 4, False), [0.0, 0.25, 0.5, 0.75, 1.0]),
    ((900.0, 1225.0, 1, False), [800.0, 1000.0, 1200.0, 1400.0]),
    ((900.0, 1225.0, 4, False), [900.0, 1000.0, 1100.0, 1200.0, 1300.0]),
)


@pytest.mark.parametrize("args, ticks", MAX_N_LOCATOR)
def test_round_ticks_are_matplotlibs(args, ticks):
    assert round_ticks(*args) == ticks


def test_one_sample_and_missing_figures_still_draw():
    report = farm(2, samples=1)
    svgs = {key: svg for key, _, svg in render_charts(report)}
    assert svgs["chart-run"] and svgs["chart-dist"]
    ET.fromstring(svgs["chart-run"])


def test_one_outlier_does_not_stretch_the_axis_and_is_counted():
    """40 samples near 20 ms and one of 5000 ms: the TTFT axis ends near the rest, the outlier is
    counted in the axis label; memory over the run starts at 0 MB."""
    rows = [SampleResult(id=f"s{i}", status="ok", output="x", ttft_ms=20.0 + i % 5, peak_rss_mb=90.0 + i % 2)
            for i in range(40)]  # fmt: skip
    rows.append(SampleResult(id="s40", status="ok", output="x", ttft_ms=5000.0, peak_rss_mb=91.0))
    per = {"p": (rows, None)}
    report = build_report(
        RunJson.from_dict(RUN),
        [device_row(DeviceInfo.from_dict({"name": "p"}), DeviceOutcome(name="p", kind=""), rows, None)],
        sample_rows(per),
    )
    svgs = {key: svg for key, _, svg in render_charts(report) if svg}
    labels = [t for t, _, _ in texts(svgs["chart-dist"])]
    assert "TTFT (ms); 1 beyond the axis" in labels
    ticks = [float(t.replace(",", "")) for t in labels if re.fullmatch(r"[\d,.]+", t)]
    assert max(ticks) < 100  # the axis of the 40 others, not of the outlier
    run_labels = [t for t, _, _ in texts(svgs["chart-run"])]
    assert "0" in run_labels  # the memory axis starts at 0 MB, not at 90


def test_a_low_pass_rate_gets_an_axis_fitted_to_it_and_a_scatter_a_dot_legend():
    """issue 36: pass rates of 2-6% on a 0-100 axis were one flat line; the axis now spans the rates
    and their intervals. The accuracy chart's legend marks are dots (it is a scatter), not bars."""
    report = farm(3)
    low = [replace(r, pass_rate_pct=2.0 + 2 * i, intervals={**r.intervals, "pass_rate_pct": (0.5 + 2 * i, 6.0 + 2 * i)})
           for i, r in enumerate(report.devices)]  # fmt: skip
    charts = {key: svg for key, _, svg in render_charts(replace(report, devices=tuple(low)))}
    acc = charts["chart-acc"]
    ticks = [t for t, _, _ in texts(acc) if re.fullmatch(r"[\d.]+", t)]
    assert "100" not in ticks and "10" in ticks  # 0.5-10%: the axis ends near 10, not at 100
    legend = _groups(acc, "legend")[0]
    assert len(legend.findall(f"{SVG}circle")) == 3 and not legend.findall(f"{SVG}rect")


def test_a_run_without_temperatures_has_no_temperature_in_its_chart_title():
    report = farm(2)
    cool = replace(report, samples=tuple(replace(s, cells={n: replace(c, thermal_c=None) for n, c in s.cells.items()})
                                         for s in report.samples))  # fmt: skip
    titles = {key: title for key, title, _ in render_charts(cool)}
    assert titles["chart-run"].startswith("Memory over the run") and "temperature" in titles["chart-run"]
    assert "temperature" not in titles["chart-run"].split("(")[0]
    assert {key: title for key, title, _ in render_charts(report)}[
        "chart-run"
    ] == "Memory and temperature over the run"


def test_every_pass_rate_0_says_so_instead_of_empty_axes():
    """issue 41: a run where nothing passed drew the pass-rate-per-modality chart as empty axes."""
    from orchestrator.report.printers import PRINTERS

    report = farm(2)
    none = [replace(r, by_modality={m: {**v, "passed": 0} for m, v in r.by_modality.items()}) for r in report.devices]
    failed = replace(report, devices=tuple(none))
    assert {key: svg for key, _, svg in render_charts(failed)}["chart-pass"] is None
    assert {key: svg for key, _, svg in render_charts(report)}["chart-pass"]  # one pass: drawn
    page = PRINTERS.get("html")(failed)
    figure = page.split("id='chart-pass'")[1].split("</figure>")[0]
    assert "<svg" not in figure and f"none of the {2 * SAMPLES} scored samples passed" in figure, figure
