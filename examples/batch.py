"""A sheet of requests as one batch: each row routed and run once, results in a workbook.

The same run as ``orchestrator batch requests.csv --text-column message --id-column ticket``,
from code. Run it again with the same sheet and it resumes: finished rows are not run twice.

    .venv/bin/python examples/batch.py [--scripted]
"""

from __future__ import annotations

import asyncio
import csv
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from _common import arguments, open_run

from orchestrator import Orchestrator, OrchestratorError, TelemetryStore
from orchestrator.batch.factory import SettingsFactory
from orchestrator.batch.inputs import ColumnMapping, open_input
from orchestrator.batch.job import run_batch_job
from orchestrator.batch.runner import BatchOptions

ROWS = (
    ("T-1", "Where is my parcel? It was due on Monday"),
    ("T-2", "Please review this comment before it is published: great service!"),
    ("T-3", "我的订单显示已签收但我没有收到"),
    ("T-4", "what is the capital of australia"),
)


class ScriptedFactory:
    """What a batch needs, with the one client given (``--scripted``: the test double)."""

    def __init__(self, client: object, store: TelemetryStore) -> None:
        self.client, self._store = client, store

    def store(self) -> TelemetryStore:
        return self._store

    async def orchestrators(self, urls: Sequence[str]) -> list[Orchestrator]:
        return [Orchestrator(self.client, self._store) for _ in urls]

    async def aclose(self) -> None:
        return None


async def main() -> None:
    args = arguments(__doc__ or "")
    client, store, settings = open_run(args)
    folder = Path(tempfile.mkdtemp(prefix="orchestrator-example-"))
    sheet = folder / "requests.csv"
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("ticket", "message"), *ROWS])
    source = open_input(sheet, ColumnMapping(text="message", id="ticket"))
    factory = (
        ScriptedFactory(client, store)
        if args.scripted
        else SettingsFactory(settings.model_copy(update={"database_url": store.url}))
    )
    try:
        job = await run_batch_job(
            source,
            factory,
            [settings.server_url],
            BatchOptions(concurrency=2),
            out=folder / "results.xlsx",
            formats=("csv",),
        )
    finally:
        await client.aclose()
    print(f"batch {job.summary.batch_id}: {job.summary}")
    results = next(p for p in job.files if p.suffix == ".csv")
    with results.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            print(f"  {row['id']}: {row['route']} {row['status']} | {(row['output'] or '')[:80]}")
    print(f"results: {', '.join(str(p) for p in job.files)}")
    store.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except OrchestratorError as exc:
        sys.exit(f"error: {exc}")
