"""Reading time of every real workbook in ../shared/data/spreadsheets (median of N runs).

Run by hand from the repository root::

    python -m benchmarks.spreadsheet_read_bench [--repeat 3] [--quick]

Writes ``benchmarks/results/spreadsheet_read_bench.{json,md}`` with, per file, what the reader
found (sheets, tables, header rows) or the error it raised, the median wall time in seconds of
:func:`orchestrator.spreadsheet.read_workbook` over ``--repeat`` runs, and the peak Python
memory in MiB of one extra run (tracemalloc). The host's load average is recorded, because a
loaded 2-core machine stretches every time. ``--quick``: one run per file, no memory run.
"""

from __future__ import annotations

import contextlib
import os
import platform
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.harness import BenchParser, host_info, median, write_results
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.spreadsheet import SpreadsheetError, read_workbook

NAME = "spreadsheet_read_bench"


def measure(path: Path, runs: int, *, memory: bool = True) -> dict[str, Any]:
    """Read ``path`` ``runs`` times (wall seconds each), then, with ``memory``, once more under
    tracemalloc for the peak in MiB (``None`` without)."""
    times: list[float] = []
    found: dict[str, object] = {}
    for _ in range(runs):
        start = time.perf_counter()
        try:
            wb = read_workbook(path)
            found = {
                "sheets_read": len(wb.sheets),
                "sheets_total": wb.sheets_total,
                "tables": [
                    f"{t.sheet}!{t.ref} ({t.source}, header rows {t.header_rows or 'none'}, "
                    f"{t.n_rows} data rows)"
                    for t in wb.tables()
                ],
                "text_blocks": sum(len(s.text_blocks) for s in wb.sheets),
                "merged_ranges": sum(len(s.merged_ranges) for s in wb.sheets),
                "date_system": wb.date_system,
            }
        except SpreadsheetError as exc:
            found = {"error": f"{type(exc).__name__}: {exc}"}
        times.append(time.perf_counter() - start)
    peak_mib = None
    if memory:
        tracemalloc.start()
        with contextlib.suppress(SpreadsheetError):
            read_workbook(path)
        peak_mib = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return {
        "file": path.name,
        "bytes": path.stat().st_size,
        "median_s": median(times),
        "runs_s": times,
        "peak_mib": peak_mib,
        **found,
    }


def markdown(meta: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The summary table, one row per workbook."""
    lines = [
        "# Spreadsheet reading time (real workbooks)",
        "",
        f"{meta['when']}, {meta['machine']}; median of {meta['runs']} runs of `read_workbook`; "
        f"load average before/after {meta['load_average_before'][0]:.1f}/"
        f"{meta['load_average_after'][0]:.1f} "
        "(other jobs shared the 2 cores, so times are upper bounds).",
        "",
        "| file | KiB | median s | peak MiB | result |",
        "|---|---:|---:|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            what = str(r["error"]).split(". ")[0]
        else:
            what = (
                f"{r['sheets_read']}/{r['sheets_total']} sheets, {len(r['tables'])} tables, "
                f"{r['text_blocks']} text blocks, {r['merged_ranges']} merged"
            )
        peak = "-" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}"
        lines.append(
            f"| {r['file']} | {int(r['bytes']) / 1024:,.0f} | {r['median_s']:.2f} | "
            f"{peak} | {what} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        NAME,
        __doc__,
        repeat=3,
        repeat_help="Timed reads of each workbook (the median is reported).",
        repeat_aliases=("--runs",),
    )
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.repeat
    files = sorted((args.data_dir / "spreadsheets").glob("*.xls*"))
    if not files:
        raise SystemExit(f"no .xls/.xlsx under {args.data_dir / 'spreadsheets'}; pass --data-dir")
    load_before = os.getloadavg()
    rows = [measure(p, runs, memory=not args.quick) for p in files]
    meta = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.python_version()}",
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "runs": runs,
        "host": host_info(),
    }
    text = markdown(meta, rows)
    write_results(args.out, NAME, {"meta": meta, "files": rows}, text, command=args.command)
    print(text)


if __name__ == "__main__":
    main()
