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

import re
from collections import Counter, defaultdict
from datetime import date, datetime
from typing import TypedDict, TypeGuard

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.spreadsheet import Column, ColumnType, Skipped, Table, Workbook
from orchestrator.spreadsheet.detect import percent_format, sheet_ref
from workflows.excel_report.figures import Figure, Operation, Provenance, format_value

_ID_NAME = re.compile(
    r"(^|[\s_\-/(])(id|no|nr|num|number|code|codes|zip|postal|postcode|phone|tel|telephone|"
    r"mobile|fax|sku|ean|upc|gtin|isbn|iban|account|model|serial|part|ref|reference|key|"
    r"plz|nummer|numéro|numero|código|codigo|codice|modelo|modèle|artikelnummer|año|year|"
    r"jahr|année)($|[\s_\-.#/):])"
    r"|编号|编码|序号|学号|工号|代码|代號|代号|邮编|郵遞區號|型号|型號|号码|號碼|电话|電話|手机|"
    r"账号|帳號|卡号|单号|订单号|身份证|品番|型番|番号|コード|郵便番号|年份|年度",
    re.IGNORECASE,
)
#: Names of code columns: the name, kind, unit, brand or status of something (a number there
#: is a code: 品牌名称 ``1003``, 货币单位 ``1`` for CNY), never a quantity.
_CODE_NAME = re.compile(
    r"(^|[\s_\-/(])(brand|currency|curr|ccy|uom|status|state|type|kind|category|class|"
    r"gender|sex|flag|channel\s*code|row\s*labels?|column\s*labels?|unit\s*of\s*measure|unit(?![\s_]*(price|cost|value|rate)))($|[\s_\-.#/):])"
    r"|名称|名稱|品牌|币种|幣種|货币|貨幣|单位$|單位$|计量单位|類型|类型|类别|類別|种类|種類|状态|狀態|"
    r"性别|性別|标志|標誌|渠道码|区域码|行标签|列标签",
    re.IGNORECASE,
)
#: Names of measures: a code test by value never overrides them.
_MEASURE_NAME = re.compile(
    r"amount|sales|revenue|cost|spend|qty|quantity|units|count|total|sum\b|price|profit|"
    r"income|balance|fee|value|volume|weight|score|"
    r"金额|金額|销量|銷量|销售|銷售|数量|數量|收入|成本|利润|利潤|费用|費用|余额|餘額|合计|总|總|价|價",
    re.IGNORECASE,
)
#: Names of non-additive measures (a sum of them means nothing).
_NON_ADDITIVE = re.compile(
    r"rate|ratio|percent|pct|share|margin|average|avg|mean|median|price|score|rating|grade|"
    r"index|yield|roi|ctr|cvr|conversion|churn|per\s|per_|temperature|temp\b|"
    r"quote|anteil|preis|durchschnitt|bewertung|taux|prix|moyenne|pourcentage|tasa|"
    r"porcentaje|precio|promedio|puntuación|tasso|prezzo|"
    r"率|比例|比率|占比|百分比|均价|单价|單價|价格|價格|平均|均值|评分|評分|得分|分数|分數|指数|"
    r"指數|温度|価格|単価|割合|点数",
    re.IGNORECASE,
)
#: Non-additive names that no additive word overrides: an average, a rate or a unit price stays
#: one however it is named (``Average sales``, ``Total conversion rate``, ``Unit cost``).
_ALWAYS_NON_ADDITIVE = re.compile(
    r"average|avg|mean|median|\brate|ratio|percent|pct|per\s|per_|unit[\s_]*(price|cost)|"
    r"durchschnitt|moyenne|promedio|media\b|taux|tasa|tasso|"
    r"率|比例|比率|占比|百分比|单价|單價|均价|平均|均值|単価|割合",
    re.IGNORECASE,
)
#: Prices and scores: a per-item figure unless a word says it is summed (``Total price``);
#: a measure word does not make it one (``Sales price`` is a unit price).
_PER_ITEM = re.compile(
    r"price|score|rating|grade|quote|preis|prix|precio|prezzo|bewertung|puntuación|"
    r"价格|價格|価格|评分|評分|得分|分数|分數|点数",
    re.IGNORECASE,
)
#: A word that means "summed" (``Total price``, ``Price amount``).
_TOTAL_WORD = re.compile(
    r"total|sum\b|amount|金额|金額|总|總|合计|summe|betrag|montant|importe|importo",
    re.IGNORECASE,
)
#: An additive word that wins over a weaker non-additive match (``Corporate sales``: "rate"
#: inside a word; ``Margin amount``).
_ADDITIVE = re.compile(
    r"total|sum\b|amount|revenue|sales|cost|spend|金额|金額|总|總|合计|销售额|銷售額|summe|"
    r"betrag|montant|importe|importo",
    re.IGNORECASE,
)
#: Names of weight columns for a weighted mean of a non-additive measure.
_WEIGHT_NAME = re.compile(
    r"weight|qty|quantity|units|volume|sessions|visits|visitors|users|impressions|views|"
    r"clicks|respondents|responses|count|orders|population|households|数量|數量|权重|權重|"
    r"人数|人數|次数|次數|访问|訪問|样本|樣本|件数|gewicht|menge|anzahl|poids|quantité|"
    r"cantidad|peso|quantità",
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
    skipped_measures: list[str] = []


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


class _Builder:
    def __init__(self) -> None:
        self.figures: list[Figure] = []
        self.skipped: list[Skipped] = []

    def skip(self, what: str, ref: str, reason: str) -> None:
        self.skipped.append(Skipped(what=what, ref=ref, reason=reason))

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
        coverage: _Coverage | None = None,
        weights: str | None = None,
    ) -> Figure:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 and unit != "%":
            value = int(value) if operation in ("count", "count_rows", "group_count") else value
        stored: float | int | str = (
            format_value(value) if isinstance(value, date | datetime) else value
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


class _Coverage(BaseModel):
    """Known cells of a range: ``covered`` of ``of``; ``missing`` are the unknown ones."""

    covered: int
    of: int
    missing: list[str]


class _Tags(TypedDict, total=False):
    """Keyword arguments shared by several ``_Builder.add`` calls of one column."""

    unit: str | None
    column: str | None
    filter: str | None
    coverage: _Coverage | None


def _is_number(v: object) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and bool(np.isfinite(v))


def _numbers(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """(values, row positions) of the column's numeric values."""
    pos = [i for i, v in enumerate(col.values) if _is_number(v)]
    return np.array([col.values[i] for i in pos], dtype=float), np.array(pos, dtype=int)


def _unknown_positions(table: Table, col: Column) -> set[int]:
    """Row positions of the column's unknown cells."""
    unknown = set(col.unknown)
    return {i for i, r in enumerate(table.rows) if f"{col.letter}{r}" in unknown}


def _coverage(table: Table, col: Column, positions: list[int] | None = None) -> _Coverage:
    """Coverage of ``col`` over the rows at ``positions`` (all rows when None)."""
    rows = range(len(table.rows)) if positions is None else positions
    unknown = _unknown_positions(table, col)
    known = [i for i in rows if _is_number(col.values[i])]
    missing = [f"{col.letter}{table.rows[i]}" for i in rows if i in unknown]
    return _Coverage(covered=len(known), of=len(known) + len(missing), missing=missing)


def is_code(col: Column) -> bool:
    """A numeric column of codes, not quantities: a brand, currency-unit, type or status code.

    By name (``Brand``, ``Currency unit``, ``Status``, ``品牌名称``, ``货币单位``, ``类型``:
    a name, a kind or a unit of something is never summed), or by value when the name is not
    a measure's (``Amount``, ``Qty``, ``金额``...): integers of one fixed width of 3+ digits
    (``1001``, ``2040``) with few distinct values that repeat (at most half as many
    distinct values as rows, at least one repeated), and not round amounts (multiples of 10).
    """
    if col.type is not ColumnType.INTEGER:
        return False
    if _MEASURE_NAME.search(col.name) or _WEIGHT_NAME.search(col.name):
        return False
    if _CODE_NAME.search(col.name):
        return True
    if col.unit is not None:
        return False
    values, _ = _numbers(col)
    if len(values) < 4 or np.any(values < 0):
        return False
    widths = {len(str(int(v))) for v in values}
    distinct = len(np.unique(values))
    return (
        len(widths) == 1
        and min(widths) >= 3
        and distinct * 2 <= len(values)
        and distinct < len(values)
        and not np.all(values % 10 == 0)
    )


def is_identifier(col: Column) -> bool:
    """An id-like numeric column: by name (``Row ID``, ``Postal Code``, ``型号``, ``号码``,
    in several languages), by value (unique integers of 10+ rows; integers of 7+ digits,
    such as phone or account numbers), or a code column (:func:`is_code`)."""
    if _ID_NAME.search(col.name) or is_code(col):
        return True
    values, _ = _numbers(col)
    if col.type is not ColumnType.INTEGER or not len(values):
        return False
    if len(values) >= 10 and len(np.unique(values)) == len(values):
        return True
    return bool(
        len(values) >= 2
        and np.all(np.abs(values) >= 1_000_000)
        and np.all(values > 0)
        and len(np.unique(values)) == len(values)
        and col.unit is None
        and "#,##" not in col.number_format
    )


def is_additive(col: Column) -> bool:
    """Whether a sum of the column means something: False for percentages (``%`` unit or
    format) and for rates, ratios, averages, prices and scores (by name)."""
    if col.unit == "%" or percent_format(col.number_format) is not None:
        return False
    name = col.name
    if _ALWAYS_NON_ADDITIVE.search(name):
        return False
    if _PER_ITEM.search(name):
        return bool(_TOTAL_WORD.search(name))
    return not (_NON_ADDITIVE.search(name) and not _ADDITIVE.search(name))


def _distinct(col: Column) -> Counter[str]:
    return Counter(str(v).strip() for v in col.values if v is not None and str(v).strip())


def profile(table: Table, config: AnalysisConfig) -> TableProfile:
    """Decide the role of each column of ``table``."""
    measures: list[str] = []
    identifiers: list[str] = []
    dimensions: list[str] = []
    dates: list[str] = []
    label: tuple[float, str] | None = None
    for col in table.columns:
        if col.is_numeric and col.non_empty and is_code(col):
            identifiers.append(col.name)
            distinct = len(_distinct(col))
            if 2 <= distinct <= config.max_distinct and distinct * 2 <= col.non_empty:
                dimensions.append(col.name)  # a brand or type code groups the rows
        elif col.is_numeric and col.non_empty:
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

    def rank(name: str) -> tuple[int, float]:
        col = table.column(name)
        # additive measures lead (a total is the headline), then the largest absolute total
        return (0 if is_additive(col) else 1, -float(np.abs(_numbers(col)[0]).sum()))

    measures.sort(key=rank)
    dimensions.sort(key=lambda name: len(_distinct(table.column(name))))
    return TableProfile(
        table_id=table.id,
        measures=measures[: config.max_measures],
        dimensions=dimensions[: config.max_dimensions],
        dates=dates[:2],
        identifiers=identifiers,
        label_column=label[1] if label else None,
        skipped_measures=measures[config.max_measures :],
    )


def _weight_column(table: Table, measure: Column, prof: TableProfile) -> Column | None:
    """The weight column for a weighted mean of ``measure``: an additive, non-negative
    measure named like a weight (``Sessions``, ``Qty``, ``数量``) with a value wherever
    ``measure`` has one."""
    for col in table.columns:
        if col.name == measure.name or not col.is_numeric or not _WEIGHT_NAME.search(col.name):
            continue
        if col.name in prof.identifiers or not is_additive(col):
            continue
        pairs = [(v, w) for v, w in zip(measure.values, col.values, strict=True) if _is_number(v)]
        weights = [float(w) for _, w in pairs if _is_number(w)]
        if pairs and len(weights) == len(pairs) and min(weights) >= 0 and sum(weights) > 0:
            return col
    return None


def _mean(col: Column, positions: list[int], weights: Column | None) -> float | None:
    values = [float(v) for i in positions if _is_number(v := col.values[i])]
    if not values:
        return None
    if weights is None:
        return float(np.mean(values))
    pairs = [
        (float(v), float(w))
        for i in positions
        # _weight_column checked that weights holds a number wherever col does
        if _is_number(v := col.values[i]) and _is_number(w := weights.values[i])
    ]
    total = sum(w for _, w in pairs)
    if total <= 0:
        return None
    return sum(v * w for v, w in pairs) / total


def _cell(table: Table, col: Column, position: int) -> str:
    return sheet_ref(table.sheet, f"{col.letter}{table.rows[position]}")


def _describe_measure(
    b: _Builder, table: Table, col: Column, weights: Column | None
) -> dict[str, Figure]:
    """Whole-column figures of a measure; returns ``{"total": ...}`` when a total is given."""
    values, pos = _numbers(col)
    out: dict[str, Figure] = {}
    if not len(values):
        return out
    name = f"`{col.name}`"
    cover = _coverage(table, col)
    common: _Tags = {"unit": col.unit, "column": col.name, "coverage": cover}
    if is_additive(col):
        out["total"] = b.add(
            table, f"total {name}", float(values.sum()), "sum", col.range, **common
        )
    if len(values) < 3 and is_additive(col):
        return out  # a mean, median or extreme of one or two values says nothing new
    b.add(table, f"mean {name}", float(values.mean()), "mean", col.range, **common)
    if weights is not None:
        weighted = _mean(col, list(range(len(table.rows))), weights)
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
    lo, hi = int(values.argmin()), int(values.argmax())
    known = " known" if cover.missing else ""
    b.add(
        table,
        f"smallest{known} {name}",
        float(values[lo]),
        "min",
        _cell(table, col, int(pos[lo])),
        **common,
    )
    b.add(
        table,
        f"largest{known} {name}",
        float(values[hi]),
        "max",
        _cell(table, col, int(pos[hi])),
        **common,
    )
    return out


def _describe_by_currency(b: _Builder, table: Table, col: Column) -> None:
    """A column whose values are in several currencies: a total (and a mean of three or
    more) per currency, never one over all of them."""
    units = col.value_units or []
    rows_of: dict[str, list[int]] = defaultdict(list)
    for i, (v, unit) in enumerate(zip(col.values, units, strict=True)):
        if _is_number(v):
            rows_of[unit or "no currency"].append(i)
    b.skip(
        "column",
        col.range,
        f"`{col.name}`: values in {len(rows_of)} currencies ({', '.join(sorted(rows_of))}); "
        "no total or mean over all of them, one per currency",
    )
    for unit, rows in sorted(rows_of.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        known = [float(v) for i in rows if _is_number(v := col.values[i])]  # all, by rows_of
        where = f"`{col.name}` in `{unit}`"
        common: _Tags = {
            "unit": None if unit == "no currency" else unit,
            "column": col.name,
            "filter": where,
            "coverage": _coverage(table, col, rows),
        }
        b.add(table, f"total {where}", sum(known), "group_sum", col.range, **common)
        if len(known) >= 3:
            b.add(table, f"mean {where}", float(np.mean(known)), "group_mean", col.range, **common)


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


EMPTY_GROUP = "(empty)"


def _groups(col: Column) -> dict[str, list[int]]:
    """Row positions per group value; rows with no value are the group ``(empty)``."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(col.values):
        text = str(key).strip() if key is not None else ""
        groups[text or EMPTY_GROUP].append(i)
    return groups


def _group_by(
    b: _Builder,
    table: Table,
    dim: Column,
    measure: Column | None,
    total: Figure | None,
    weights: Column | None,
    config: AnalysisConfig,
) -> None:
    groups = _groups(dim)
    if len([k for k in groups if k != EMPTY_GROUP]) < 2:
        return
    cells = dim.range if measure is None else f"{dim.range} × {measure.range}"
    if measure is None:
        ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        for key, rows in ranked[: config.max_groups]:
            where = f"`{dim.name}` = `{key}`" if key != EMPTY_GROUP else f"`{dim.name}` empty"
            b.add(
                table,
                f"rows with {where}",
                len(rows),
                "group_count",
                cells,
                column=dim.name,
                filter=where,
            )
            b.add(
                table,
                f"share of rows with {where} in all {len(table.rows)} rows",
                len(rows) / len(table.rows),
                "group_share",
                cells,
                unit="%",
                column=dim.name,
                filter=where,
            )
        return
    additive = is_additive(measure)
    results: list[tuple[str, float, list[int]]] = []
    for key, rows in groups.items():
        known = [float(v) for i in rows if _is_number(v := measure.values[i])]
        if not known:
            continue
        value = sum(known) if additive else _mean(measure, rows, weights)
        if value is not None:
            results.append((key, value, rows))
    results.sort(key=lambda kv: (-kv[1], kv[0]))
    for key, value, rows in results[: config.max_groups]:
        where = f"`{dim.name}` = `{key}`" if key != EMPTY_GROUP else f"`{dim.name}` empty"
        cover = _coverage(table, measure, rows)
        if additive:
            b.add(
                table,
                f"total `{measure.name}` where {where}",
                value,
                "group_sum",
                cells,
                unit=measure.unit,
                column=measure.name,
                filter=where,
                coverage=cover,
            )
            if total is not None and float(total.value):
                grand = float(total.value)
                b.add(
                    table,
                    f"share of {where} in total `{measure.name}` ({total.id})",
                    value / grand,
                    "group_share",
                    cells,
                    unit="%",
                    column=measure.name,
                    filter=where,
                    inputs=[total.id],
                    coverage=cover,
                )
        else:
            how = f"mean weighted by `{weights.name}`" if weights is not None else "mean"
            b.add(
                table,
                f"{how} `{measure.name}` where {where}",
                value,
                "group_mean",
                cells,
                unit=measure.unit,
                column=measure.name,
                filter=where,
                coverage=cover,
                weights=weights.name if weights is not None else None,
            )


def _top_rows(
    b: _Builder, table: Table, measure: Column, label: Column | None, config: AnalysisConfig
) -> None:
    values, pos = _numbers(measure)
    if len(values) <= config.top_n or not config.top_n:
        return
    cover = _coverage(table, measure)
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
            _cell(table, measure, row),
            unit=measure.unit,
            column=measure.name,
            coverage=cover if cover.missing else None,
        )


def _next_period(key: str, yearly: bool) -> str:
    if yearly:
        return str(int(key) + 1)
    year, month = int(key[:4]), int(key[5:])
    return f"{year + month // 12}-{month % 12 + 1:02d}"


def _periods(
    b: _Builder,
    table: Table,
    date_col: Column,
    measure: Column | None,
    weights: Column | None,
    config: AnalysisConfig,
) -> None:
    stamps = [_as_date(v) for v in date_col.values]
    known = [d for d in stamps if d is not None]
    if len(known) < 2:
        return
    yearly = (max(known) - min(known)).days >= 2 * 365
    rows_of: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(stamps):
        if d is not None:
            rows_of[f"{d.year}" if yearly else f"{d.year}-{d.month:02d}"].append(i)
    additive = measure is None or is_additive(measure)
    values: dict[str, float] = {}
    for key, rows in rows_of.items():
        if measure is None:
            values[key] = len(rows)
            continue
        nums = [float(v) for i in rows if _is_number(v := measure.values[i])]
        if not nums:
            continue
        value = sum(nums) if additive else _mean(measure, rows, weights)
        if value is not None:
            values[key] = value
    if len(values) < 2:
        return
    keys = sorted(values)[-config.max_periods :]
    cells = date_col.range if measure is None else f"{date_col.range} × {measure.range}"
    what = f"`{measure.name}`" if measure else "rows"
    previous: Figure | None = None
    prev_key = ""
    unit = None if measure is None else measure.unit
    for key in keys:
        where = f"`{date_col.name}` in `{key}`"
        cover = _coverage(table, measure, rows_of[key]) if measure is not None else None
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
            if _next_period(prev_key, yearly) != key:
                b.skip(
                    "figure",
                    f"change in {what} from `{prev_key}` to `{key}`",
                    "the periods are not adjacent (no rows in between); no change is given "
                    "across a gap",
                )
            else:
                a, c = float(previous.value), float(current.value)
                change_unit = "pp" if unit == "%" else unit
                in_what = " in percentage points" if unit == "%" else ""
                b.add(
                    table,
                    f"change in {what} from `{prev_key}` to `{key}`{in_what}",
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
        weights = {name: _weight_column(table, table.column(name), prof) for name in prof.measures}
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
        single = [name for name in prof.measures if not table.column(name).value_units]
        lead = table.column(single[0]) if single else None
        lead_w = weights[lead.name] if lead is not None and not is_additive(lead) else None
        for name in prof.dimensions:
            _group_by(
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
            _top_rows(b, table, lead, label, config)
        if prof.dates:
            _periods(b, table, table.column(prof.dates[0]), lead, lead_w, config)
    return Analysis(figures=b.figures, profiles=profiles, skipped_tables=skipped, skipped=b.skipped)
