"""Peak memory of reading a large request sheet: streaming it through the batch input
(:func:`orchestrator.batch.open_input`) against loading it whole with openpyxl, each in a
fresh child process (:func:`streaming_memory`)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from orchestrator.batch import ColumnMapping, open_input


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _stream_peak(path: str, whole: bool, queue: Any) -> None:
    """In a child process: peak RSS growth (MiB) and tracemalloc peak (MiB) of reading the
    sheet. The peak RSS (VmHWM) is reset after the imports (``/proc/self/clear_refs``), so
    only the reading is measured."""
    import tracemalloc

    from openpyxl import load_workbook

    before = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    tracemalloc.start()
    if whole:
        workbook = load_workbook(path)
        rows = list(workbook.worksheets[0].iter_rows(values_only=True))
        count = len(rows) - 1
    else:
        source = open_input(Path(path), ColumnMapping(text="text", id="id"))
        count = sum(1 for _ in source.rows())
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    queue.put((count, (_status_kib("VmHWM") - before) / 1024, traced / 2**20))


def streaming_memory(rows: int, folder: Path) -> dict[str, Any]:
    """Peak RSS growth (MiB) of streaming vs loading a generated ``rows``-row sheet."""
    from openpyxl import Workbook

    path = folder / "big.xlsx"
    book = Workbook(write_only=True)
    sheet = book.create_sheet("requests")
    sheet.append(["id", "text", "channel"])
    for i in range(rows):
        # distinct texts: the worst case for the .xlsx shared-strings table
        sheet.append([f"R{i}", f"Where is my order number {i}? It has not arrived yet.", "email"])
    book.save(path)
    result: dict[str, Any] = {"sheet_rows": rows, "file_mib": round(path.stat().st_size / 2**20, 2)}
    context = multiprocessing.get_context("spawn")
    for label, whole in (("streamed", False), ("loaded_whole", True)):
        queue = context.Queue()
        child = context.Process(target=_stream_peak, args=(str(path), whole, queue))
        child.start()
        count, mib, traced = queue.get()
        child.join()
        result[f"{label}_rows"] = count
        result[f"{label}_peak_rss_growth_mib"] = round(mib, 1)
        result[f"{label}_tracemalloc_peak_mib"] = round(traced, 1)
    return result
