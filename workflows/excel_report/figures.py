"""Figures: every number a report may show, with where it came from.

A :class:`Figure` is computed in Python from parsed cells (never by the model) and carries a
:class:`Provenance`: the cell range it was computed from, or the computation over other
figures. Reports cite figures by id (``F12``); the model only ever sees and cites ids.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Operation = Literal[
    "count_rows",
    "count",
    "sum",
    "mean",
    "median",
    "min",
    "max",
    "earliest",
    "latest",
    "group_sum",
    "group_count",
    "group_share",
    "top_row",
    "period_sum",
    "period_count",
    "change",
    "pct_change",
    "error_cells",
    "weighted_mean",
    "group_mean",
    "period_mean",
]


class Provenance(BaseModel):
    """Where a figure comes from.

    Attributes:
        cells: The cell range read (``'Orders'!R2:R9995``), or the single cell of a min, max
            or top-N value.
        operation: What was computed (see :data:`Operation`).
        inputs: Figure ids a derived figure is computed from (changes between periods).
        filter: The rows kept, as ``column = value`` (group-bys, periods); None for all rows.
        covered: Cells with a known value the figure was computed over.
        of: Cells in its range (rows kept) that hold or should hold a value; ``covered < of``
            means some are unknown and the figure says so in its label.
        missing: The unknown cells (A1, no sheet), at most 20 listed.
        weights: The column used as weights by a weighted mean.
    """

    model_config = ConfigDict(frozen=True)

    cells: str
    operation: Operation
    inputs: list[str] = []
    filter: str | None = None
    covered: int | None = None
    of: int | None = None
    missing: list[str] = []
    weights: str | None = None


class Figure(BaseModel):
    """One computed number (or date) and its provenance.

    Attributes:
        id: ``F1``, ``F2``... unique within an analysis.
        label: What it is, in words; names from the workbook are kept verbatim.
        value: The number, or an ISO date for earliest/latest.
        unit: ``%``, a currency symbol, a unit from the header, or None.
        display: ``value`` formatted for people (``$2,297,200.86``, ``12.5%``, ``2017-12-30``).
        table_id: The table it was computed from.
        column: The column it describes, when one.
        provenance: Cells or computation.
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(pattern=r"^F[0-9]{1,4}$")
    label: str = Field(max_length=300)
    value: float | int | str
    unit: str | None = None
    display: str
    table_id: str
    column: str | None = None
    provenance: Provenance


def _trim(text: str) -> str:
    """``"12.500"`` → ``"12.5"``, ``"4.000"`` → ``"4.0"`` (at least one decimal kept)."""
    if "." not in text:
        return text
    text = text.rstrip("0")
    return text + "0" if text.endswith(".") else text


#: Excel's elapsed-time field (``[h]``, ``[mm]``, ``[s]``): hours, minutes or seconds past
#: 24 hours, 60 minutes or 60 seconds, as a duration column shows them.
_ELAPSED = re.compile(r"\[(h+|m+|s+)\]", re.IGNORECASE)


def format_duration(value: timedelta, number_format: str | None) -> str:
    """``value`` as Excel shows it in ``number_format``: an elapsed-time format counts past
    a day (``[h]:mm`` → ``67:20``, ``[mm]:ss`` → ``4040:05``, ``[h]:mm:ss``), and the units it
    does not show are cut off, as Excel cuts them; another format reads ``2 days, 19:20:00``.

    Example:
        >>> format_duration(timedelta(hours=67, minutes=20, seconds=40), "[h]:mm")
        '67:20'
        >>> format_duration(timedelta(minutes=-90), "[h]:mm:ss")
        '-1:30:00'
    """
    found = _ELAPSED.search(number_format or "")
    if found is None:
        return str(value)
    field, rest = found[1].lower(), (number_format or "")[found.end() :].lower()
    seconds = round(abs(value).total_seconds(), 3)  # a day's float in Excel: noise below 1 ms
    shown_s = field[0] == "s" or "s" in rest.split(".")[0]
    whole = round(seconds) if shown_s else int(seconds) // 60 * 60
    if field[0] == "h":
        hours, left = divmod(whole, 3600)
        text = f"{hours:0{len(field)}d}:{left // 60:02d}" + (f":{left % 60:02d}" if shown_s else "")
    elif field[0] == "m":
        text = f"{whole // 60:0{len(field)}d}" + (f":{whole % 60:02d}" if shown_s else "")
    else:
        text = f"{whole:0{len(field)}d}"
    return ("-" if value < timedelta(0) else "") + text


def format_value(
    value: float | int | str | date | datetime | time | timedelta | bool, unit: str | None = None
) -> str:
    """Format a figure's value: thousands separators, 2 decimals, ``%`` and currency units.

    Percent values are fractions (0.125 → ``12.5%``, 0.04375 → ``4.375%``: up to three
    decimals), as Excel stores them; ``pp`` values are differences of such fractions, shown in
    percentage points (0.0028 → ``+0.28 pp``). Non-finite numbers become ``n/a``.

    Example:
        >>> format_value(2297200.8603, "$"), format_value(0.125, "%"), format_value(9994)
        ('$2,297,200.86', '12.5%', '9,994')
    """
    if isinstance(value, datetime):
        return (
            value.date().isoformat()
            if value.time() == datetime.min.time()
            else (value.isoformat(sep=" ", timespec="minutes"))
        )
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, time):
        return value.isoformat(timespec="minutes" if not value.second else "seconds")
    if isinstance(value, timedelta):  # a duration figure's unit is its column's number format
        return format_duration(value, unit)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "n/a"
    if unit == "%":
        return f"{_trim(f'{value * 100:,.3f}')}%"
    if unit == "pp":  # percentage points: a difference of two percentages (fractions)
        text = _trim(f"{value * 100:+,.3f}")
        return f"{text} pp"
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15):
        text = f"{int(value):,}"
    elif abs(value) >= 1:
        text = f"{value:,.2f}"
    else:
        text = f"{value:.4g}"
    if unit and len(unit) <= 3 and not unit.isalpha():
        return f"-{unit}{text[1:]}" if text.startswith("-") else f"{unit}{text}"
    return f"{text} {unit}" if unit else text
