"""A customer's message through the router to the customer-service workflow.

.venv/bin/python examples/customer_service.py             # against `orchestrator serve`
.venv/bin/python examples/customer_service.py --scripted  # no server (test double)
"""

from __future__ import annotations

from _common import run, session, show

from orchestrator import Orchestrator, Request

MESSAGES = ("I was charged twice for my last order, please refund one", "我的退款什么时候到账？")


async def main() -> None:
    async with session(__doc__ or "") as (client, store, _):
        orch = Orchestrator(client, store)  # the installed workflows (entry points)
        for text in MESSAGES:
            show(await orch.handle(Request(text=text, channel="support")))


if __name__ == "__main__":
    run(main)
