"""Posts submitted for review, routed to the content-moderation workflow: its verdict.

.venv/bin/python examples/content_moderation.py [--scripted]
"""

from __future__ import annotations

from _common import run, session, show

from orchestrator import Orchestrator, Request

POSTS = (
    "Please review this post before it goes live: the new update is great, thanks team!",
    "请审核这条评论：这家店的服务太差了，再也不来了",
)


async def main() -> None:
    async with session(__doc__ or "") as (client, store, _):
        orch = Orchestrator(client, store)
        for text in POSTS:
            outcome = await orch.handle(Request(text=text, channel="moderation_queue"))
            show(outcome)
            if outcome.result:  # the verdict, as the workflow returns it
                print(f"  decision: {outcome.result.get('decision')}")


if __name__ == "__main__":
    run(main)
