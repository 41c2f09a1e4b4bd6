"""Send a few requests through the framework from code and print what the router did.

Needs a running server: ``orchestrator serve`` in another terminal (CPU profile by default).

    .venv/bin/python examples/quickstart.py "I was charged twice" "我的退款什么时候到账？"
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from orchestrator import Orchestrator, OrchestratorError, Request, Settings, TelemetryStore
from orchestrator.core.runtime import make_client
from workflows import default_workflows


async def main(texts: list[str]) -> None:
    settings = Settings()
    client = make_client(settings)
    store = TelemetryStore(settings.database_url)
    orch = Orchestrator(client, store, default_workflows())
    try:
        for text in texts:
            outcome = await orch.handle(Request(text=text))
            c = outcome.classification
            print(f"{c.route} ({c.confidence:.2f}) {outcome.status}: {outcome.headline}")
            for call in outcome.calls:
                experts = ", ".join(f"L{layer}/e{e} {s:.0%}" for layer, e, s in call.top_experts)
                print(
                    f"  {call.node}: {call.prompt_tokens}+{call.completion_tokens} tokens, "
                    f"top experts {experts} [{call.expert_routing_source.value}]"
                )
    finally:
        await client.aclose()
        store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("texts", nargs="*", help="requests to send (default: one refund question)")
    texts = parser.parse_args().texts  # --help is help, not a request (tester13)
    try:
        asyncio.run(main(texts or ["Where is my refund?"]))
    except OrchestratorError as exc:  # no server, a failed call: one line, not a traceback
        sys.exit(f"error: {exc}")
