"""Reading time of every real workbook in ../shared/data/spreadsheets (median of N runs).

Run by hand: ``.venv/bin/python benchmarks/spreadsheet_read_bench.py [--runs 3]``. Writes
``benchmarks/results/spreadsheet_read_bench.{json,md}`` with, per file, what the reader found
(sheets, tables, header rows) or the error it raised, the median wall time of
:func:`orchestrator.spreadsheet.read_workbook`, and the peak Python memory of one extra run
(tracemalloc). The host's load average is recorded, because a loaded 2-core machine stretches
every time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.spreadsheet import SpreadsheetError, read_workbook

RESULTS = Path(__file__).parent / "results"


def measure(path: Path, runs: int) -> dict[str, object]:
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
    tracemalloc.start()
    with contextlib.suppress(SpreadsheetError):
        read_workbook(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "file": path.name,
        "bytes": path.stat().st_size,
        "median_s": statistics.median(times),
        "runs_s": times,
        "peak_mib": peak / 2**20,
        **found,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args()
    files = sorted((args.data_dir / "spreadsheets").glob("*.xls*"))
    load_before = os.getloadavg()
    rows = [measure(p, args.runs) for p in files]
    meta = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.python_version()}",
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "runs": args.runs,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "spreadsheet_read_bench.json").write_text(
        json.dumps({"meta": meta, "files": rows}, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    lines = [
        "# Spreadsheet reading time (real workbooks)",
        "",
        f"{meta['when']}, {meta['machine']}; median of {args.runs} runs of `read_workbook`; "
        f"load average before/after {load_before[0]:.1f}/{meta['load_average_after'][0]:.1f} "
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
        lines.append(
            f"| {r['file']} | {int(r['bytes']) / 1024:,.0f} | {r['median_s']:.2f} | "
            f"{r['peak_mib']:.1f} | {what} |"
        )
    (RESULTS / "spreadsheet_read_bench.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
