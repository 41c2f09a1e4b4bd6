"""Expert skew from code: a few requests of each workflow recorded in a telemetry store, then
the skew report of that store: per workflow, how far its expert load is from the global one
(its fingerprint: Jensen-Shannon divergence, bits) and the experts that set it apart.

The same report as ``orchestrator skew --db FILE --window all``.

    .venv/bin/python examples/skew.py [--scripted] [--db runs/telemetry.db]
"""

from __future__ import annotations

import asyncio
import sys

from _common import arguments, open_run

from orchestrator import Orchestrator, OrchestratorError, Request
from orchestrator.analysis.skew import ReportOptions, build_report

REQUESTS = (
    "I was charged twice, refund one please",
    "where is my parcel, it is three days late",
    "Please review this post: you are all idiots",
    "请审核这条评论：这家店的服务太差了",
)


async def record(orch: Orchestrator) -> None:
    for text in REQUESTS:
        outcome = await orch.handle(Request(text=text))
        print(f"recorded {outcome.workflow}: {len(outcome.calls)} call(s)")


def main() -> None:
    client, store, _ = open_run(arguments(__doc__ or ""))
    try:
        asyncio.run(record(Orchestrator(client, store)))
        report = build_report(store, ReportOptions(window="all"))
    finally:
        asyncio.run(client.aclose())
    print(f"{report.overall.calls} calls, {report.shape.num_experts} experts per layer")
    for fp in report.fingerprints:
        top = ", ".join(f"L{e.layer}/e{e.expert} {e.direction}" for e in fp.distinguishing[:3])
        print(f"  {fp.kind} {fp.name}: {fp.calls} calls, JSD {fp.jsd:.3f} bits; apart: {top}")
    store.close()


if __name__ == "__main__":
    try:
        main()
    except OrchestratorError as exc:
        sys.exit(f"error: {exc}")
