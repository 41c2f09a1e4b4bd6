"""Posts submitted for review, routed to the content-moderation workflow: its verdict.

.venv/bin/python examples/content_moderation.py [--scripted]
"""

from __future__ import annotations

import asyncio
import sys

from _common import arguments, open_run, show

from orchestrator import Orchestrator, OrchestratorError, Request

POSTS = (
    "Please review this post before it goes live: the new update is great, thanks team!",
    "请审核这条评论：这家店的服务太差了，再也不来了",
)


async def main() -> None:
    client, store, _ = open_run(arguments(__doc__ or ""))
    orch = Orchestrator(client, store)
    try:
        for text in POSTS:
            outcome = await orch.handle(Request(text=text, channel="moderation_queue"))
            show(outcome)
            if outcome.result:  # the verdict, as the workflow returns it
                print(f"  decision: {outcome.result.get('decision')}")
    finally:
        await client.aclose()
        store.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except OrchestratorError as exc:
        sys.exit(f"error: {exc}")
