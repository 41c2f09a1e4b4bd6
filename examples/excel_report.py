"""A spreadsheet with a request to summarise it: routed to the excel-report workflow, which
writes a Markdown and an .xlsx report (their paths are printed).

    .venv/bin/python examples/excel_report.py [--scripted]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _common import run, session, show
from openpyxl import Workbook

from orchestrator import Orchestrator, Request
from orchestrator.core.registry import load_workflows
from orchestrator.request import Attachment


def sales_sheet(folder: Path) -> Path:
    """A small workbook of monthly sales by region."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["month", "region", "revenue"])
    for i, month in enumerate(("2026-01", "2026-02", "2026-03", "2026-04")):
        sheet.append([month, "north", 1200 + 150 * i])
        sheet.append([month, "south", 900 + 80 * i])
    path = folder / "sales.xlsx"
    book.save(path)
    return path


async def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="orchestrator-example-"))
    sheet = sales_sheet(folder)
    async with session(__doc__ or "") as (client, store, settings):
        settings = settings.model_copy(update={"report_dir": folder / "reports"})
        workflows = [w.configured(settings) for w in load_workflows()]  # reports go to folder
        orch = Orchestrator(client, store, workflows)
        request = Request(
            text="Summarise the attached sales workbook by month and region",
            attachments=(Attachment(filename=sheet.name, path=str(sheet)),),
        )
        outcome = await orch.handle(request)
        show(outcome)
        for key in ("markdown", "xlsx"):
            if outcome.result and outcome.result.get(key):
                print(f"  {key}: {outcome.result[key]}")


if __name__ == "__main__":
    run(main)
