"""First reply token: the chat UI in a browser against ``orchestrator chat``, for the same turn.

Target (issue 17): the first reply token appears in the browser within 1.2× the time the same
turn takes to show it in ``orchestrator chat``.

* **chat**: what ``orchestrator chat`` does for a turn, in process: ``Orchestrator.stream`` on
  the customer-service workflow, timed from the call to the first ``reply_facts`` or
  ``reply_token`` event (the first text ``orchestrator chat`` prints). Process start-up is
  excluded on both sides.
* **browser**: headless Chromium (Playwright) on a running ``orchestrator ui``, timed from the
  click on *send* to the first text of the assistant's reply in the page (polled every 10 ms).

Each turn is a new conversation with the same text. Run with a server and a UI up::

    python -m benchmarks.ui_first_token --server-url http://127.0.0.1:8000/v1 \\
        --ui-url http://127.0.0.1:8501 --repeat 5
"""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid

from benchmarks.harness import BenchParser, host_info, median, write_results
from orchestrator.config import Settings
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.runtime import make_client
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from workflows.customer_service import open_workflow

TEXT = "Where is my order? It has not arrived yet"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


async def chat_first_token(settings: Settings, repeat: int) -> list[float]:
    client = make_client(settings)
    store = TelemetryStore(settings.database_url)
    times = []
    try:
        async with open_workflow(settings) as workflow:
            orch = Orchestrator(client, store, [workflow])
            for _ in range(repeat):
                request = Request(
                    text=TEXT, thread_id=f"b-{uuid.uuid4().hex[:8]}", customer_id="C00001"
                )
                started = time.perf_counter()
                first = None
                async for event in orch.stream(request):
                    if first is None and event.kind in ("reply_facts", "reply_token"):
                        first = time.perf_counter() - started
                times.append(first if first is not None else float("nan"))
    finally:
        await client.aclose()
        store.close()
    return times


def browser_first_token(ui_url: str, repeat: int) -> list[float]:
    from playwright.sync_api import expect, sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        for _ in range(repeat):
            page = browser.new_page()
            page.goto(ui_url)
            expect(page.get_by_text("STATS running=").first).to_be_visible(timeout=120_000)
            page.fill("#chat-input", TEXT)
            expect(page.locator("#chat-submit")).to_be_enabled(timeout=60_000)
            started = time.perf_counter()
            page.locator("#chat-submit").click()
            # the first article that is neither the greeting, the user's turn nor the footer
            while True:
                texts = [t.strip() for t in page.get_by_role("article").all_inner_texts()]
                reply = [
                    t
                    for t in texts
                    if t and t != TEXT and not t.startswith(("server STATS", "LLMs can make"))
                ]
                if reply:
                    break
                if time.perf_counter() - started > 300:
                    raise TimeoutError("no reply text in 300 s")
                time.sleep(0.01)
            times.append(time.perf_counter() - started)
            expect(page.get_by_text("status ").last).to_be_visible(timeout=300_000)
            page.close()
        browser.close()
    return times


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        "benchmarks.ui_first_token",
        "First reply token in the browser UI against orchestrator chat, same turn.",
        repeat=5,
        repeat_help="Turns timed on each side.",
    )
    parser.add_argument("--server-url", required=True)
    parser.add_argument("--ui-url", required=True)
    args = parser.parse_args(argv)
    repeat = 2 if args.quick else args.repeat
    settings = Settings(server_url=args.server_url)
    chat = asyncio.run(chat_first_token(settings, repeat))
    browser = browser_first_token(args.ui_url, repeat)
    ratio = (median(browser) or 0) / (median(chat) or float("nan"))
    data = {
        "host": host_info(),
        "text": TEXT,
        "chat_first_token_s": chat,
        "browser_first_token_s": browser,
        "median_chat_s": median(chat),
        "median_browser_s": median(browser),
        "ratio": round(ratio, 3),
        "target_ratio": 1.2,
    }
    md = (
        "# First reply token: browser UI vs orchestrator chat\n\n"
        f"median chat {median(chat):.2f} s, median browser {median(browser):.2f} s, "
        f"ratio {ratio:.2f} (target ≤ 1.2), {repeat} turns each."
    )
    write_results(args.out, "ui_first_token", data, md, command=args.command)
    print(md)


if __name__ == "__main__":
    main()
