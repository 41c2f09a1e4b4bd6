"""The HTML skew report opens in headless Chromium: plots render, no console error, nothing
is fetched from outside the file.

Chromium is Debian's package, installed by scripts/install.sh; playwright drives it through
``executable_path`` (no browser download). A missing Chromium fails the test on purpose.
"""

from __future__ import annotations

import io
import json
import shutil
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from plotly.utils import PlotlyJSONEncoder
from skew_data import EXPERTS, T0, add_request, freeze_time, trace

from orchestrator import TelemetryStore
from orchestrator.analysis.skew import ReportOptions, build_report, report_html
from orchestrator.analysis.skew.models import SkewReport
from orchestrator.analysis.skew.report_html import share_bars, write_html

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> SkewReport:
    folder = tmp_path_factory.mktemp("html")
    store = TelemetryStore(f"sqlite:///{folder / 'telemetry.db'}")
    rng = np.random.default_rng(5)
    shares = np.ones((3, EXPERTS))
    shares[0, 3], shares[0, 7] = 1e6, 0.0
    shares /= shares.sum(axis=1, keepdims=True)
    with pytest.MonkeyPatch.context() as mp:
        for i in range(24):
            freeze_time(mp, store, T0 + timedelta(hours=14 * i))  # two weeks: a drift baseline
            add_request(
                store,
                f"<b>refund</b> & order {i}",
                "customer_service",
                [("triage", trace(rng, shares, 40)), ("reply", trace(rng, shares, 30))],
            )
            add_request(store, f"post {i}", "moderation", [("judge", trace(rng, shares, 30))])
    report = build_report(store, ReportOptions(window="7d"))
    store.close()
    assert report.drift is not None and report.overall.hot() == [(1, 3)]
    return report


@pytest.fixture(scope="module")
def report_file(report: SkewReport, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_html(report, tmp_path_factory.mktemp("html") / "skew.html")


def test_share_bars_without_validation_are_the_same_figure(
    report: SkewReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    """share_bars skips plotly's validation for speed (issue 51): the figure's JSON is what
    the validated figure gives, for every scope of the report."""
    profiles = [report.overall, *report.workflows, *report.nodes]
    fast = [share_bars(p, report.thresholds).to_plotly_json() for p in profiles]
    monkeypatch.setattr(report_html, "VALIDATE", True)
    checked = [share_bars(p, report.thresholds).to_plotly_json() for p in profiles]
    assert json.dumps(fast, sort_keys=True, cls=PlotlyJSONEncoder) == json.dumps(
        checked, sort_keys=True, cls=PlotlyJSONEncoder
    )
    assert len(fast[0]["data"]) == 2 * len(report.overall.layers)


def test_report_renders_in_headless_chromium(report_file: Path, tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed; run scripts/install.sh (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    fetched: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: fetched.append(r.url))
            page.goto(report_file.as_uri(), timeout=300_000)
            plots = page.locator(".plotly-graph-div").count()
            page.wait_for_function(
                f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {plots}",
                timeout=300_000,
            )
            png = page.screenshot(full_page=True)
            text = page.inner_text("body")
            rendered = page.locator(".js-plotly-plot").count()
        finally:
            browser.close()
    assert errors == []
    assert fetched == [report_file.as_uri()]  # the report loads nothing from anywhere else
    # every figure rendered: heatmaps and bars of all + 2 workflows, confidence, drift x2, timeline
    assert plots >= 10 and rendered == plots
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)
    assert pixels.shape[0] > 900  # the full page, longer than the viewport
    assert pixels.std() > 20  # not blank: plots and tables, not a white page
    assert (pixels < 200).mean() > 0.05
    assert "L1:e3" in text and "L1:e7" in text
    # the panels of issue 51: balancedness per layer, shares with their intervals
    assert "Balancedness per layer" in text and "with its interval" in text
    html_text = report_file.read_text(encoding="utf-8")
    assert "alert floor" in html_text and '"arrayminus"' in html_text
    assert "<b>refund</b>" not in html_text  # request text escaped
    (tmp_path / "skew.png").write_bytes(png)
