"""Compute the figures of a report from parsed tables: statistics, totals, group-bys, top-N
and period-over-period changes. Pure Python/numpy; the model never computes a number.

What is computed, per table (largest first, at most :attr:`AnalysisConfig.max_tables`):

* the number of data rows;
* per **measure** (a numeric column that is not an identifier such as ``Row ID`` or
  ``Postal Code``): sum (not for percentages), mean, median, min and max (the extremes cite
  their cell);
* per date column: earliest and latest date;
* per **dimension** (a text column with 2-30 distinct values): the primary measure's sum per
  group (or the row count per group when the table has no measure), top-N groups by total and
  their share of the total;
* top-N rows by the primary measure, labelled by the most distinctive text column;
* **period over period**: the primary measure summed per year (per month when the dates span
  under two years), and the change and percent change between consecutive periods
  (``pct_change = (b - a) / |a|``, undefined when ``a`` is 0).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import date, datetime

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.spreadsheet import Column, ColumnType, Table, Workbook
from orchestrator.spreadsheet.detect import sheet_ref
from workflows.excel_report.figures import Figure, Operation, Provenance, format_value

_ID_NAME = re.compile(
    r"(^|[\s_\-])(id|no|nr|num|number|code|zip|postal|phone|tel|编号|序号|学号|代码|邮编|号)"
    r"($|[\s_\-.#])|编号|序号|学号|ID号|邮编",
    re.IGNORECASE,
)


#: Ranks in words, so that labels hold no digits that are not figures.
_ORDINALS = (
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
)


class AnalysisConfig(BaseModel):
    """Bounds on how many figures an analysis produces (the prompt must stay small)."""

    model_config = ConfigDict(frozen=True)

    max_tables: int = Field(6, ge=1)
    max_measures: int = Field(4, ge=1)
    max_dimensions: int = Field(2, ge=0)
    max_groups: int = Field(5, ge=1)
    max_distinct: int = Field(30, ge=2)
    top_n: int = Field(3, ge=0, le=10)
    max_periods: int = Field(6, ge=2)


class TableProfile(BaseModel):
    """How the analysis read one table: which columns it used as what."""

    model_config = ConfigDict(frozen=True)

    table_id: str
    measures: list[str]
    dimensions: list[str]
    dates: list[str]
    identifiers: list[str]
    label_column: str | None = None


class Analysis(BaseModel):
    """All figures of a workbook.

    Attributes:
        figures: In id order.
        profiles: Column roles per analysed table.
        skipped_tables: Tables left out (over ``max_tables``), by id.
    """

    model_config = ConfigDict(frozen=True)

    figures: list[Figure]
    profiles: list[TableProfile]
    skipped_tables: list[str] = []

    def by_id(self) -> dict[str, Figure]:
        return {f.id: f for f in self.figures}


class _Builder:
    def __init__(self) -> None:
        self.figures: list[Figure] = []

    def add(
        self,
        table: Table,
        label: str,
        value: float | int | date | datetime,
        operation: Operation,
        cells: str,
        *,
        unit: str | None = None,
        column: str | None = None,
        inputs: list[str] | None = None,
        filter: str | None = None,
    ) -> Figure:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 and unit != "%":
            value = int(value) if operation in ("count", "count_rows", "group_count") else value
        stored: float | int | str = (
            format_value(value) if isinstance(value, date | datetime) else value
        )
        figure = Figure(
            id=f"F{len(self.figures) + 1}",
            label=label,
            value=stored,
            unit=unit,
            display=format_value(value, unit),
            table_id=table.id,
            column=column,
            provenance=Provenance(
                cells=cells, operation=operation, inputs=inputs or [], filter=filter
            ),
        )
        self.figures.append(figure)
        return figure


def _numbers(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """(values, row positions) of the column's numeric values."""
    pos = [
        i
        for i, v in enumerate(col.values)
        if isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v)
    ]
    return np.array([col.values[i] for i in pos], dtype=float), np.array(pos, dtype=int)


def is_identifier(col: Column) -> bool:
    """An id-like numeric column (``Row ID``, ``Postal Code``, 1..n counters): not a measure."""
    if _ID_NAME.search(col.name):
        return True
    values, _ = _numbers(col)
    return bool(
        col.type is ColumnType.INTEGER
        and len(values) >= 10
        and len(np.unique(values)) == len(values)
    )


def _distinct(col: Column) -> Counter[str]:
    return Counter(str(v).strip() for v in col.values if v is not None and str(v).strip())


def profile(table: Table, config: AnalysisConfig) -> TableProfile:
    """Decide the role of each column of ``table``."""
    measures, identifiers, dimensions, dates = [], [], [], []
    label: tuple[float, str] | None = None
    for col in table.columns:
        if col.is_numeric and col.non_empty:
            (identifiers if is_identifier(col) else measures).append(col.name)
        elif col.is_temporal and col.non_empty:
            dates.append(col.name)
        elif col.type is ColumnType.TEXT and col.non_empty:
            distinct = len(_distinct(col))
            if 2 <= distinct <= config.max_distinct and distinct * 2 <= col.non_empty:
                dimensions.append(col.name)
            elif distinct > config.max_distinct or distinct * 2 > col.non_empty:
                ratio = distinct / col.non_empty
                if label is None or ratio > label[0]:
                    label = (ratio, col.name)
    # the measure with the largest absolute total leads
    measures.sort(key=lambda name: -float(np.abs(_numbers(table.column(name))[0]).sum()))
    dimensions.sort(key=lambda name: len(_distinct(table.column(name))))
    return TableProfile(
        table_id=table.id,
        measures=measures[: config.max_measures],
        dimensions=dimensions[: config.max_dimensions],
        dates=dates[:2],
        identifiers=identifiers,
        label_column=label[1] if label else None,
    )


def _cell(table: Table, col: Column, position: int) -> str:
    return sheet_ref(table.sheet, f"{col.letter}{table.rows[position]}")


def _describe_measure(b: _Builder, table: Table, col: Column) -> None:
    values, pos = _numbers(col)
    if not len(values):
        return
    name = f"`{col.name}`"
    if len(values) < 3:  # a mean, median or extreme of one or two values says nothing new
        if col.unit != "%":
            b.add(
                table,
                f"total {name}",
                float(values.sum()),
                "sum",
                col.range,
                unit=col.unit,
                column=col.name,
            )
        return
    if col.unit != "%":
        b.add(
            table,
            f"total {name}",
            float(values.sum()),
            "sum",
            col.range,
            unit=col.unit,
            column=col.name,
        )
    b.add(
        table,
        f"mean {name}",
        float(values.mean()),
        "mean",
        col.range,
        unit=col.unit,
        column=col.name,
    )
    b.add(
        table,
        f"median {name}",
        float(np.median(values)),
        "median",
        col.range,
        unit=col.unit,
        column=col.name,
    )
    lo, hi = int(values.argmin()), int(values.argmax())
    b.add(
        table,
        f"smallest {name}",
        float(values[lo]),
        "min",
        _cell(table, col, int(pos[lo])),
        unit=col.unit,
        column=col.name,
    )
    b.add(
        table,
        f"largest {name}",
        float(values[hi]),
        "max",
        _cell(table, col, int(pos[hi])),
        unit=col.unit,
        column=col.name,
    )


def _as_date(value: object) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return None


def _describe_dates(b: _Builder, table: Table, col: Column) -> None:
    dates = [d for v in col.values if (d := _as_date(v)) is not None]
    if not dates:
        return
    b.add(table, f"earliest `{col.name}`", min(dates), "earliest", col.range, column=col.name)
    b.add(table, f"latest `{col.name}`", max(dates), "latest", col.range, column=col.name)


def _group_by(
    b: _Builder, table: Table, dim: Column, measure: Column | None, config: AnalysisConfig
) -> None:
    totals: dict[str, float] = defaultdict(float)
    for i, key in enumerate(dim.values):
        if key is None or not str(key).strip():
            continue
        if measure is None:
            totals[str(key).strip()] += 1
            continue
        v = measure.values[i]
        if isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v):
            totals[str(key).strip()] += float(v)
    if len(totals) < 2:
        return
    grand = sum(totals.values())
    cells = dim.range if measure is None else f"{dim.range} × {measure.range}"
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])[: config.max_groups]
    for key, total in ranked:
        where = f"`{dim.name}` = `{key}`"
        if measure is None:
            b.add(
                table,
                f"rows with {where}",
                int(total),
                "group_count",
                cells,
                column=dim.name,
                filter=where,
            )
        else:
            b.add(
                table,
                f"total `{measure.name}` where {where}",
                total,
                "group_sum",
                cells,
                unit=measure.unit,
                column=measure.name,
                filter=where,
            )
        if grand:
            b.add(
                table,
                f"share of {where} in the total",
                total / grand,
                "group_share",
                cells,
                unit="%",
                column=measure.name if measure else dim.name,
                filter=where,
            )


def _top_rows(
    b: _Builder, table: Table, measure: Column, label: Column | None, config: AnalysisConfig
) -> None:
    values, pos = _numbers(measure)
    if len(values) <= config.top_n or not config.top_n:
        return
    order = np.argsort(-values, kind="stable")[: config.top_n]
    for rank, k in enumerate(order, start=1):
        row = int(pos[k])
        name = label.values[row] if label is not None else None
        who = f" (`{label.name}` = `{str(name).strip()[:80]}`)" if name not in (None, "") else ""
        b.add(
            table,
            f"{_ORDINALS[rank - 1]} largest `{measure.name}`{who}",
            float(values[k]),
            "top_row",
            _cell(table, measure, row),
            unit=measure.unit,
            column=measure.name,
        )


def _periods(
    b: _Builder, table: Table, date_col: Column, measure: Column | None, config: AnalysisConfig
) -> None:
    stamps = [_as_date(v) for v in date_col.values]
    known = [d for d in stamps if d is not None]
    if len(known) < 2:
        return
    yearly = (max(known) - min(known)).days >= 2 * 365
    totals: dict[str, float] = defaultdict(float)
    for i, d in enumerate(stamps):
        if d is None:
            continue
        key = f"{d.year}" if yearly else f"{d.year}-{d.month:02d}"
        if measure is None:
            totals[key] += 1
            continue
        v = measure.values[i]
        if isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v):
            totals[key] += float(v)
    if len(totals) < 2:
        return
    keys = sorted(totals)[-config.max_periods :]
    cells = date_col.range if measure is None else f"{date_col.range} × {measure.range}"
    what = f"`{measure.name}`" if measure else "rows"
    previous: Figure | None = None
    prev_key = ""
    for key in keys:
        where = f"`{date_col.name}` in `{key}`"
        op: Operation = "period_count" if measure is None else "period_sum"
        unit = None if measure is None else measure.unit
        current = b.add(
            table,
            f"total {what} in `{key}`",
            totals[key],
            op,
            cells,
            unit=unit,
            column=measure.name if measure else date_col.name,
            filter=where,
        )
        if previous is not None:
            a, c = float(previous.value), float(current.value)
            b.add(
                table,
                f"change in {what} from `{prev_key}` to `{key}`",
                c - a,
                "change",
                cells,
                unit=unit,
                column=current.column,
                inputs=[previous.id, current.id],
            )
            if a != 0:
                b.add(
                    table,
                    f"percent change in {what} from `{prev_key}` to `{key}`",
                    (c - a) / abs(a),
                    "pct_change",
                    cells,
                    unit="%",
                    column=current.column,
                    inputs=[previous.id, current.id],
                )
        previous, prev_key = current, key


def analyse(workbook: Workbook, config: AnalysisConfig | None = None) -> Analysis:
    """All figures for ``workbook``.

    Args:
        workbook: The reader's result.
        config: Bounds; defaults when None.

    Returns:
        The :class:`Analysis`; its figures are in id order and each cites cells or inputs.
    """
    config = config or AnalysisConfig()
    b = _Builder()
    tables = sorted(workbook.tables(), key=lambda t: (-t.n_rows * len(t.columns), t.id))
    chosen, skipped = tables[: config.max_tables], [t.id for t in tables[config.max_tables :]]
    chosen.sort(key=lambda t: int(t.id[1:]))
    profiles = []
    for table in chosen:
        prof = profile(table, config)
        profiles.append(prof)
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
                f"cells in `{table.name}` with Excel errors or formulas without a cached value",
                table.issue_count,
                "error_cells",
                sheet_ref(table.sheet, table.ref),
            )
        for name in prof.measures:
            _describe_measure(b, table, table.column(name))
        for name in prof.dates:
            _describe_dates(b, table, table.column(name))
        lead = table.column(prof.measures[0]) if prof.measures else None
        for name in prof.dimensions:
            _group_by(b, table, table.column(name), lead, config)
        if lead is not None:
            label = table.column(prof.label_column) if prof.label_column else None
            _top_rows(b, table, lead, label, config)
        if prof.dates:
            _periods(b, table, table.column(prof.dates[0]), lead, config)
    return Analysis(figures=b.figures, profiles=profiles, skipped_tables=skipped)
