"""A compact, token-budgeted text encoding of a workbook for the model's prompt.

In the spirit of SpreadsheetLLM's SheetCompressor (Tian et al., 2024, arXiv:2407.09025):
instead of pasting cells, the encoding keeps

* **structural anchors**: each table's range, header and first data rows;
* an **inverted index** for low-cardinality text columns: the distinct values once, not per
  row;
* **format aggregation**: a column is described by its type, unit and range, and its numbers
  appear only as computed figures (``F12 = $2,297,200.86``), never cell by cell.

Lines are added in priority order (figures before sample rows) while the running token count
stays within the budget; the result is measured again as a whole and trimmed if the count
exceeds it. So ``EncodedWorkbook.tokens <= budget`` always holds for the counter used.

Token counts come from the served model's tokenizer when its ``tokenizer.json`` is available
(:class:`TokenizerCounter`), otherwise from :class:`ByteCounter`: the UTF-8 byte length, an
upper bound for any byte-level BPE (every token covers at least one byte), so the estimate
can over-count but never under-count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.spreadsheet import ColumnType, Workbook
from workflows.excel_report.analysis import Analysis
from workflows.excel_report.figures import format_value


class TokenCounter(Protocol):
    """Counts the tokens of a text."""

    name: str

    def count(self, text: str) -> int: ...


class ByteCounter:
    """Upper bound for byte-level BPE tokenizers: one token per UTF-8 byte at most."""

    name = "utf8-bytes-upper-bound"

    def count(self, text: str) -> int:
        return len(text.encode("utf-8"))


class TokenizerCounter:
    """The served model's own tokenizer (``tokenizers`` library, ``tokenizer.json``).

    Raises:
        FileNotFoundError: No ``tokenizer.json`` at ``path``.
    """

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        file = path / "tokenizer.json" if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(f"no tokenizer.json at {path}")
        self._tok = Tokenizer.from_file(str(file))
        self.name = f"tokenizer:{file.parent.name}"

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


def default_counter(checkpoint_dir: Path | None) -> TokenCounter:
    """The checkpoint's tokenizer when present, else :class:`ByteCounter`."""
    if checkpoint_dir is not None:
        try:
            return TokenizerCounter(checkpoint_dir)
        except (FileNotFoundError, OSError, ValueError):
            pass
    return ByteCounter()


class EncodedWorkbook(BaseModel):
    """The prompt text for one workbook.

    Attributes:
        text: The encoding.
        tokens: Its token count with ``counter``.
        budget: The budget it was built for.
        counter: Which counter measured it.
        lines_left_out: Lines that did not fit.
        figure_ids: Figures that made it into the text (the model may only cite these).
    """

    model_config = ConfigDict(frozen=True)

    text: str
    tokens: int = Field(ge=0)
    budget: int = Field(ge=1)
    counter: str
    lines_left_out: int = Field(0, ge=0)
    figure_ids: list[str]


def _clip(value: object, width: int = 24) -> str:
    text = " ".join(str(value).split()) if value is not None else ""
    return text if len(text) <= width else text[: width - 1] + "…"


def _lines(workbook: Workbook, analysis: Analysis) -> list[tuple[int, str, str | None]]:
    """``(priority, line, figure id)``; lower priority numbers are kept first."""
    out: list[tuple[int, str, str | None]] = []
    out.append((0, f"workbook {workbook.filename}: {len(workbook.sheets)} sheets read", None))
    figures_by_table: dict[str, list] = {}
    for figure in analysis.figures:
        figures_by_table.setdefault(figure.table_id, []).append(figure)
    analysed = {p.table_id for p in analysis.profiles}
    for table in workbook.tables():
        if table.id not in analysed:
            continue
        out.append((0, f"## table {table.id} '{table.name}' {table.sheet}!{table.ref}", None))
        cols = []
        for col in table.columns:
            desc = f"{col.letter}:{_clip(col.name, 20)}[{col.type.value}"
            desc += f" {col.unit}]" if col.unit else "]"
            cols.append(desc)
        out.append((1, "columns: " + "; ".join(cols), None))
        for col in table.columns:
            if col.type is not ColumnType.TEXT:
                continue
            distinct = sorted({str(v).strip() for v in col.values if v is not None})
            if 1 < len(distinct) <= 12:
                out.append(
                    (
                        3,
                        f"values of {col.letter}: " + " | ".join(_clip(v, 20) for v in distinct),
                        None,
                    )
                )
        for figure in figures_by_table.get(table.id, []):
            priority = 0 if figure.provenance.operation in ("count_rows", "sum") else 2
            out.append((priority, f"{figure.id} {figure.label} = {figure.display}", figure.id))
        for k, row in enumerate(table.rows[:3]):
            cells = [
                _clip(format_value(v, c.unit) if (v := c.values[k]) is not None else "")
                for c in table.columns
            ]
            out.append((4, f"row {row}: " + " | ".join(cells), None))
    return out


def encode_workbook(
    workbook: Workbook, analysis: Analysis, budget: int, counter: TokenCounter | None = None
) -> EncodedWorkbook:
    """Encode ``workbook`` and its figures in at most ``budget`` tokens.

    Args:
        workbook: The reader's result.
        analysis: Its figures.
        budget: Token budget (>= 16).
        counter: Token counter; :class:`ByteCounter` when None.

    Returns:
        The encoding; ``tokens <= budget``.

    Raises:
        ValueError: ``budget`` under 16.
    """
    if budget < 16:
        raise ValueError(f"token budget must be at least 16, got {budget}")
    counter = counter or ByteCounter()
    candidates = _lines(workbook, analysis)
    order = sorted(range(len(candidates)), key=lambda i: (candidates[i][0], i))
    keep: set[int] = set()
    used = 0
    reserve = counter.count("[999 lines left out to fit the token budget]\n")
    for i in order:
        cost = counter.count(candidates[i][1]) + 1
        if used + cost + reserve <= budget:
            keep.add(i)
            used += cost
    while True:
        kept = [candidates[i] for i in sorted(keep)]
        left_out = len(candidates) - len(kept)
        text = "\n".join(line for _, line, _ in kept)
        if left_out:
            text += f"\n[{left_out} lines left out to fit the token budget]"
        tokens = counter.count(text)
        if tokens <= budget or not keep:
            break
        keep.discard(max(keep, key=lambda i: (candidates[i][0], i)))
    return EncodedWorkbook(
        text=text,
        tokens=tokens,
        budget=budget,
        counter=counter.name,
        lines_left_out=left_out,
        figure_ids=[fid for _, _, fid in kept if fid is not None],
    )
