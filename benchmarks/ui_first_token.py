"""First reply token: the chat UI in a browser against ``orchestrator chat``, for the same turn.

Target (issue 17): the first reply token appears in the browser within 1.2× the time the same
turn takes to show it in ``orchestrator chat``.

* **chat**: what ``orchestrator chat`` does for a turn, in process: ``Orchestrator.stream`` on
  the customer-service workflow (its temperature presets), timed from the call to the first
  ``reply_facts`` or ``reply_token`` event (the first text ``orchestrator chat`` prints).
  Process start-up is excluded on both sides.
* **browser**: headless Chromium (Playwright) on a running ``orchestrator ui``, a new page per
  turn that has loaded and rested :data:`SETTLE_MS` (as a person reads before typing), timed
  *in the page*: from the click on *send* (a capturing click listener, ``performance.now()``) to the
  first text of the assistant's reply in the DOM (a ``MutationObserver``), plus the next
  animation frame (when it is painted). Timing in the page keeps Playwright's own round trips
  out of the figure; the time seen from Python (click call to the observer's mark, polled) is
  recorded beside it as ``browser_python_s``.

The two sides alternate turn by turn (chat, browser, chat, browser...) after one untimed
warm-up turn each, so a change of the machine's load hits both; the ratio is of the medians,
and the median of the per-pair ratios is given too. Each turn is a new conversation with the
same text. Run with a server and a UI up::

    python -m benchmarks.ui_first_token --server-url http://127.0.0.1:8000/v1 \\
        --ui-url http://127.0.0.1:8501 --repeat 9
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar

from benchmarks.harness import BenchParser, host_info, median, write_results
from orchestrator.config import Settings
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.runtime import make_client
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from workflows.customer_service import open_workflow

TEXT = "Where is my order? It has not arrived yet"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
T = TypeVar("T")
#: Milliseconds the page rests after loading before the timed send.
SETTLE_MS = 2000
#: The footer line that ends a turn in the UI.
FOOTER_END = re.compile(r"status (succeeded|needs_human|failed|rejected|no_workflow)")

#: Installed before the page loads: the time of the click on send, in the page's clock.
CLICK_MARK = """
window.__bench = {};
document.addEventListener('click', (e) => {
  if (e.target.closest && e.target.closest('#chat-submit')) {
    window.__bench.click = performance.now();
  }
}, true);
"""
#: Armed before the click: marks the first reply text in the DOM, then the next frame.
FIRST_TEXT_MARK = """(text) => {
  const skip = (t) => !t || t === text || t.startsWith('server STATS')
      || t.startsWith('LLMs can make');
  const reply = () => [...document.querySelectorAll('[role=article]')]
      .map((a) => a.innerText.trim()).filter((t) => !skip(t));
  const observer = new MutationObserver(() => {
    if (window.__bench.first === undefined && reply().length) {
      window.__bench.first = performance.now();
      window.__bench.text = reply()[0].slice(0, 120);
      observer.disconnect();
      requestAnimationFrame(() => { window.__bench.painted = performance.now(); });
    }
  });
  observer.observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


class ChatSide:
    """``orchestrator chat``'s turn, in process, on an event loop of its own thread (the
    browser side runs Playwright's sync API on the main thread)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.orch: Orchestrator | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def _open(self) -> None:
        self.client = make_client(self.settings)
        self.store = TelemetryStore(self.settings.database_url)
        self._cm = open_workflow(self.settings)
        workflow = await self._cm.__aenter__()
        self.orch = Orchestrator(self.client, self.store, [workflow])

    async def _turn(self) -> float:
        assert self.orch is not None
        request = Request(text=TEXT, thread_id=f"b-{uuid.uuid4().hex[:8]}", customer_id="C00001")
        started = time.perf_counter()
        first: float | None = None
        async for event in self.orch.stream(request):
            if first is None and event.kind in ("reply_facts", "reply_token"):
                first = time.perf_counter() - started
        return float("nan") if first is None else first

    async def _close(self) -> None:
        await self._cm.__aexit__(None, None, None)
        await self.client.aclose()
        self.store.close()

    def __enter__(self) -> ChatSide:
        self.run(self._open())
        return self

    def turn(self) -> float:
        return self.run(self._turn())

    def __exit__(self, *exc: object) -> None:
        self.run(self._close())
        self.loop.call_soon_threadsafe(self.loop.stop)


def browser_turn(browser: Any, ui_url: str) -> tuple[float, float]:
    """One turn in a new page: ``(in-page seconds to the painted first text, seconds seen
    from Python)``."""
    from playwright.sync_api import expect

    page = browser.new_page()
    try:
        page.add_init_script(CLICK_MARK)
        page.goto(ui_url)
        expect(page.get_by_text("STATS running=").first).to_be_visible(timeout=120_000)
        # as a person would: the page has loaded and settled before they send (no bundle,
        # font or websocket set-up of the page itself competes with the timed turn)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(SETTLE_MS)
        page.fill("#chat-input", TEXT)
        expect(page.locator("#chat-submit")).to_be_enabled(timeout=60_000)
        page.evaluate(FIRST_TEXT_MARK, TEXT)
        started = time.perf_counter()
        page.locator("#chat-submit").click()
        page.wait_for_function("() => window.__bench.painted !== undefined", timeout=300_000)
        seen = time.perf_counter() - started
        marks = page.evaluate("() => window.__bench")
        # the turn's end: its footer (not the reply's own "status delivered"), so that no
        # turn is still running on the machine when the next one is timed
        expect(page.get_by_text(FOOTER_END).first).to_be_visible(timeout=300_000)
        return (marks["painted"] - marks["click"]) / 1000.0, seen
    finally:
        page.close()


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        "benchmarks.ui_first_token",
        "First reply token in the browser UI against orchestrator chat, same turn.",
        repeat=9,
        repeat_help="Turns timed on each side (alternating).",
    )
    parser.add_argument("--server-url", required=True)
    parser.add_argument("--ui-url", required=True)
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    settings = Settings(server_url=args.server_url)
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    load_before = [round(x, 2) for x in os.getloadavg()]
    chat: list[float] = []
    browser_s: list[float] = []
    python_s: list[float] = []
    with ChatSide(settings) as side, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        side.turn()  # warm-up, untimed
        browser_turn(browser, args.ui_url)
        for _ in range(repeat):
            chat.append(side.turn())
            page_s, seen_s = browser_turn(browser, args.ui_url)
            browser_s.append(page_s)
            python_s.append(seen_s)
        browser.close()
    ratio = (median(browser_s) or 0) / (median(chat) or float("nan"))
    pair = median([b / c for b, c in zip(browser_s, chat, strict=True)]) or float("nan")
    data = {
        "host": host_info(),
        "load_average_before": load_before,
        "text": TEXT,
        "chat_first_token_s": [round(x, 4) for x in chat],
        "browser_first_token_s": [round(x, 4) for x in browser_s],
        "browser_python_s": [round(x, 4) for x in python_s],
        "median_chat_s": median(chat),
        "median_browser_s": median(browser_s),
        "median_browser_python_s": median(python_s),
        "ratio": round(ratio, 3),
        "median_pair_ratio": round(pair, 3),
        "target_ratio": 1.2,
        "met": ratio <= 1.2,
    }
    md = (
        "# First reply token: browser UI vs orchestrator chat\n\n"
        f"median chat {median(chat):.2f} s, median browser {median(browser_s):.2f} s "
        f"(in the page; {median(python_s):.2f} s seen from Python), ratio {ratio:.2f} "
        f"(median of per-pair ratios {pair:.2f}; target ≤ 1.2: "
        f"{'met' if ratio <= 1.2 else 'NOT met'}), {repeat} alternating turns each, "
        f"load average {load_before[0]} before / {round(os.getloadavg()[0], 2)} after."
    )
    write_results(args.out, "ui_first_token", data, md, command=args.command)
    print(md)


if __name__ == "__main__":
    main()
