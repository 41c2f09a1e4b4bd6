"""Column roles of a table for the report's analysis: measures (additive or not),
identifiers and codes, dimensions, dates, the label column and a weight column. By name in
several languages, and by value. Split out of :mod:`workflows.excel_report.analysis`
(issue 48).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TypeGuard

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.spreadsheet import Column, ColumnType, Table
from orchestrator.spreadsheet.columns import percent_format

_ID_NAME = re.compile(
    r"(^|[\s_\-/(])(id|no|nr|num|number|code|codes|zip|postal|postcode|phone|tel|telephone|"
    r"mobile|fax|sku|ean|upc|gtin|isbn|iban|account|model|serial|part|ref|reference|key|"
    r"plz|nummer|numéro|numero|código|codigo|codice|modelo|modèle|artikelnummer|año|year|"
    r"jahr|année|fy|yr|fiscal)($|[\s_\-.#/):])"
    r"|编号|编码|序号|学号|工号|代码|代號|代号|邮编|郵遞區號|型号|型號|号码|號碼|电话|電話|手机|"
    r"账号|帳號|卡号|单号|订单号|身份证|品番|型番|番号|コード|郵便番号|年份|年度|财年|財年|学年|學年|^年$",
    re.IGNORECASE,
)
#: Names of a count ("Number of orders", "No. of returns", "# of visits", 订单数量, 人数): a
#: measure, though "number" and "no" are id words on their own.
_COUNT_NAME = re.compile(
    r"(^|[\s_\-/(])(number|no\.?|num|nr|#)\s*of\s+\w|次数|件数|人数|个数|單數|订单数|數目|数目",
    re.IGNORECASE,
)
#: Names that mean a code or a number of something only when no measure word is in the name
#: (``Store`` 3301 is a store number, ``Store sales`` a measure): barcodes, store, branch,
#: department and item numbers, industry codes (NAICS/SIC), area codes, ``Item #``.
_CODE_HINT = re.compile(
    r"((^|[\s_\-/(])(barcode|upc|ean\d*|gtin|naics|sic|hs|branch|store|shop|outlet|dept|"
    r"department|division|item|sku|plant|warehouse|site|zone)|\S\s*#|^#|条码|条形码|区号|邮编|"
    r"门店|店号|分店|部门|货号|批号|商品码|物料号|科目)\s*[.:)]?\s*$",
    re.IGNORECASE,
)  # the last word of the name only: ``Warehouse stock`` and ``门店库存`` are measures
#: Names whose last word is a thing known by its number, not a quantity, even after a measure
#: word: ``Cost center``, ``Profit centre``, ``Sales order``, ``PO``, ``Invoice``,
#: ``Customer``, ``销售订单``, ``成本中心``: whole numbers under them are those things' numbers.
_ENTITY_NAME = re.compile(
    r"((^|[\s_\-/(])(cent(er|re)|order|invoice|po|voucher|contract|customer|client|vendor|"
    r"supplier|employee|member|ticket|case|claim|shipment|batch|lot)|中心|订单|訂單|发票|發票|"
    r"凭证|憑證|合同|客户|客戶|供应商|供應商|员工|員工|会员|會員|工单|工單|批次)\s*[.:)]?\s*$",
    re.IGNORECASE,
)
#: Names of a month number column (values 1-12): a period, never summed.
_MONTH_NAME = re.compile(r"(^|[\s_\-/(])(month|mon|mes|monat|mois)($|[\s_\-.)])|^月$|月份", re.I)
#: Names of a quarter number column (values 1-4): a period, never summed.
_QUARTER_NAME = re.compile(
    r"(^|[\s_\-/(])(quarter|qtr|qtr\.|quartal|trimestre)($|[\s_\-.)])|^q$|季度|^季$", re.I
)
#: Names of a date or time column: integers or decimals in the Excel serial range under such
#: a name are dates without a date format (``45292`` is 2024-01-01), never summed.
_DATE_NAME = re.compile(
    r"date|datum|fecha|\btime\b|timestamp|日期|日付|时间|時間|年月日", re.IGNORECASE
)
#: Excel serial numbers of 1954-09-26 .. 2119-01-10: dates that lost their format.
_SERIAL_RANGE = (20_000, 80_000)
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
#: Words that mean "summed" (``Total price``, ``Price amount``).
_TOTAL_WORDS = r"total|sum\b|amount|金额|金額|总|總|合计|summe|betrag|montant|importe|importo"
_TOTAL_WORD = re.compile(_TOTAL_WORDS, re.IGNORECASE)
#: An additive word that wins over a weaker non-additive match (``Corporate sales``: "rate"
#: inside a word; ``Margin amount``): a word of a total, or of a summed measure.
_ADDITIVE = re.compile(_TOTAL_WORDS + r"|revenue|sales|cost|spend|销售额|銷售額", re.IGNORECASE)
#: Names of weight columns for a weighted mean of a non-additive measure.
_WEIGHT_NAME = re.compile(
    r"weight|qty|quantity|units|volume|sessions|visits|visitors|users|impressions|views|"
    r"clicks|respondents|responses|count|orders|population|households|数量|數量|权重|權重|"
    r"人数|人數|次数|次數|访问|訪問|样本|樣本|件数|gewicht|menge|anzahl|poids|quantité|"
    r"cantidad|peso|quantità",
    re.IGNORECASE,
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


def is_number(v: object) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and bool(np.isfinite(v))


def numbers(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """(values, row positions) of the column's numeric values."""
    pos = [i for i, v in enumerate(col.values) if is_number(v)]
    return np.array([col.values[i] for i in pos], dtype=float), np.array(pos, dtype=int)


def is_code(col: Column) -> bool:
    """A numeric column of codes, not quantities: a brand, currency-unit, type or status code.

    By name (``Brand``, ``Currency unit``, ``Status``, ``品牌名称``, ``货币单位``, ``类型``:
    a name, a kind or a unit of something is never summed), or by value when the name is not
    a measure's (``Amount``, ``Qty``, ``金额``...): integers of one fixed width of 3+ digits
    (``1001``, ``2040``) that repeat (at least one repeated value), not round amounts
    (multiples of 10), and either few distinct (at most half as many as rows) or, for 4+
    digits, a tight cluster (``7001, 7002, 7001, 7003``: spread under a tenth of the least).
    """
    if col.type is not ColumnType.INTEGER:
        return False
    if _MEASURE_NAME.search(col.name) or _WEIGHT_NAME.search(col.name):
        return False
    if _CODE_NAME.search(col.name):
        return True
    if col.unit is not None:
        return False
    values, _ = numbers(col)
    if len(values) < 4 or np.any(values < 0):
        return False
    widths = {len(str(int(v))) for v in values}
    distinct = len(np.unique(values))
    if len(widths) != 1 or min(widths) < 3 or distinct == len(values):
        return False
    if np.all(values % 10 == 0):
        return False
    # few distinct values, or a tight cluster of 4+ digit codes (7001, 7002, 7001, 7003:
    # the spread is under a tenth of the smallest, as with numbered stores or accounts)
    clustered = min(widths) >= 4 and values.max() - values.min() < values.min() / 10
    return distinct * 2 <= len(values) or bool(clustered)


def is_identifier(col: Column) -> bool:
    """An id-like numeric column: by name (``Row ID``, ``Postal Code``, ``型号``, ``号码``,
    in several languages), by value (unique integers of 10+ rows; integers of 7+ digits,
    such as phone or account numbers), by the thing its whole numbers number (``Sales order``,
    ``Cost center``: :data:`_ENTITY_NAME`), or a code column (:func:`is_code`). A count by
    its name ("Number of orders") is never one, nor a measure by its name (``Amount``,
    ``Revenue``, ``金额``) past the name and code rules: whole amounts may all differ."""
    if _COUNT_NAME.search(col.name):
        return False
    if _ID_NAME.search(col.name) or is_code(col) or is_date_serial(col):
        return True
    values, _ = numbers(col)
    if col.type is not ColumnType.INTEGER or not len(values):
        return False
    if _ENTITY_NAME.search(col.name) and not _TOTAL_WORD.search(col.name):
        return True
    if not _is_measure_name(col.name) and (_coded_by_name(col.name, values) or _year_run(values)):
        return True
    if _is_measure_name(col.name):
        return False  # whole amounts that never repeat (``Amount``, ``金额``) are amounts
    if len(values) >= 10 and len(np.unique(values)) == len(values) and _id_like(values):
        return True
    plain = col.unit is None and "#,##" not in col.number_format and np.all(values > 0)
    if not plain or len(values) < 2 or not np.all(values >= 1_000_000):
        return False
    if len(np.unique(values)) == len(values):
        return True
    # barcodes (EAN-8/UPC-12/EAN-13), account or phone numbers that repeat: one width of 8+
    # digits, under a name that is not a measure's (a sum of them is never meaningful)
    widths = {len(str(int(v))) for v in values}
    return len(widths) == 1 and min(widths) >= 8 and not _is_measure_name(col.name)


def _id_like(values: np.ndarray) -> bool:
    """Unique integers that number things: of one width (``10234, 10567``), or a run with no
    gap (``1, 2, ... 15`` in any order); amounts of several widths are not."""
    widths = {len(str(int(abs(v)))) for v in values}
    return len(widths) == 1 or bool(np.all(np.diff(np.sort(values)) == 1))


def _is_measure_name(name: str) -> bool:
    return bool(_MEASURE_NAME.search(name) or _WEIGHT_NAME.search(name))


def _coded_by_name(name: str, values: np.ndarray) -> bool:
    """A code by a name hint that is no measure's: ``Store``, ``Dept``, ``Item #``, ``区号``,
    ``门店``; or a month or quarter number (``Month``, ``月份``, ``Qtr``, ``季度``) whose
    values are all 1-12 or 1-4."""
    if _CODE_HINT.search(name):
        return True
    if _QUARTER_NAME.search(name) and np.all((values >= 1) & (values <= 4)):
        return True
    return bool(_MONTH_NAME.search(name) and np.all((values >= 1) & (values <= 12)))


def _row_counter(table: Table, col: Column) -> bool:
    """The first column of a headed table with other columns, numbering every row in order,
    1, 2, 3, 4... (or from 0), under a name that is no measure's: a row counter (``Line``,
    ``Seq``, ``S/N``, ``行号``, ``項次``, a rank), four rows or more. (``Months employed`` 1-6
    right of a label column is a measure.)"""
    if not table.header_rows or len(table.columns) < 2 or col is not table.columns[0]:
        return False
    if _is_measure_name(col.name):
        return False
    values, _ = numbers(col)
    if len(values) < 4 or len(values) != len(col.values) or values[0] not in (0, 1):
        return False
    return bool(np.all(np.diff(values) == 1))


def _year_run(values: np.ndarray) -> bool:
    """Three or more distinct whole years of 1900-2100 with no year missing between them
    (``2021, 2022, 2023`` in any order): one row per year, a period column whatever its name."""
    if len(values) < 3 or not np.all((values >= 1900) & (values <= 2100)):
        return False
    distinct = np.unique(values)
    return len(distinct) == len(values) and distinct[-1] - distinct[0] == len(values) - 1


def is_date_serial(col: Column) -> bool:
    """Excel date serials without a date format: a numeric column named like a date or time
    (``日期``, ``Order Date``, ``Time``) that is no measure's (``Date count``), with no unit,
    whose values all lie in the serial range of 1954-2119 (``45292`` is 2024-01-01)."""
    if not col.is_numeric or col.unit is not None or not _DATE_NAME.search(col.name):
        return False
    if _is_measure_name(col.name):
        return False
    values, _ = numbers(col)
    low, high = _SERIAL_RANGE
    return bool(len(values)) and bool(np.all((values >= low) & (values <= high)))


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


def distinct_values(col: Column) -> Counter[str]:
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
            distinct = len(distinct_values(col))
            if 2 <= distinct <= config.max_distinct and distinct * 2 <= col.non_empty:
                dimensions.append(col.name)  # a brand or type code groups the rows
        elif col.is_numeric and col.non_empty:
            counter = is_identifier(col) or _row_counter(table, col)
            (identifiers if counter else measures).append(col.name)
        elif col.is_temporal and col.non_empty:
            dates.append(col.name)
        elif col.type is ColumnType.TEXT and col.non_empty:
            distinct = len(distinct_values(col))
            if 2 <= distinct <= config.max_distinct and distinct * 2 <= col.non_empty:
                dimensions.append(col.name)
            elif distinct > config.max_distinct or distinct * 2 > col.non_empty:
                ratio = distinct / col.non_empty
                if label is None or ratio > label[0]:
                    label = (ratio, col.name)

    def rank(name: str) -> tuple[int, float]:
        col = table.column(name)
        # additive measures lead (a total is the headline), then the largest absolute total
        return (0 if is_additive(col) else 1, -float(np.abs(numbers(col)[0]).sum()))

    measures.sort(key=rank)
    dimensions.sort(key=lambda name: len(distinct_values(table.column(name))))
    return TableProfile(
        table_id=table.id,
        measures=measures[: config.max_measures],
        dimensions=dimensions[: config.max_dimensions],
        dates=dates[:2],
        identifiers=identifiers,
        label_column=label[1] if label else None,
        skipped_measures=measures[config.max_measures :],
    )


def weight_column(table: Table, measure: Column, prof: TableProfile) -> Column | None:
    """The weight column for a weighted mean of ``measure``: an additive, non-negative
    measure named like a weight (``Sessions``, ``Qty``, ``数量``) with a value wherever
    ``measure`` has one."""
    for col in table.columns:
        if col.name == measure.name or not col.is_numeric or not _WEIGHT_NAME.search(col.name):
            continue
        if col.name in prof.identifiers or not is_additive(col):
            continue
        pairs = [(v, w) for v, w in zip(measure.values, col.values, strict=True) if is_number(v)]
        weights = [float(w) for _, w in pairs if is_number(w)]
        if pairs and len(weights) == len(pairs) and min(weights) >= 0 and sum(weights) > 0:
            return col
    return None
