"""The backend matrix of 4 phones x 3 backends fits a 1280 px page in real (headless) Chromium: the page
does not scroll sideways, the matrix table is inside the viewport, every cell's lines are shown, the flagged
cells are shaded and their flips open below with both answers (docs/matrix.md). The terminal's 100 columns
are tests/unit/report/test_backend_matrix.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.report.html_page import render_html
from orchestrator.report.matrix_views import cell_lines

from .test_report_html import CHROMIUM, FLAGS


def test_the_matrix_of_4_phones_by_3_backends_fits_1280_px(wide_matrix_report, tmp_path: Path):
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian `chromium` is not installed: apt-get install -y chromium (scripts/test.sh does)")
    from playwright.sync_api import sync_playwright

    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(wide_matrix_report), encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_file.as_uri())
            box = page.locator("table.matrix").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1280, box
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280
            text = page.locator("table.matrix").inner_text()
            for c in wide_matrix_report.matrix.cells:
                for line in cell_lines(c):
                    assert line.strip() in text, (c.unit, line)  # html folds the indent
            assert page.locator("table.matrix td.flag").count() == 4
            assert page.locator("table.matrix td.notrun").count() == 1
            flips = page.locator("details[id^='flips-'][open] table.flips tbody tr")
            assert flips.count() == 4 * 20 and "drifted" in flips.first.inner_text()
            for d in page.locator("details[id^='flips-']").all():
                w = d.bounding_box()
                assert w is not None and w["x"] + w["width"] <= 1280, w
        finally:
            browser.close()
