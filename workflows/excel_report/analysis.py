"""Compute the figures of a report from parsed tables: statistics, totals, group-bys, top-N
and period-over-period changes. Pure Python/numpy; the model never computes a number.

What is computed, per table (largest first, at most :attr:`AnalysisConfig.max_tables`):

* the number of data rows;
* per **measure** (a numeric column that is not an identifier such as ``Row ID``,
  ``Postal Code``, ``型号`` or a phone number): the sum when the measure is **additive**,
  mean, median, min and max (the extremes cite their cell);
* per date column: earliest and latest date;
* per **dimension** (a text column with 2-30 distinct values): per group, the lead measure's
  sum and its share of the measure's total (the very ``total`` figure, cited by id; rows
  with an empty group are the group ``(empty)``), or the group's mean for a non-additive
  measure (no shares); the row count and share of rows per group when there is no measure;
* top-N rows by the lead measure, labelled by the most distinctive text column;
* **period over period**: the lead measure summed (mean for non-additive measures) per year
  (per month when the dates span under two years), and the change between **adjacent**
  periods only (none across a gap); percent change ``(b - a) / |a|`` for sums, the change in
  percentage points for percentages.

**Non-additive measures** (percentages, ratios, rates, averages, prices, scores: by their
``%`` format or their name in English, German, French, Spanish, Italian, Chinese, Japanese)
are never summed: they get a mean, also weighted by a weight column (``Sessions``, ``Qty``,
``数量``...) when the table has one.

**Unknown cells** (Excel errors, formulas without a trustworthy cached value, text in a
numeric column) are never dropped silently: a figure over a range with unknown cells says in
its label how many cells it covers and which are unknown (``Provenance.covered``, ``of``,
``missing``). Everything left out (tables and measures over a limit, columns whose values are
all unknown, changes across gaps) is in :attr:`Analysis.skipped` with the reason.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import cast

import numpy as np
from pydantic import BaseModel, ConfigDict

from orchestrator.spreadsheet import Column, ColumnType, Skipped, Table, Workbook
from orchestrator.spreadsheet.refs import sheet_ref
from workflows.excel_report.breakdowns import as_date, group_by, periods, top_rows
from workflows.excel_report.builder import FigureBuilder, Tags, cell_ref, coverage, weighted_mean
from workflows.excel_report.figures import Figure, Operation
from workflows.excel_report.roles import (
    AnalysisConfig,
    TableProfile,
    is_additive,
    is_code,
    is_identifier,
    is_number,
    numbers,
    profile,
    weight_column,
)

__all__ = [
    "Analysis",
    "AnalysisConfig",
    "TableProfile",
    "analyse",
    "is_additive",
    "is_code",
    "is_identifier",
    "profile",
]


class Analysis(BaseModel):
    """All figures of a workbook.

    Attributes:
        figures: In id order.
        profiles: Column roles per analysed table.
        skipped_tables: Tables left out (over ``max_tables``), by id.
        skipped: Everything the analysis did not use, with the reason (tables and measures
            over a limit, columns whose values are all unknown, changes across gaps).
    """

    model_config = ConfigDict(frozen=True)

    figures: list[Figure]
    profiles: list[TableProfile]
    skipped_tables: list[str] = []
    skipped: list[Skipped] = []

    def by_id(self) -> dict[str, Figure]:
        return {f.id: f for f in self.figures}


def _describe_measure(
    b: FigureBuilder, table: Table, col: Column, weights: Column | None
) -> dict[str, Figure]:
    """Whole-column figures of a measure; returns ``{"total": ...}`` when a total is given."""
    values, pos = numbers(col)
    out: dict[str, Figure] = {}
    if not len(values):
        return out
    name = f"`{col.name}`"
    cover = coverage(table, col)
    common: Tags = {"unit": col.unit, "column": col.name, "coverage": cover}
    if is_additive(col):
        out["total"] = b.add(
            table, f"total {name}", float(values.sum()), "sum", col.range, **common
        )
    if len(values) < 3 and is_additive(col):
        return out  # a mean, median or extreme of one or two values says nothing new
    b.add(table, f"mean {name}", float(values.mean()), "mean", col.range, **common)
    if weights is not None:
        weighted = weighted_mean(col, list(range(len(table.rows))), weights)
        if weighted is not None:
            b.add(
                table,
                f"mean {name} weighted by `{weights.name}`",
                weighted,
                "weighted_mean",
                f"{col.range} × {weights.range}",
                weights=weights.name,
                **common,
            )
    if len(values) < 3:
        return out
    b.add(table, f"median {name}", float(np.median(values)), "median", col.range, **common)
    known = " known" if cover.missing else ""
    extremes: tuple[tuple[str, int, Operation], ...] = (
        ("smallest", int(values.argmin()), "min"),
        ("largest", int(values.argmax()), "max"),
    )
    for word, k, op in extremes:
        where = cell_ref(table, col, int(pos[k]))
        b.add(table, f"{word}{known} {name}", float(values[k]), op, where, **common)
    return out


def _describe_by_currency(b: FigureBuilder, table: Table, col: Column) -> None:
    """A column whose values are in several currencies: a total (and a mean of three or
    more) per currency, never one over all of them."""
    units = col.value_units or []
    rows_of: dict[str, list[int]] = defaultdict(list)
    for i, (v, unit) in enumerate(zip(col.values, units, strict=True)):
        if is_number(v):
            rows_of[unit or "no currency"].append(i)
    b.skip(
        "column",
        col.range,
        f"`{col.name}`: values in {len(rows_of)} currencies ({', '.join(sorted(rows_of))}); "
        "no total or mean over all of them, one per currency",
    )
    for unit, rows in sorted(rows_of.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        known = [float(v) for i in rows if is_number(v := col.values[i])]  # all, by rows_of
        where = f"`{col.name}` in `{unit}`"
        common: Tags = {
            "unit": None if unit == "no currency" else unit,
            "column": col.name,
            "filter": where,
            "coverage": coverage(table, col, rows),
        }
        b.add(table, f"total {where}", sum(known), "group_sum", col.range, **common)
        if len(known) >= 3:
            b.add(table, f"mean {where}", float(np.mean(known)), "group_mean", col.range, **common)


def _describe_durations(b: FigureBuilder, table: Table, col: Column) -> None:
    """A duration column (Excel's ``[h]:mm``): its total and, of three or more, its mean,
    shortest and longest, each exact (``timedelta`` sums) and shown in the column's own
    number format (the figure's unit: :func:`~workflows.excel_report.figures.format_duration`)."""
    spans = [(i, v) for i, v in enumerate(col.values) if isinstance(v, timedelta)]
    if not spans:
        return
    name, values = f"`{col.name}`", [v for _, v in spans]
    common: Tags = {"unit": col.number_format, "column": col.name, "coverage": coverage(table, col)}
    b.add(table, f"total {name}", sum(values, timedelta()), "sum", col.range, **common)
    if len(spans) < 3:
        return
    mean = sum(values, timedelta()) / len(values)
    b.add(table, f"mean {name}", mean, "mean", col.range, **common)
    for word, (i, v), op in (
        ("shortest", min(spans, key=lambda s: s[1]), "min"),
        ("longest", max(spans, key=lambda s: s[1]), "max"),
    ):
        b.add(table, f"{word} {name}", v, cast(Operation, op), cell_ref(table, col, i), **common)


def _describe_dates(b: FigureBuilder, table: Table, col: Column) -> None:
    dates = [d for v in col.values if (d := as_date(v)) is not None]
    if not dates:
        return
    b.add(table, f"earliest `{col.name}`", min(dates), "earliest", col.range, column=col.name)
    b.add(table, f"latest `{col.name}`", max(dates), "latest", col.range, column=col.name)


def analyse(workbook: Workbook, config: AnalysisConfig | None = None) -> Analysis:
    """All figures for ``workbook``.

    Args:
        workbook: The reader's result.
        config: Bounds; defaults when None.

    Returns:
        The :class:`Analysis`; its figures are in id order and each cites cells or inputs.
    """
    config = config or AnalysisConfig()
    b = FigureBuilder()
    tables = sorted(workbook.tables(), key=lambda t: (-t.n_rows * len(t.columns), t.id))
    chosen, skipped = tables[: config.max_tables], [t.id for t in tables[config.max_tables :]]
    for table in tables[config.max_tables :]:
        b.skip(
            "table",
            f"{table.id} {sheet_ref(table.sheet, table.ref)}",
            f"not analysed: only the {config.max_tables} largest tables are "
            "(AnalysisConfig.max_tables)",
        )
    chosen.sort(key=lambda t: int(t.id[1:]))
    profiles = []
    for table in chosen:
        prof = profile(table, config)
        profiles.append(prof)
        _analyse_table(b, table, prof, config)
    return Analysis(figures=b.figures, profiles=profiles, skipped_tables=skipped, skipped=b.skipped)


def _analyse_table(
    b: FigureBuilder, table: Table, prof: TableProfile, config: AnalysisConfig
) -> None:
    """The figures of one table: its row count, unknown cells and what was left out, then
    each measure and date column, and the breakdowns of its lead measure."""
    first, last = table.rows[0], table.rows[-1]
    left = table.columns[0].letter
    right = table.columns[-1].letter
    b.add(
        table,
        f"data rows in table `{table.name}`",
        table.n_rows,
        "count_rows",
        sheet_ref(table.sheet, f"{left}{first}:{right}{last}"),
    )
    if table.issue_count:
        b.add(
            table,
            f"cells in `{table.name}` whose value is unknown (Excel errors, formulas "
            "without a trustworthy cached value)",
            table.issue_count,
            "error_cells",
            sheet_ref(table.sheet, table.ref),
        )
    for col in table.columns:
        if col.unknown and not col.non_empty:
            b.skip(
                "column",
                col.range,
                f"`{col.name}`: all {len(col.unknown)} values are "
                "unknown (errors or formulas without a trustworthy cached value)",
            )
    for name in prof.skipped_measures:
        b.skip(
            "column",
            table.column(name).range,
            f"`{name}`: not described, only {config.max_measures} measures per table "
            "are (AnalysisConfig.max_measures)",
        )
    _describe_columns(b, table, prof, config)


def _describe_columns(
    b: FigureBuilder, table: Table, prof: TableProfile, config: AnalysisConfig
) -> None:
    """Each measure and date column of ``table``, then the group-bys, top rows and
    periods of its lead measure (the first in one currency)."""
    weights = {name: weight_column(table, table.column(name), prof) for name in prof.measures}
    totals: dict[str, Figure] = {}
    for name in prof.measures:
        col = table.column(name)
        if col.value_units:
            _describe_by_currency(b, table, col)
            continue
        w = weights[name] if not is_additive(col) else None
        out = _describe_measure(b, table, col, w)
        if "total" in out:
            totals[name] = out["total"]
    for name in prof.dates:
        _describe_dates(b, table, table.column(name))
    for col in table.columns:
        if col.type is ColumnType.DURATION:
            _describe_durations(b, table, col)
    single = [name for name in prof.measures if not table.column(name).value_units]
    lead = table.column(single[0]) if single else None
    lead_w = weights[lead.name] if lead is not None and not is_additive(lead) else None
    for name in prof.dimensions:
        group_by(
            b,
            table,
            table.column(name),
            lead,
            totals.get(lead.name) if lead is not None else None,
            lead_w,
            config,
        )
    if lead is not None:
        label = table.column(prof.label_column) if prof.label_column else None
        top_rows(b, table, lead, label, config)
    if prof.dates:
        periods(b, table, table.column(prof.dates[0]), lead, lead_w, config)
