"""Building the analysis's figures: each figure numbered, labelled with the cells it covers
and which are unknown, with its provenance. Split out of
:mod:`workflows.excel_report.analysis` (issue 48).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TypedDict

import numpy as np
from pydantic import BaseModel

from orchestrator.spreadsheet import Column, Skipped, Table
from orchestrator.spreadsheet.refs import sheet_ref
from workflows.excel_report.figures import Figure, Operation, Provenance, format_value
from workflows.excel_report.roles import is_number


class FigureBuilder:
    def __init__(self) -> None:
        self.figures: list[Figure] = []
        self.skipped: list[Skipped] = []

    def skip(self, what: str, ref: str, reason: str) -> None:
        self.skipped.append(Skipped(what=what, ref=ref, reason=reason))

    def add(
        self,
        table: Table,
        label: str,
        value: float | int | date | datetime | timedelta,
        operation: Operation,
        cells: str,
        *,
        unit: str | None = None,
        column: str | None = None,
        inputs: list[str] | None = None,
        filter: str | None = None,
        coverage: Coverage | None = None,
        weights: str | None = None,
    ) -> Figure:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 and unit != "%":
            value = int(value) if operation in ("count", "count_rows", "group_count") else value
        stored: float | int | str = (
            format_value(value, unit) if isinstance(value, date | datetime | timedelta) else value
        )
        covered = of = None
        missing: list[str] = []
        if coverage is not None:
            covered, of, missing = coverage.covered, coverage.of, coverage.missing[:20]
            if coverage.missing:
                more = len(coverage.missing) - 20
                listed = ", ".join(missing) + (f" and {more} more" if more > 0 else "")
                label += f" (over {covered} of {of} cells; unknown: {listed})"
        figure = Figure(
            id=f"F{len(self.figures) + 1}",
            label=label[:300],
            value=stored,
            unit=unit,
            display=format_value(value, unit),
            table_id=table.id,
            column=column,
            provenance=Provenance(
                cells=cells,
                operation=operation,
                inputs=inputs or [],
                filter=filter,
                covered=covered,
                of=of,
                missing=missing,
                weights=weights,
            ),
        )
        self.figures.append(figure)
        return figure


class Coverage(BaseModel):
    """Known cells of a range: ``covered`` of ``of``; ``missing`` are the unknown ones."""

    covered: int
    of: int
    missing: list[str]


class Tags(TypedDict, total=False):
    """Keyword arguments shared by several ``FigureBuilder.add`` calls of one column."""

    unit: str | None
    column: str | None
    filter: str | None
    coverage: Coverage | None


def _unknown_positions(table: Table, col: Column) -> set[int]:
    """Row positions of the column's unknown cells."""
    unknown = set(col.unknown)
    return {i for i, r in enumerate(table.rows) if f"{col.letter}{r}" in unknown}


def coverage(table: Table, col: Column, positions: list[int] | None = None) -> Coverage:
    """Coverage of ``col`` over the rows at ``positions`` (all rows when None)."""
    rows = range(len(table.rows)) if positions is None else positions
    unknown = _unknown_positions(table, col)
    known = [i for i in rows if is_number(col.values[i])]
    missing = [f"{col.letter}{table.rows[i]}" for i in rows if i in unknown]
    return Coverage(covered=len(known), of=len(known) + len(missing), missing=missing)


def weighted_mean(col: Column, positions: list[int], weights: Column | None) -> float | None:
    values = [float(v) for i in positions if is_number(v := col.values[i])]
    if not values:
        return None
    if weights is None:
        return float(np.mean(values))
    pairs = [
        (float(v), float(w))
        for i in positions
        # weight_column checked that weights holds a number wherever col does
        if is_number(v := col.values[i]) and is_number(w := weights.values[i])
    ]
    total = sum(w for _, w in pairs)
    if total <= 0:
        return None
    return sum(v * w for v, w in pairs) / total


def cell_ref(table: Table, col: Column, position: int) -> str:
    return sheet_ref(table.sheet, f"{col.letter}{table.rows[position]}")
