"""The report people look at, for real: a three-device lab run on this host (one device whose runner
crashes on two samples) through the real CLI, its report.html in headless Chromium, and the same run
as Markdown, terminal tables, csv/jsonl and `edgefarm compare`."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from orchestrator.devices.types import DeviceInfo
from orchestrator.farm.run_json import RunJson

from .conftest import FAULTY_RUNNER, MODELS, edgefarm, only_run_dir
from .test_local_run import canned_dataset

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's; never `playwright install`
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CRASHED = ("CAN-002", "CAN-004")  # the faulty device's runner dies on these (SIGKILL, SIGABRT)
DEVICES = {"cpu-a": False, "cpu-b": False, "flaky": True}  # run A's devices: name -> faulty


def _entry(tmp: Path, name: str, faulty: bool) -> dict:
    """One `kind: local` device named `name`; `faulty`: its runner dies on the CRASHED samples."""
    entry = {"name": name, "kind": "local", "workdir": str(tmp / f"work-{name}")}
    if faulty:
        wrapper = tmp / f"python-{name}"
        wrapper.write_text(
            f'#!/bin/sh\nEDGEFARM_TEST_FAULTS="KILL={CRASHED[0]},ABORT={CRASHED[1]}" '
            f'exec "{sys.executable}" "{FAULTY_RUNNER}" "$@"\n'
        )
        wrapper.chmod(0o755)
        entry["python"] = str(wrapper)
    return entry


def lab_run(tmp: Path, tag: str, ds: Path, devices: dict[str, bool], *flags: str) -> Path:
    """ONE `edgefarm run` on three devices of this host (name -> faulty), each a `kind: local` entry
    with its own work folder, as a farm run writes them."""
    inv = tmp / f"devices-{tag}.yaml"
    inv.write_text(json.dumps({"devices": [_entry(tmp, name, faulty) for name, faulty in devices.items()]}))
    out = tmp / f"runs-{tag}"
    p = edgefarm("run", "--devices", ",".join(devices), "--inventory", str(inv), "--out", str(out),
                 "--dataset", str(ds), "--max-output-tokens", "16", *flags)  # fmt: skip
    assert p.returncode == 0, p.stderr
    run_dir = only_run_dir(out)
    assert json.loads((run_dir / "run.json").read_text())["devices"] == list(devices)
    return run_dir


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Run A: cpu-a, cpu-b and flaky (crashes on CRASHED) over the canned set, which the model answers
    exactly, so the crashes are the only failures."""
    root = tmp_path_factory.mktemp("lab")
    ds = canned_dataset(root / "canned", json.loads((MODELS / "canned.json").read_text()))
    run_dir = lab_run(root, "a", ds, DEVICES)
    return {"root": root, "ds": ds, "run_dir": run_dir}


SCREENS = Path("/work/wt/screens")  # the lead's copy of the screenshots, when that folder exists


def _which_device_parts(page, shots: Path) -> None:
    """The parts that answer "which device?", checked and photographed: the top table (settings,
    intervals, the best value marked), the accuracy-against-latency chart, the disagreements (flips
    first, answers inline) and the drill-down (prompt, reference, the image and the audio player)."""
    top = page.locator("#devices")
    header = top.locator("thead").inner_text()
    for column in ("Pass (%)", "Strict pass (%)", "TTFT p50 (ms)", "Speed-up vs cpu-a"):
        assert column in header, (column, header)
    shared = page.locator("#shared").inner_text()  # settings every device shares: said once, above
    assert "Threads default" in shared and "Token cap 16" in shared and "Backend cpu" in shared, shared
    # three devices of one host: no figure's interval is clear of the others', so nothing is ★ but
    # the leaders are "tied" (flaky's pass rate is below the others': its crashes)
    assert "tied" in top.inner_text()
    assert "(" in top.locator("tbody tr").first.inner_text()  # an interval beside the figures
    paired = page.locator("#paired").inner_text()  # cpu-b and flaky against the baseline cpu-a
    assert "cpu-b vs cpu-a: verdicts 0 pass→fail, 0 fail→pass of 8" in paired and "flaky vs cpu-a" in paired
    acc = page.locator("#chart-acc svg")
    assert acc.count() == 1 and acc.locator("g.points circle").count() == 3
    rows = page.locator("#disagreeing tbody tr")
    assert rows.count() == len(CRASHED) and all(i in rows.nth(k).inner_text() for k, i in enumerate(CRASHED))
    assert "flaky ✗" in rows.first.inner_text()  # the answers inline, each device's verdict
    image = page.locator("tbody.sample:has(img.thumb)").first
    image.scroll_into_view_if_needed()
    assert (
        image.locator("img.thumb").evaluate("i => i.complete && i.naturalWidth") == 64
    )  # the 64x48 test image
    assert "reference:" in image.locator("tr.sh").inner_text() and image.locator(".prompt").inner_text()
    audio = page.locator("tbody.sample:has(audio)").first
    assert audio.locator("audio").get_attribute("src").startswith("media/")
    page.set_viewport_size({"width": 1280, "height": 800})
    _no_overflow(page)
    shots.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1400, "height": 900})
    for name, locator in (("top", page.locator("#devices-h")), ("chart", page.locator("#chart-acc")),
                          ("disagreements", page.locator("#disagreements")), ("drill-down", image)):  # fmt: skip
        locator.scroll_into_view_if_needed()
        page.evaluate(
            "el => { el.scrollIntoView({block: 'start'}); window.scrollBy(0, -60); }",
            locator.element_handle(),
        )
        page.screenshot(path=str(shots / f"report-{name}.png"))
    if SCREENS.is_dir():
        for png in shots.glob("report-*.png"):
            shutil.copyfile(png, SCREENS / png.name)


def test_report_html_in_headless_chromium(lab, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian `chromium` is not installed: apt-get install -y chromium (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    run_dir: Path = lab["run_dir"]
    shots = tmp_path / "screenshots"
    page_url = (run_dir / "report.html").resolve().as_uri()
    requests, errors = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})

            run_url = run_dir.resolve().as_uri() + "/"

            def route(r):  # the page and the run folder's own media copies, nothing else
                requests.append(r.request.url)
                r.continue_() if r.request.url == page_url or r.request.url.startswith(run_url) else r.abort()

            page.route("**/*", route)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_url)
            # charts: inline SVG written by report/charts.py, one per figure, text kept as text
            for key in ("chart-pass", "chart-dist", "chart-mem", "chart-run"):
                assert page.locator(f"#{key} svg").count() == 1, key
                box = page.locator(f"#{key} svg").bounding_box()
                assert box["width"] > 300 and box["height"] > 50, (key, box)
                assert page.locator(f"#{key} svg text").count() > 5, key
            for key in ("chart-pass", "chart-run"):  # a legend entry per device, in run order
                legend = page.locator(f"#{key} svg g.legend text").all_text_contents()
                assert [t.split(" (same as ")[0] for t in legend] == list(DEVICES), key
            panels = page.locator("#chart-run svg g.axes").count()  # memory, and temperature if read
            assert panels >= 1 and page.locator("#chart-run svg g.series").count() == panels * len(DEVICES)
            ids = page.eval_on_selector_all("[id]", "els => els.map(e => e.id)")
            assert len(ids) == len(set(ids)), ids  # the charts' ids are theirs: none repeated on the page
            assert page.locator("#stamp").inner_text().count("sha256") >= 2
            # disagreements: the crashed samples pass on cpu-a/cpu-b and fail on flaky
            text = page.locator("#disagreeing").inner_text()
            assert all(i in text for i in CRASHED), text
            assert "flaky" in page.locator("#worst-pair").inner_text()
            assert page.locator("#agreement tr").count() == 4  # header + 3 devices
            # drill-down: every device's answer next to the reference; filters change the visible rows
            cells = page.locator("tr.cell")
            total = cells.count()
            assert total == 3 * 8
            assert page.locator("#s-CAN-001 tr.sh").inner_text().find("pong") > 0
            visible = lambda: sum(cells.nth(i).is_visible() for i in range(total))
            assert visible() == total
            page.select_option("#f-device", "flaky")
            assert visible() == 8
            page.select_option("#f-status", "fail")
            assert visible() == 2
            assert "2 of 24" in page.locator("#shown").inner_text()
            page.select_option("#f-device", "")
            page.select_option("#f-status", "")
            page.check("#f-disagree")
            assert visible() == 3 * len(CRASHED)
            page.uncheck("#f-disagree")
            page.screenshot(path=str(run_dir / "report.png"), full_page=True)
            _which_device_parts(page, shots)
        finally:
            browser.close()
    assert not errors, errors
    # nothing but the page and files of its run folder: no CDN, no fonts, no fetch
    assert requests[0] == page_url and all(
        u.startswith(run_dir.resolve().as_uri() + "/") for u in requests[1:]
    )
    assert (run_dir / "report.png").stat().st_size > 10_000


def test_markdown_and_terminal_name_the_same_facts(lab):
    run_dir: Path = lab["run_dir"]
    md = (run_dir / "report.md").read_text()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["model"]["sha256"] in md and "8 run of 8" in md and "→ 20" in md  # stamp with the end time
    for title in (
        "## Pass by modality",
        "## Latency and speed distributions",
        "## Peak memory per device",
        "## Memory and temperature over the run",
        "## Disagreements between devices",
    ):
        assert title in md, title
    assert "least agreement: cpu-a vs flaky" in md or "least agreement: cpu-b vs flaky" in md
    assert "| cpu-a | · | 100% / 100% | 75% / 100% |" in md  # agreement matrix row
    term = edgefarm("report", str(run_dir), "--format", "term")
    assert term.returncode == 0, term.stderr
    out = term.stdout
    assert "least agreement" in out and "flaky" in out and "2 sample(s) disagree" in out


def test_csv_and_jsonl_exports_have_one_row_per_device_and_sample(lab):
    run_dir: Path = lab["run_dir"]
    p = edgefarm("report", str(run_dir), "--format", "csv")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert len(rows) == 3 * 8
    crashed = {(r["device"], r["sample_id"]): r for r in rows if r["status"] != "ok"}
    assert set(crashed) == {("flaky", i) for i in CRASHED}
    assert {r["status"] for r in crashed.values()} == {"killed", "crash"}
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(float(r["ttft_ms"]) > 0 and float(r["peak_rss_mb"]) > 0 and r["passed"] == "True" for r in ok)
    j = edgefarm("report", str(run_dir), "--format", "jsonl")
    lines = [json.loads(x) for x in j.stdout.splitlines()]
    assert len(lines) == 24 and lines[0]["reference"] == "pong" and lines[0]["output"] == "pong"


def test_compare_refuses_another_token_cap_and_slice_naming_both_values_then_compares_when_allowed(lab):
    """Run B: fewer samples, a token cap of 8 instead of 16, and cpu-a is now the device whose runner
    crashes. `compare` refuses, naming each difference with both values; --allow-different compares
    and prints the differences above the table."""
    root: Path = lab["root"]
    run_b = lab_run(
        root, "b", lab["ds"], {"cpu-b": False, "cpu-a": True}, "--limit", "5", "--max-output-tokens", "8"
    )
    a_id, b_id = lab["run_dir"].name, run_b.name
    refused = edgefarm("compare", str(lab["run_dir"]), str(run_b))
    assert refused.returncode == 2, refused.stdout
    assert f"token cap: 16 in {a_id}, 8 in {b_id}" in refused.stderr, refused.stderr
    assert "dataset slice: 8 samples" in refused.stderr and "5 samples" in refused.stderr
    assert "--allow-different" in refused.stderr and not refused.stdout
    c = edgefarm("compare", str(lab["run_dir"]), str(run_b), "--allow-different")
    assert c.returncode == 0, c.stderr
    assert "DIFFERENT SETTINGS (compared anyway)" in c.stdout and "token cap: 16 in" in c.stdout
    assert "on 5 common sample(s)" in c.stdout
    assert f"cpu-a: 2 sample(s) passed in A and fail in B: {', '.join(CRASHED)}" in c.stdout
    lines = c.stdout.splitlines()
    assert (
        "100.0 → 60.0; 2 pass→fail, 0 fail→pass of 5 (McNemar p=0.5): no significant difference"
        in " ".join(x.strip("│ ") for x in lines)
        or "McNemar p=0.5" in c.stdout
    )
    assert "only in" in c.stdout and "flaky" in c.stdout  # a device in A only is named


SHOTS = Path("/work/wt/report-shots")  # the screenshots for the closing note, when that folder exists


def _phones_and_host_report(n: int = 200):
    """Four phones and this host as `edgefarm run` records them (device.json, outcome.json, result
    rows, score records) through the real report pipeline: two identical Pixel 8s, a 3.6x slower
    Galaxy A14 that fails every 9th sample, a Pixel 6 interrupted at 100 of 200 (the fastest phone,
    on half the samples) and the host, fastest of all."""
    import random

    from android_runner.contract import SampleResult
    from orchestrator.farm.types import DeviceOutcome
    from orchestrator.report.combine import build_report, device_row, sample_rows

    def rows(count: int, ms: float, seed: int, runner: str, fail_every: int = 0) -> list[SampleResult]:
        rng = random.Random(seed)
        return [SampleResult(id=f"S-{i:03d}", status="ok", output="no" if fail_every and i % fail_every == 0 else "yes",
                             ttft_ms=ms * rng.uniform(0.9, 1.1), wall_ms=10 * ms * rng.uniform(0.95, 1.05),
                             decode_tps=1000 / ms * rng.uniform(0.95, 1.05), prefill_tps=5000 / ms,
                             peak_rss_mb=900 + rng.uniform(0, 40), energy_j=ms / 20 * rng.uniform(0.9, 1.1),
                             max_output_tokens=128, runner=runner, backend="cpu", backend_requested="cpu",
                             peak_method="hwm_reset" if runner == "native" else "sampled", mem_sample_ms=50)
                for i in range(count)]  # fmt: skip

    def score(results) -> dict:
        samples = [{"test_id": r.id, "modality": "text", "task": "qa", "metric": "bleu1", "reference": "yes",
                    "score": float(r.output == "yes"), "passed": r.output == "yes",
                    "strict_passed": r.output == "yes"} for r in results]  # fmt: skip
        ok = sum(s["passed"] for s in samples)
        return {"scorer": "edgemmeval", "samples": samples,
                "summary": {"total_scored": len(samples), "total_passed": ok, "pass_rate_pct": 100.0 * ok / len(samples),
                            "overall_avg": ok / len(samples), "verdict": "", "skipped": []}}  # fmt: skip

    phone = lambda name, maker, model, soc: {
        "name": name,
        "kind": "adb",
        "manufacturer": maker,
        "model": model,
        "soc": soc,
    }
    devices = (
        (phone("pixel-8-lab-1", "Google", "Pixel 8", "Tensor G3"), rows(n, 40, 1, "native"), {}),
        (phone("pixel-8-lab-2", "Google", "Pixel 8", "Tensor G3"), rows(n, 40, 2, "native"), {}),
        (phone("galaxy-a14-lab", "Samsung", "Galaxy A14 5G", "Exynos 1330"), rows(n, 143, 3, "native", 9), {}),
        (phone("pixel-6-cut", "Google", "Pixel 6", "Google Tensor"), rows(n // 2, 25, 4, "native"), {"interrupted": True}),
        ({"name": "this-host", "kind": "local", "cpu": "AMD EPYC 7B13 64-Core Processor"}, rows(n, 20, 5, "python"), {}),
    )  # fmt: skip
    per = {d["name"]: (res, score(res)) for d, res, _ in devices}
    run = {"run_id": "20261202-030000-phones", "started_at": "2026-12-02T03:00:00+00:00",
           "model": {"path": "gemma.litertlm", "sha256": "a" * 64, "size_bytes": 2_000_000},
           "dataset": {"path": "data/edgemmeval", "format": "edgemmeval", "sha256": "b" * 64, "samples_run": n,
                       "samples_total": n}, "host": {"hostname": "lab"}, "flags": {"max_output_tokens": 128}}  # fmt: skip
    rows_ = [device_row(DeviceInfo.from_dict(d), DeviceOutcome.from_dict({"wall_s": 100.0, **o}), *per[d["name"]], expected=n)
             for d, _, o in devices]  # fmt: skip
    return build_report(RunJson.from_dict(run), rows_, sample_rows(per))


def _no_overflow(page) -> None:
    """Neither the page nor the top table is wider than the window (no horizontal scroll)."""
    width = page.evaluate("() => document.documentElement.clientWidth")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    box = page.locator("#devices").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, (box, width)


def test_the_which_device_table_fits_a_laptop_screen_with_the_phones_columns(tmp_path):
    """Four phones and the host at 1280x800 in Chromium: no horizontal scroll, the phones' hardware,
    SoC and runner beside the decisive figures; ★ only on a figure whose interval is clear of every
    other device's; the Pixel 8 pair's pass rate (identical) is "tied"; the interrupted Pixel 6 says
    so and is never marked, though its decode speed is the best of the phones."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian `chromium` is not installed: apt-get install -y chromium (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    from orchestrator.report.printers import PRINTERS

    page_file = tmp_path / "report.html"
    page_file.write_text(PRINTERS.get("html")(_phones_and_host_report()))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(page_file.resolve().as_uri())
            _no_overflow(page)
            header = page.locator("#devices thead").inner_text()
            order = ["Pass", "Strict pass", "TTFT p50", "Decode", "Time/sample", "Speed-up", "Energy p50",
                     "Hardware", "SoC", "Runner", "Status"]  # fmt: skip
            at = [header.find(h) for h in order]
            assert all(i >= 0 for i in at) and at == sorted(at), (header, at)  # decisive figures first
            for absent in ("Figures over", "Peak method", "Mem sampling", "Files"):
                assert absent not in header, absent  # said once above, or on the details line
            assert "Mem sampling 50 ms" in page.locator("#shared").inner_text()
            rows = {r.locator("td").first.inner_text(): r for r in page.locator("#devices tbody tr").all()}
            assert set(rows) == {
                "pixel-8-lab-1",
                "pixel-8-lab-2",
                "galaxy-a14-lab",
                "pixel-6-cut",
                "this-host",
            }
            assert (
                "Exynos 1330" in rows["galaxy-a14-lab"].inner_text()
                and "native" in rows["pixel-8-lab-1"].inner_text()
            )
            cut = rows["pixel-6-cut"]
            assert "interrupted: 100/200" in cut.inner_text()
            assert (
                cut.locator("td.best").count() == 0
                and "tied" not in cut.inner_text()
                and "★" not in cut.inner_text()
            )
            assert rows["this-host"].locator("td.best").count() >= 4  # TTFT, decode, time/sample, speed-up
            for name in ("pixel-8-lab-1", "pixel-8-lab-2"):
                assert "tied" in rows[name].locator("td").nth(1).inner_text()  # pass rate 100 on both
            assert page.locator("#device-details li").count() == 5
            assert page.locator("#device-details").inner_text().count("peak by") == 5  # hwm_reset vs sampled
            if SHOTS.is_dir():
                page.screenshot(path=str(SHOTS / "which-device-1280x800.png"))
        finally:
            browser.close()


def _tmux_capture(command: list[str], columns: int, tmp: Path) -> tuple[str, str]:
    """`command` in a real terminal `columns` wide (tmux on a private socket, ours alone): the screen as
    the terminal shows it and with wrapped lines joined (`capture-pane -J`)."""
    import shlex
    import subprocess
    import time

    socket = f"edgefarm-test-{tmp.name}-{columns}"
    done = tmp / f"done-{columns}"
    script = f"COLUMNS= {shlex.join(command)}; touch {shlex.quote(str(done))}; sleep 600"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", str(columns), "-y", "200", "sh", "-c", script], check=True
    )
    try:
        deadline = time.monotonic() + 120
        while not done.exists():
            assert time.monotonic() < deadline, "the command did not end within 120 s"
            time.sleep(0.2)
        shown = subprocess.run(
            [*tmux, "capture-pane", "-p", "-S", "-200"], capture_output=True, text=True, check=True
        )
        joined = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-200"], capture_output=True, text=True,
                                check=True)  # fmt: skip
        return shown.stdout.rstrip("\n"), joined.stdout.rstrip("\n")
    finally:
        subprocess.run([*tmux, "kill-server"], check=False)


@pytest.mark.parametrize("columns", [100, 160])
def test_the_terminal_table_fits_the_terminal_it_is_printed_in(lab, tmp_path, columns):
    """`edgefarm report RUN --format term` in a real terminal 100 and 160 columns wide: no line is
    wrapped by the terminal, the table's figures are whole and every device's intervals are on a
    line of their own under the table."""
    import re

    run_dir: Path = lab["run_dir"]
    shown, joined = _tmux_capture([sys.executable, "-m", "orchestrator", "report", str(run_dir), "--format", "term"],
                                  columns, tmp_path)  # fmt: skip
    if SHOTS.is_dir():
        (SHOTS / f"report-term-{columns}.txt").write_text(shown + "\n")
    lines = shown.splitlines()
    assert len(lines) == len(joined.splitlines()), "a line was wrapped by the terminal"
    assert all(len(x) <= columns for x in lines)
    assert "…" not in shown, shown  # no cell or header cut to fit: a column is dropped instead
    table = lines[next(i for i, x in enumerate(lines) if x.startswith("┡")) + 1 :]
    rows = table[: next(i for i, x in enumerate(table) if x.startswith("└"))]
    assert [x.split("│")[1].strip() for x in rows] == list(DEVICES), (
        rows
    )  # a line per device: no cell wrapped
    for name in DEVICES:
        ci = next(x for x in lines if x.startswith(f"{name}: 95%: "))
        assert re.search(r"Pass \(\d+\.\d–\d+\.\d\)", ci), ci  # the interval whole, on the device's line


def test_report_html_to_stdout_saved_elsewhere_shows_the_runs_images(lab, tmp_path):
    """The README's `edgefarm report RUN --format html > report.html`, saved outside the run folder:
    its media and device links point into the run folder, so the image loads in Chromium."""
    from playwright.sync_api import sync_playwright

    run_dir: Path = lab["run_dir"]
    p = edgefarm("report", str(run_dir), "--format", "html")
    assert p.returncode == 0, p.stderr
    page_file = tmp_path / "elsewhere" / "report.html"
    page_file.parent.mkdir()
    page_file.write_text(p.stdout)
    run_url = run_dir.resolve().as_uri() + "/"
    assert f"src='{run_url}media/" in p.stdout and f"href='{run_url}devices/" in p.stdout
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(page_file.resolve().as_uri())
            image = page.locator("tbody.sample img.thumb").first
            image.scroll_into_view_if_needed()
            page.wait_for_function("i => i.complete", arg=image.element_handle())
            assert image.evaluate("i => i.naturalWidth") == 64  # the 64x48 test image, from the run folder
            _no_overflow(page)
        finally:
            browser.close()
    wide = edgefarm("report", str(run_dir), "--format", "md", "--wide")
    assert wide.returncode == 2 and "--format term" in wide.stderr  # --wide is never accepted and ignored
