"""Template and pivot structure that is not data (issue 46): what table detection leaves out.

The layout rules of :mod:`~orchestrator.spreadsheet.detect` find a table's header and data
rows; these rules then take out the rows and cells that belong to the sheet's form, not to its
data (workflow logic of this package, so written here; every rule is checked by the tests on
generated templates and pivots, and by the figures of the real workbooks staying as they were):

1. **Template placeholders** (``{{name}}``, ``{%...%}``, ``${x}``, ``#{x}``, EasyExcel's
   ``{.x}``/``{x}``, Word's ``«x»``) are not values: a cell holding only placeholders is
   removed before detection, so it never becomes a column name or a data row.
2. **A header repeated** inside the data (a printed report's page header, a section's own
   header) is not a data row.
3. **A merged title row** inside a table (one merged range across the row), and a **group
   label row** (one text cell and nothing else, in a table whose rows otherwise hold several
   values and which has numbers below it) are not data rows.
4. **A merged cell is one value**: a row whose every value is spread from a merged range
   above it is the same record, not a new row; a number spread down from a merged range is
   counted once, in the range's first row.
5. **Footer rows** at the bottom of a table (``Prepared by:``, ``审核：``, ``Page 1 of 2``,
   ``Version``, ``版本：``, notes, a lone line of text under a table of numbers), and the
   summary lines under its total (``Tax``, ``Shipping``, ``应付``), are
   not data rows.
6. **Pivot subtotals**: when a table's own grand total row disagrees with the sum of its data
   rows, the rows whose value is the sum of the rows right below them (a pivot's group
   subtotals, at any depth) are found by an exact partition that must reproduce the grand
   total in every numeric column; they are left out, so nothing is counted twice. With no
   grand total row, group heads above their rows in outline form (a label in the first
   column and none in the second; the rows have none in the first) are left out when each
   head is the sum of its rows in every numeric column.
7. **A total line without a label**: the last row with numbers, holding numbers only, whose
   every number is its column's sum over all the data rows above (each of which has a label),
   is a total row.
"""

from __future__ import annotations

import re
from functools import cache

from orchestrator.exceptions import OrchestratorError
from orchestrator.spreadsheet.raw import CellKind, RawCell, RawSheet
from orchestrator.spreadsheet.refs import Cells, is_copy, row_cells
from orchestrator.spreadsheet.textvalues import cell_value, currency_name

Box = tuple[int, int, int, int]  # r1, c1, r2, c2 of a block

_PLACEHOLDER = re.compile(
    r"\{\{.*?\}\}|\{%.*?%\}|\$\{[^{}]*\}|#\{[^{}]*\}|\{\.?[A-Za-z_][\w.]*\}|«[^»]*»"
)
_FOOTER = re.compile(
    r"^\s*(?:prepared|approved|checked|reviewed|verified|authori[sz]ed|signed|signature|"
    r"page\s+\d|notes?\b|remarks?\b|comments?\b|footnotes?\b|source\b|printed|generated|"
    r"contact\b|version\b|ver\.|rev\b|rev\.|revision\b|date\s*[:：]|"
    r"版本|版次|日期[:：]|单位[:：]|單位[:：]|制表|制单|製表|审核|審核|复核|複核|批准|核准|签字|簽字|签名|簽名|经办|經辦|"
    r"负责人|負責人|填表|填报|填報|备注|備註|说明|說明|注[:：]|注意|来源|來源|第\s*\d+\s*[页頁]|"
    r"联系人|聯繫人|财务|財務|会计|會計|出纳|出納|主管|[*※])",
    re.IGNORECASE,
)
_SUMMARY = re.compile(
    r"^\s*(?:tax|vat|gst|sales\s+tax|shipping|freight|delivery|handling|discount|deposit|"
    r"balance|amount\s+due|total\s+due|paid|rounding|税|稅|运费|運費|折扣|优惠|優惠|定金|订金|"
    r"已付|应付|應付|未付|余额|餘額|抹零)",
    re.IGNORECASE,
)
_TOTALISH = re.compile(
    r"^\s*(?:(?:grand|sub)\s*)?totals?\b|^\s*(?:sum|amount\s+due|balance\s+due)\b|"
    r"^\s*(?:[合总總小共]\s*[计計]|应付|應付|实付|實付)",
    re.IGNORECASE,
)
_GRAND = re.compile(
    r"^\s*(?:grand\s*total|totals?|sum|overall|总计|總計|合计|合計|共计|共計|汇总|彙總|匯總)\s*[:：]?\s*$",
    re.I,
)
#: A pivot of more rows than this is not parsed for subtotals, and the search for a
#: partition stops after this many steps (none is claimed then): a table whose total row is
#: stale must not cost seconds.
MAX_PIVOT_ROWS = 400
MAX_PARTITION_STEPS = 50_000


def remove_placeholders(raw: RawSheet) -> list[tuple[int, int]]:
    """Delete the cells that hold only template placeholders (rule 1); returns where they
    were (they keep their place in the layout: see ``build_sheet``)."""
    gone = [
        key
        for key, cell in raw.cells.items()
        if cell.kind is CellKind.TEXT
        and _PLACEHOLDER.search(str(cell.value))
        and not re.sub(r"[\W_]+", "", _PLACEHOLDER.sub("", str(cell.value)))
    ]
    example = str(raw.cells[gone[0]].value) if gone else ""
    for key in gone:
        del raw.cells[key]
    if gone:
        raw.warnings.append(
            f"{len(gone):,} template placeholder cell(s) such as {example[:40]!r} are not "
            "data; left out"
        )
    return gone


def _own(cells: Cells, r: int, c1: int, c2: int) -> dict[int, RawCell]:
    """The row's cells by column, without values spread from a merged range's other rows."""
    return {c: cell for c in range(c1, c2 + 1) if (cell := cells.get((r, c))) is not None}


def structure_reason(
    cells: Cells, r: int, box: tuple[int, int], header_rows: list[int], wide: bool
) -> str | None:
    """Why row ``r`` is form, not data (rules 2-4); None for a data row.

    Args:
        cells: The sheet's cells (merged ranges spread).
        r: The row.
        box: The table's ``(first column, last column)``.
        header_rows: The table's header rows.
        wide: The table's rows mostly hold several values (group label rows are possible).
    """
    c1, c2 = box
    row = _own(cells, r, c1, c2)
    if not row:
        return None
    if all(is_copy(cell, r, c) and cell.merged_from[0] < r for c, cell in row.items()):  # type: ignore[index]  # is_copy: merged_from is set
        return "continues the merged cells of the row above (one record)"
    texts = {c: str(cell.value).strip() for c, cell in row.items() if cell.kind is CellKind.TEXT}
    if header_rows and len(texts) == len(row) >= 2:
        heads = {  # each column's labels in any header row (a units row under them too)
            c: {str(cells[(h, c)].value).strip() for h in header_rows if (h, c) in cells}
            for c in texts
        }
        if all(text in heads[c] for c, text in texts.items()):
            return "the header repeated"
    origins = {cell.merged_from for cell in row.values()}
    if len(row) >= 2 and len(origins) == 1 and None not in origins and texts:
        return "a merged title row"
    below = _own(cells, r + 1, c1, c2)
    if (
        wide
        and c2 - c1 >= 2
        and list(texts) == [c1] == list(row)
        and any(cell.kind is CellKind.NUMBER for cell in below.values())
    ):
        return "a group label row (one text cell above the group's rows)"
    return None


def footer_rows(
    cells: Cells, data_rows: list[int], totals_rows: list[int], c1: int, c2: int
) -> dict[int, str]:
    """Rows at the end of ``data_rows`` that are a template's footer, its bottom total line
    (a total label with fewer values than a data row: ``TOTAL AMOUNT DUE``), or the summary
    lines under its total (rule 5), with the reason."""
    sizes = sorted(len(_own(cells, r, c1, c2)) for r in data_rows)
    typical = sizes[len(sizes) // 2] if sizes else 0
    with_numbers = sum(
        any(cell.kind is CellKind.NUMBER for cell in _own(cells, r, c1, c2).values())
        for r in data_rows
    )
    numeric = typical >= 2 and with_numbers * 2 > len(data_rows)
    out: dict[int, str] = {}
    for r in reversed(data_rows):
        row = [cell for c in range(c1, c2 + 1) if (cell := cells.get((r, c))) is not None]
        first = next((str(c.value).strip() for c in row if c.kind is CellKind.TEXT), "")
        numbers = any(c.kind is CellKind.NUMBER for c in row)
        if len(out) >= len(data_rows) - 1:
            break  # a table keeps at least one data row
        if first and _FOOTER.match(first) and (not numbers or len(row) <= 2):
            out[r] = f"a footer row ({first[:40]!r})"
        elif first and numeric and not numbers and _note_like(cells, r, c1, c2, data_rows):
            out[r] = f"a note under the table ({first[:40]!r})"
        elif first and _SUMMARY.match(first) and any(t < r for t in totals_rows):
            out[r] = f"a summary line under the total ({first[:40]!r})"
        elif first and _TOTALISH.match(first) and len(row) < typical:
            out[r] = f"the template's total line ({first[:40]!r})"
        else:
            break
    return out


def _note_like(cells: Cells, r: int, c1: int, c2: int, data_rows: list[int]) -> bool:
    """Whether row ``r`` is one line of text under a table of numbers, not a record whose
    numbers are missing: one text cell (or one merged across the row), a sentence or a
    ``label: value`` line, longer than any value of its column in the rows above."""
    row = _own(cells, r, c1, c2)
    if len({cell.merged_from or (r, c) for c, cell in row.items()}) != 1:
        return False
    c, cell = next(iter(row.items()))
    text = str(cell.value).strip()
    if len(text) < 12 and not re.search(r"[:：]", text):
        return False
    others = [
        len(str(v.value).strip())
        for q in data_rows
        if q < r and (v := cells.get((q, c))) is not None and v.kind is CellKind.TEXT
    ]
    return len(text) > max(others, default=0)


def _number(cells: Cells, r: int, c: int) -> float:
    cell = cells.get((r, c))
    if cell is None or cell.kind is not CellKind.NUMBER or isinstance(cell.value, bool):
        return 0.0
    if is_copy(cell, r, c):
        return 0.0
    return float(cell.value)  # type: ignore[arg-type]  # a NUMBER cell holds an int or float


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _stack_partition(values: list[float], grand: float) -> list[int] | None:
    """Subtotals first, read from the bottom: a row whose value is the sum of the fewest
    items right below it heads them (they fold into it); the items left must sum to
    ``grand``. Linear-ish, and what a pivot with subtotals at the top of each group is."""
    stack: list[float] = []  # the items below the current row, nearest last
    heads: list[int] = []
    for i in range(len(values) - 1, -1, -1):
        total = 0.0
        for k in range(1, len(stack) + 1):
            total += stack[-k]
            if _close(total, values[i]):
                del stack[-k:]
                heads.append(i)
                break
        stack.append(values[i])
    if heads and _close(sum(stack), grand):
        return sorted(heads)
    return None


def _partition(values: list[float], grand: float) -> list[int] | None:
    """Header positions of a partition of ``values`` into leaves and headers whose value is
    the sum of the items right below them, the top level summing to ``grand``; None when
    no partition does, or the search passes :data:`MAX_PARTITION_STEPS`)."""
    n = len(values)
    prefix = [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
    signed = min(values, default=0.0) >= 0  # all values non-negative: sums bound the search
    calls = [0]

    @cache
    def seq(i: int, j: int, target: float) -> tuple[int, ...] | None:
        calls[0] += 1
        if calls[0] > MAX_PARTITION_STEPS:
            raise PartitionSearchLimitError
        if i == j:
            return () if _close(target, 0.0) else None
        if signed and (target < -1e-9 or target > prefix[j] - prefix[i] + 1e-6 * max(1.0, target)):
            return None
        for m in range(i + 2, j + 1):  # row i heads rows i+1 .. m-1 (a pivot's first row
            calls[0] += 1  # heads a group: tried before "row i is a leaf")
            inner = seq(i + 1, m, round(values[i], 9))
            if inner is None:
                continue
            after = seq(m, j, round(target - values[i], 9))
            if after is not None:
                return (i, *inner, *after)
        return seq(i + 1, j, round(target - values[i], 9))  # row i is a leaf

    try:
        found = seq(0, n, round(grand, 9))
    except PartitionSearchLimitError:
        found = None  # too many ways to try: no subtotal is claimed
    seq.cache_clear()
    return list(found) if found is not None else None


class PartitionSearchLimitError(OrchestratorError, RuntimeError):
    """The partition search passed :data:`MAX_PARTITION_STEPS`."""


def pivot_subtotals(
    cells: Cells, data_rows: list[int], totals_rows: list[int], c1: int, c2: int
) -> list[int]:
    """The subtotal rows of a pivot-style table (rule 6); empty when the data rows already
    sum to the grand total, or when no exact partition explains the difference."""
    grand_row = next(
        (
            t
            for t in reversed(totals_rows)
            if any(
                cell.kind is CellKind.TEXT and _GRAND.match(str(cell.value))
                for c in range(c1, c2 + 1)
                if (cell := cells.get((t, c))) is not None
            )
        ),
        None,
    )
    if not 3 <= len(data_rows) <= MAX_PIVOT_ROWS:
        return []
    if grand_row is None:
        return outline_heads(cells, data_rows, c1, c2)
    columns = [
        c
        for c in range(c1, c2 + 1)
        if (cell := cells.get((grand_row, c))) is not None and cell.kind is CellKind.NUMBER
    ]
    if not columns:
        return []
    lead = columns[0]
    values = [_number(cells, r, lead) for r in data_rows]
    grand = _number(cells, grand_row, lead)
    if _close(sum(values), grand):
        return []
    heads = _stack_partition(values, grand) or _partition(values, grand)
    if not heads:
        return []
    rows = [data_rows[p] for p in heads]
    for c in columns[1:]:
        leaves = sum(_number(cells, r, c) for r in data_rows if r not in rows)
        if not _close(leaves, _number(cells, grand_row, c)):
            return []
    return rows


def outline_heads(cells: Cells, data_rows: list[int], c1: int, c2: int) -> list[int]:
    """The group heads of a pivot in outline form with no grand total (Excel's "subtotals at
    the top of each group"): a head has a label in the first column and none in the second,
    its rows have none in the first; every number of each head must be the sum of its
    column over the group's rows, else no row is claimed."""
    if c2 - c1 < 2:
        return []
    heads: list[int] = []
    groups: dict[int, list[int]] = {}
    for r in data_rows:
        first, second = cells.get((r, c1)), cells.get((r, c1 + 1))
        if first is not None and first.kind is CellKind.TEXT and second is None:
            heads.append(r)
            groups[r] = []
        elif first is None and heads:
            groups[heads[-1]].append(r)
        else:
            return []
    if not heads or any(not rows for rows in groups.values()):
        return []
    for head, rows in groups.items():
        numbers = [
            c
            for c in range(c1 + 2, c2 + 1)
            if (cell := cells.get((head, c))) is not None and cell.kind is CellKind.NUMBER
        ]
        if not numbers or not all(
            _close(_number(cells, head, c), sum(_number(cells, q, c) for q in rows))
            for c in numbers
        ):
            return []
    return heads


def has_number(cells: Cells, r: int, c1: int, c2: int) -> bool:
    """Whether row ``r`` holds a number of its own in columns ``c1..c2``."""
    return any(_number(cells, r, c) for c in range(c1, c2 + 1))


def unlabelled_total(cells: Cells, r: int, c1: int, c2: int, data_rows: list[int]) -> bool:
    """Whether row ``r`` (a table's last row with a number) is a total line without a label
    (rule 7): it holds numbers only, each data row above it (two or more) has a label (text
    or a date), and each number of ``r`` is its column's sum over all those rows, one at
    least not zero. No data row is that by chance in every column."""
    row = [cell for c in range(c1, c2 + 1) if (cell := cells.get((r, c))) is not None]
    if len(data_rows) < 2 or not row or any(cell.kind is not CellKind.NUMBER for cell in row):
        return False
    keys = (CellKind.TEXT, CellKind.DATE, CellKind.DATETIME)
    labelled = (
        any(
            (cell := cells.get((q, c))) is not None and cell.kind in keys for c in range(c1, c2 + 1)
        )
        for q in data_rows
    )
    if not all(labelled):
        return False
    own = {c: v for c in range(c1, c2 + 1) if (v := _number(cells, r, c)) or (r, c) in cells}
    return any(own.values()) and all(
        _close(v, sum(_number(cells, q, c) for q in data_rows)) for c, v in own.items()
    )


def labels_over_values(cells: Cells, r: int, box: Box, texts: list[str]) -> bool:
    """Whether a row of labels with repeats (``Name | Amount | Amount``) is still a header:
    two or more distinct labels, one of them over a number or date (typed, or text such as
    ``$1.00``) in the next three rows (a row of text values with repeats stays data)."""
    _, c1, _, c2 = box
    return len(set(texts)) >= 2 and any(
        (r, c) in cells
        and (below := cells.get((b, c))) is not None
        and (below.kind is not CellKind.TEXT or cell_value(str(below.value)) is not None)
        for c in range(c1, c2 + 1)
        for b in range(r + 1, r + 4)
    )


def index_name_row(cells: Cells, r: int, box: Box, header: list[int]) -> bool:
    """Whether row ``r`` is the name of a table's index column as pandas writes it under a
    header of several rows: one text cell, in the first column, over a row with a value
    there and in another column; and either the header has no label in that column, or no
    one-cell row further down is a group label (one with data rows after it)."""
    _, c1, r2, c2 = box
    if not _first_only(cells, r, c1, c2) or r + 1 > r2 or cells[(r, c1)].kind is not CellKind.TEXT:
        return False
    nxt = next((b for b in range(r + 1, min(r2, r + 5) + 1) if row_cells(cells, b, c1, c2)), r)
    if len(row_cells(cells, nxt, c1, c2)) < 2 or (nxt, c1) not in cells:
        return False
    if all((h, c1) not in cells for h in header):
        return True
    lone = [b for b in range(nxt, r2 + 1) if _first_only(cells, b, c1, c2)]
    # a group label has data rows after it; a footer (``Prepared by``) has none
    return not lone or all(len(row_cells(cells, b, c1, c2)) < 2 for b in range(lone[0], r2 + 1))


def _first_only(cells: Cells, r: int, c1: int, c2: int) -> bool:
    return (r, c1) in cells and all((r, c) not in cells for c in range(c1 + 1, c2 + 1))


#: A unit written on its own (``kg``, ``(USD)``, ``元``, ``万元``, ``%``): a header's units row.
_UNIT = re.compile(
    r"^[(（\[]?\s*(?:%|‰|kg|g|t|lbs?|oz|km|m|cm|mm|l|ml|pcs|units?|hrs?|h|mins?|days?|"
    r"m²|m2|㎡|[千万亿]?元|百万元|千克|公斤|克|吨|件|个|個|箱|米|千米|公里|小时|小時|天|人|次|台|套|"
    r"平方米|毫升|升)\s*[)）\]]?$",
    re.IGNORECASE,
)


def units_row(cells: Cells, r: int, box: Box) -> bool:
    """Whether row ``r``, under a header, gives the columns' units (``(USD) | (kg)``,
    ``元 | 千克``): every cell a unit or a currency on its own, over a value in the next row
    that has any."""
    _, c1, r2, c2 = box
    at = [c for c in range(c1, c2 + 1) if (r, c) in cells]
    nxt = next((b for b in range(r + 1, min(r2, r + 5) + 1) if row_cells(cells, b, c1, c2)), 0)
    if not at or not nxt:
        return False
    for c in at:
        text = str(cells[(r, c)].value).strip()
        if cells[(r, c)].kind is not CellKind.TEXT or (nxt, c) not in cells:
            return False
        if not (_UNIT.match(text) or currency_name(text.strip("()（）[]"))):
            return False
    return True
