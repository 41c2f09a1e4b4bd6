"""Breakdowns of a table's lead measure: group-bys, top rows, and period over period.
Split out of :mod:`workflows.excel_report.analysis` (issue 48).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime

import numpy as np

from orchestrator.spreadsheet import Column, Table
from workflows.excel_report.builder import FigureBuilder, Tags, cell_ref, coverage, weighted_mean
from workflows.excel_report.figures import Figure, Operation
from workflows.excel_report.roles import AnalysisConfig, is_additive, is_number, numbers

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


def as_date(value: object) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return None


EMPTY_GROUP = "(empty)"


def _groups(col: Column) -> dict[str, list[int]]:
    """Row positions per group value; rows with no value are the group ``(empty)``."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(col.values):
        text = str(key).strip() if key is not None else ""
        groups[text or EMPTY_GROUP].append(i)
    return groups


def group_by(
    b: FigureBuilder,
    table: Table,
    dim: Column,
    measure: Column | None,
    total: Figure | None,
    weights: Column | None,
    config: AnalysisConfig,
) -> None:
    """Figures per group of ``dim`` (the largest ``max_groups``): the row count and share
    without a measure; else the measure's sum and share of ``total`` (additive), or its
    (weighted) mean."""
    groups = _groups(dim)
    if len([k for k in groups if k != EMPTY_GROUP]) < 2:
        return
    if measure is None:
        _group_rows(b, table, dim, groups, config)
        return
    cells = f"{dim.range} × {measure.range}"
    additive = is_additive(measure)
    results: list[tuple[str, float, list[int]]] = []
    for key, rows in groups.items():
        known = [float(v) for i in rows if is_number(v := measure.values[i])]
        if not known:
            continue
        value = sum(known) if additive else weighted_mean(measure, rows, weights)
        if value is not None:
            results.append((key, value, rows))
    results.sort(key=lambda kv: (-kv[1], kv[0]))
    for key, value, rows in results[: config.max_groups]:
        where = _where(dim, key)
        cover = coverage(table, measure, rows)
        tags: Tags = {
            "unit": measure.unit,
            "column": measure.name,
            "filter": where,
            "coverage": cover,
        }
        if not additive:
            how = f"mean weighted by `{weights.name}`" if weights is not None else "mean"
            b.add(
                table,
                f"{how} `{measure.name}` where {where}",
                value,
                "group_mean",
                cells,
                weights=weights.name if weights is not None else None,
                **tags,
            )
            continue
        b.add(table, f"total `{measure.name}` where {where}", value, "group_sum", cells, **tags)
        if total is not None and float(total.value):
            b.add(
                table,
                f"share of {where} in total `{measure.name}` ({total.id})",
                value / float(total.value),
                "group_share",
                cells,
                unit="%",
                column=measure.name,
                filter=where,
                inputs=[total.id],
                coverage=cover,
            )


def _where(dim: Column, key: str) -> str:
    return f"`{dim.name}` = `{key}`" if key != EMPTY_GROUP else f"`{dim.name}` empty"


def _group_rows(
    b: FigureBuilder,
    table: Table,
    dim: Column,
    groups: dict[str, list[int]],
    config: AnalysisConfig,
) -> None:
    """Rows per group of ``dim`` and their share of all rows (a table without a measure)."""
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for key, rows in ranked[: config.max_groups]:
        where = _where(dim, key)
        b.add(
            table,
            f"rows with {where}",
            len(rows),
            "group_count",
            dim.range,
            column=dim.name,
            filter=where,
        )
        b.add(
            table,
            f"share of rows with {where} in all {len(table.rows)} rows",
            len(rows) / len(table.rows),
            "group_share",
            dim.range,
            unit="%",
            column=dim.name,
            filter=where,
        )


def top_rows(
    b: FigureBuilder, table: Table, measure: Column, label: Column | None, config: AnalysisConfig
) -> None:
    values, pos = numbers(measure)
    if len(values) <= config.top_n or not config.top_n:
        return
    cover = coverage(table, measure)
    known = " known" if cover.missing else ""
    order = np.argsort(-values, kind="stable")[: config.top_n]
    for rank, k in enumerate(order, start=1):
        row = int(pos[k])
        name = label.values[row] if label is not None else None
        who = ""
        if label is not None and name not in (None, ""):
            who = f" (`{label.name}` = `{str(name).strip()[:80]}`)"
        b.add(
            table,
            f"{_ORDINALS[rank - 1]} largest{known} `{measure.name}`{who}",
            float(values[k]),
            "top_row",
            cell_ref(table, measure, row),
            unit=measure.unit,
            column=measure.name,
            coverage=cover if cover.missing else None,
        )


def _next_period(key: str, yearly: bool) -> str:
    if yearly:
        return str(int(key) + 1)
    year, month = int(key[:4]), int(key[5:])
    return f"{year + month // 12}-{month % 12 + 1:02d}"


def periods(
    b: FigureBuilder,
    table: Table,
    date_col: Column,
    measure: Column | None,
    weights: Column | None,
    config: AnalysisConfig,
) -> None:
    """The lead measure summed (its mean when not additive; the row count without a
    measure) per year, or per month when the dates span under two years, over the last
    ``max_periods`` periods; and the change between adjacent periods (none across a gap)."""
    stamps = [as_date(v) for v in date_col.values]
    known = [d for d in stamps if d is not None]
    if len(known) < 2:
        return
    yearly = (max(known) - min(known)).days >= 2 * 365
    rows_of: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(stamps):
        if d is not None:
            rows_of[f"{d.year}" if yearly else f"{d.year}-{d.month:02d}"].append(i)
    additive = measure is None or is_additive(measure)
    values = _period_values(rows_of, measure, weights, additive)
    if len(values) < 2:
        return
    cells = date_col.range if measure is None else f"{date_col.range} × {measure.range}"
    what = f"`{measure.name}`" if measure else "rows"
    previous: Figure | None = None
    prev_key = ""
    unit = None if measure is None else measure.unit
    for key in sorted(values)[-config.max_periods :]:
        where = f"`{date_col.name}` in `{key}`"
        cover = coverage(table, measure, rows_of[key]) if measure is not None else None
        if measure is None:
            op: Operation = "period_count"
            text = f"rows in `{key}`"
        elif additive:
            op, text = "period_sum", f"total {what} in `{key}`"
        else:
            op = "period_mean"
            how = f"mean weighted by `{weights.name}`" if weights is not None else "mean"
            text = f"{how} {what} in `{key}`"
        current = b.add(
            table,
            text,
            values[key],
            op,
            cells,
            unit=unit,
            column=measure.name if measure else date_col.name,
            filter=where,
            coverage=cover,
        )
        if previous is not None:
            span = f"{what} from `{prev_key}` to `{key}`"
            if _next_period(prev_key, yearly) != key:
                b.skip(
                    "figure",
                    f"change in {span}",
                    "the periods are not adjacent (no rows in between); no change is given "
                    "across a gap",
                )
            else:
                _change(b, table, previous, current, span, cells, unit, additive)
        previous, prev_key = current, key


def _period_values(
    rows_of: dict[str, list[int]],
    measure: Column | None,
    weights: Column | None,
    additive: bool,
) -> dict[str, float]:
    """Each period's value: its row count without a measure, else the measure's sum
    (additive) or (weighted) mean; a period with no known value has none."""
    values: dict[str, float] = {}
    for key, rows in rows_of.items():
        if measure is None:
            values[key] = len(rows)
            continue
        nums = [float(v) for i in rows if is_number(v := measure.values[i])]
        if not nums:
            continue
        value = sum(nums) if additive else weighted_mean(measure, rows, weights)
        if value is not None:
            values[key] = value
    return values


def _change(
    b: FigureBuilder,
    table: Table,
    previous: Figure,
    current: Figure,
    span: str,
    cells: str,
    unit: str | None,
    additive: bool,
) -> None:
    """The change from ``previous`` to ``current`` (in percentage points for a percentage),
    and the percent change of an additive measure from a non-zero start."""
    a, c = float(previous.value), float(current.value)
    change_unit = "pp" if unit == "%" else unit
    in_what = " in percentage points" if unit == "%" else ""
    b.add(
        table,
        f"change in {span}{in_what}",
        c - a,
        "change",
        cells,
        unit=change_unit,
        column=current.column,
        inputs=[previous.id, current.id],
    )
    if a != 0 and additive:
        b.add(
            table,
            f"percent change in {span}",
            (c - a) / abs(a),
            "pct_change",
            cells,
            unit="%",
            column=current.column,
            inputs=[previous.id, current.id],
        )
