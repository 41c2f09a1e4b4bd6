"""A customer's message through the router to the customer-service workflow.

.venv/bin/python examples/customer_service.py             # against `orchestrator serve`
.venv/bin/python examples/customer_service.py --scripted  # no server (test double)
"""

from __future__ import annotations

import asyncio
import sys

from _common import arguments, open_run, show

from orchestrator import Orchestrator, OrchestratorError, Request

MESSAGES = ("I was charged twice for my last order, please refund one", "我的退款什么时候到账？")


async def main() -> None:
    client, store, _ = open_run(arguments(__doc__ or ""))
    orch = Orchestrator(client, store)  # the installed workflows (entry points)
    try:
        for text in MESSAGES:
            show(await orch.handle(Request(text=text, channel="support")))
    finally:
        await client.aclose()
        store.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except OrchestratorError as exc:  # no server, a failed call: one line, not a traceback
        sys.exit(f"error: {exc}")
