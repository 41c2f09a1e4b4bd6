"""Render a report as Markdown and as an .xlsx (summary sheet, figures, charts), atomically.

Every number in the Markdown is a figure's display value next to its id, or part of a cell
reference; workbook-derived names are in code spans. Model text arrives already sanitised
(:mod:`workflows.excel_report.narrative`).

Spreadsheet cells: every string written (model text *and* workbook text, which is just as
untrusted) goes through :func:`cell_text`, which defuses formula injection (OWASP "CSV
Injection": a value beginning with ``=``, ``+``, ``-``, ``@``, tab or carriage return is
prefixed with ``'``) and removes the control characters openpyxl refuses. Charts are
openpyxl charts over a data sheet.

Files are written to temporary names in the output folder and moved into place
(:func:`orchestrator.outfiles.output_files`) only when both are complete, so a failure
leaves no partial report.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path, PurePath

from openpyxl import Workbook as XlsxWorkbook
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.styles import Font
from openpyxl.worksheet.worksheet import Worksheet
from pydantic import BaseModel, ConfigDict

from orchestrator.exceptions import UserError
from orchestrator.outfiles import check_writable, output_files
from orchestrator.spreadsheet import Workbook
from orchestrator.spreadsheet.cells import FORMULA_TRIGGERS as FORMULA_TRIGGERS
from orchestrator.spreadsheet.cells import cell_text as cell_text
from orchestrator.textnorm import visible_format
from workflows.excel_report.analysis import Analysis
from workflows.excel_report.checked import CheckedNarrative, figures_narrative, report_language
from workflows.excel_report.figures import Figure
from workflows.excel_report.narrative import SafeText


class RenderedFinding(BaseModel):
    """A finding as rendered: sanitised statement plus its cited figures."""

    model_config = ConfigDict(frozen=True)

    statement: SafeText
    figure_ids: list[str]


class ReportContent(BaseModel):
    """Everything a rendered report shows."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    workbook: Workbook
    analysis: Analysis
    title: SafeText | None = None
    summary: SafeText | None = None
    sections: list[tuple[SafeText, SafeText]] = []
    findings: list[RenderedFinding] = []
    notes: list[str] = []
    #: False for a figures-only report (``--no-model``, or the server was gone): no text in it
    #: comes from a model, and the report must not say that one found nothing.
    model_used: bool = True
    #: Why the model's narrative is missing although a model was asked (the server was lost
    #: mid-report): the report says so where the narrative would be. None otherwise.
    narrative_unavailable: str | None = None
    #: The claim check of the model's narrative (counts, dropped sentences); None for a
    #: figures-only report or when the server was lost.
    check: CheckedNarrative | None = None


def code_summary(content: ReportContent) -> list[SafeText]:
    """The figures-only narrative (written by code) when the report shows it: a report
    without a model, or one where no model sentence passed the claim check."""
    if content.model_used and (content.check is None or not content.check.figures_only):
        return []
    lang = report_language(content.workbook)
    return figures_narrative(content.analysis.figures, lang, _md_cell)


def check_lines(check: CheckedNarrative | None) -> list[str]:
    """What the claim checker did, for the report's banner (empty without a check). The
    counts are under Reader and workflow notes (the banner holds no number that is not a
    figure)."""
    if check is None:
        return []
    lines = [
        "> Claim check: each model sentence was checked against the figures; one that named "
        "the wrong thing, claimed a rank, direction or kind its figure does not have, or "
        "wrote a number that is no figure was dropped, and repeats were merged. How many "
        "were shown and dropped, and why, is under Reader and workflow notes.",
        "",
    ]
    if check.figures_only:
        lines += [
            "> No model sentence passed the claim check: the summary below is the "
            "figures-only narrative, written by code from the figures.",
            "",
        ]
    return lines


class ReportFiles(BaseModel):
    """Where the report went."""

    model_config = ConfigDict(frozen=True)

    markdown: Path
    xlsx: Path


#: Markdown and HTML control characters of text read from a workbook (sheet, table and column
#: names, cell values, the file name): each is backslash-escaped, which CommonMark renders as
#: the character itself, so such text cannot open a link, an image, a tag, a code span, a table
#: cell or an emphasis.
_MD_ESCAPE = re.compile(r"([\\`*_\[\]<>|#~&$])")


def _md_cell(text: str) -> str:
    """``text`` from a workbook (or any other untrusted source) as inert Markdown on one line.

    Example:
        >>> print(_md_cell("[x](javascript:alert(1)) <script>|`=1`"))
        \\[x\\](javascript:alert(1)) \\<script\\>\\|\\`=1\\`
    """
    return _MD_ESCAPE.sub(r"\\\1", " ".join(str(text).split()))


#: The control characters escaped in a figure's display value (computed by code; its unit can
#: come from the workbook): enough to keep it inert while ``$1,234.50 (12%)`` stays as written.
_MD_VALUE_ESCAPE = re.compile(r"([\\`\[\]<>|])")


def _md_value(text: str) -> str:
    """A figure's display value as inert Markdown: ``$`` and parentheses kept as written."""
    return _MD_VALUE_ESCAPE.sub(r"\\\1", " ".join(str(text).split()))


def _md_code(text: str) -> str:
    """``text`` (a sheet, table or file name) as a Markdown code span that it cannot close:
    the span's backtick run is longer than any inside it, and a code span shows its content
    literally (no link, tag or emphasis). ``|`` is escaped, as GFM tables need inside spans.

    Example:
        >>> print(_md_code("a`b|c"))
        ``a`b\\|c``
    """
    text = " ".join(str(text).split()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fence(lines: Sequence[str]) -> str:
    """A code fence longer than any run of backticks in ``lines`` (so none can close it)."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def _source(figure: Figure) -> str:
    p = figure.provenance
    text = f"{p.operation} of {p.cells}"
    if p.inputs:
        text += " from " + ", ".join(p.inputs)
    if p.filter:
        text += f" where {p.filter}"
    return text


def _reader_lines(workbook: Workbook, analysis: Analysis) -> list[str]:
    rows = {f.table_id: f for f in analysis.figures if f.provenance.operation == "count_rows"}
    lines = ["| sheet | table | range | header | data rows |", "|---|---|---|---|---|"]
    for sheet in workbook.sheets:
        for table in sheet.tables:
            if table.header_rows:
                first, last = table.columns[0].letter, table.columns[-1].letter
                span = f"{first}{table.header_rows[0]}:{last}{table.header_rows[-1]}"
                header = f"{_md_code(sheet.name)}!{span}"
            else:
                header = "none"
            count = rows.get(table.id)
            n_rows = f"{count.display} ({count.id})" if count else "not analysed"
            lines.append(
                f"| {_md_code(sheet.name)} | `{table.id}` {_md_code(table.name)} "
                f"({table.source}) | {_md_code(sheet.name)}!{table.ref} | {header} | "
                f"{n_rows} |"
            )
    return lines


_ISSUE_WORDS = {
    "error": "Excel error",
    "uncached_formula": "formula without a cached value (unknown)",
    "placeholder_value": "formula whose cached value is a placeholder: the workbook asks Excel "
    "to recalculate on open (unknown)",
}


def could_not_use(workbook: Workbook, analysis: Analysis) -> list[str]:
    """Every sheet, table, row, column and cell left out of the figures, with the reason.

    Sources: :attr:`Workbook.skipped` (hidden sheets, rows and columns; total rows; columns
    left as text), each table's unknown cells (:attr:`Table.issues`), and
    :attr:`Analysis.skipped` (limits, columns of unknown values, changes across gaps).
    """
    lines = [f"{s.what} {s.ref}: {s.reason}" for s in workbook.skipped]
    for table in workbook.tables():
        for issue in table.issues:
            lines.append(f"cell {issue.ref}: {_ISSUE_WORDS[issue.kind]} `{issue.detail[:80]}`")
        if table.issue_count > len(table.issues):
            lines.append(
                f"table {table.id}: {table.issue_count - len(table.issues):,} more unknown "
                "cells (not listed)"
            )
    lines += [f"{s.what} {s.ref}: {s.reason}" for s in analysis.skipped]
    return lines


def render_markdown(content: ReportContent) -> str:
    """The report as Markdown (see the module docstring for what its numbers are)."""
    wb, analysis = content.workbook, content.analysis
    out = [f"# Report on {_md_code(wb.filename)}", ""]
    if content.title is not None and content.title.markdown:
        out += [f"*{content.title.markdown}*", ""]
    out += _md_preface(content)
    out += check_lines(content.check)
    out += _md_summary(content)
    for heading, body in content.sections:
        out += [f"## {heading.markdown or 'Section'}", "", f"*{body.markdown}*", ""]
    out += ["## Key findings", "", *_md_findings(content), ""]
    out += ["## What the reader found", "", *_reader_lines(wb, analysis), ""]
    out += ["## Figures", "", "| id | figure | value | source |", "|---|---|---|---|"]
    for figure in analysis.figures:
        out.append(
            f"| {figure.id} | {_md_cell(figure.label)} | {_md_value(figure.display)} | "
            f"{_md_cell(_source(figure))} |"
        )
    out.append("")
    unused = could_not_use(wb, analysis)
    out += ["## What this report could not use", ""]
    out += [f"- {_md_cell(line)}" for line in unused] or ["- Nothing: every cell was used."]
    out.append("")
    out += _md_notes(content)
    return visible_format("\n".join(out))  # a bidi override in a sheet name reverses no line


def _md_preface(content: ReportContent) -> list[str]:
    """The quoted note under the title: who wrote what (or that the narrative is missing)."""
    if content.narrative_unavailable is not None:
        return [
            "> **Narrative unavailable**: the model server was lost while this report was "
            f"written ({_md_cell(content.narrative_unavailable)}). Every number below is "
            "computed by code from the workbook and shown with its figure id; the Figures "
            "table names the cells or computation behind each. Run the report again for the "
            "narrative.",
            "",
        ]
    if content.model_used:
        return [
            "> Every number below is computed by code from the workbook and shown with its "
            "figure id; the Figures table names the cells or computation behind each. Text in "
            "italics under Summary, the sections and Key findings is written by the model; "
            "numbers it wrote that are not figures were removed.",
            "",
        ]
    return [
        "> Figures only: no model was called for this report. Every number below is "
        "computed by code from the workbook and shown with its figure id; the Figures "
        "table names the cells or computation behind each.",
        "",
    ]


def _md_summary(content: ReportContent) -> list[str]:
    """The Summary section: the model's, else code's from the figures (none without either)."""
    code = code_summary(content)
    if content.summary is not None and content.summary.markdown:
        return ["## Summary", "", f"*{content.summary.markdown}*", ""]
    if code:
        text = " ".join(t.markdown for t in code)
        return ["## Summary", "", f"Written by code from the figures: {text}", ""]
    if content.narrative_unavailable is not None:
        return ["## Summary", "", "Narrative unavailable: the model server was lost.", ""]
    return []


def _md_findings(content: ReportContent) -> list[str]:
    """The Key findings list: each model finding with the figures it cites, or why none."""
    if not content.model_used:
        return ["- None: findings are written by the model, and no model was called."]
    if content.narrative_unavailable is not None and not content.findings:
        return ["- Unavailable: the model server was lost before it gave its findings."]
    if content.findings:
        figures = content.analysis.by_id()
        out = []
        for finding in content.findings:
            cites = "; ".join(
                f"{_md_value(figures[fid].display)} ({fid})"
                for fid in finding.figure_ids
                if fid in figures
            )
            out.append(f"- *{finding.statement.markdown}* — based on {cites}")
        return out
    if content.check is not None and content.check.dropped:
        return ["- None: no model finding passed the claim check."]
    return ["- The model gave no finding that cites existing figures."]


def _md_notes(content: ReportContent) -> list[str]:
    """Values stored as text that were read as numbers or dates, and the reader's and the
    workflow's notes (each section only when it has lines)."""
    wb = content.workbook
    out: list[str] = []
    read_as = [
        f"{_md_code(col.name)} ({_md_cell(col.range)}): {_md_cell(col.note)}"
        for table in wb.tables()
        for col in table.columns
        if col.note
    ]
    if read_as:
        out += ["## Values stored as text, read as numbers or dates", ""]
        out += [f"- {line}" for line in read_as] + [""]
    notes = [*wb.warnings, *(w for s in wb.sheets for w in s.warnings), *content.notes]
    if notes:
        lines = [" ".join(str(n).split()) for n in notes]
        fence = _fence(lines)
        out += ["## Reader and workflow notes", "", f"{fence}text", *lines, fence, ""]
    return out


def _chart_series(analysis: Analysis) -> list[tuple[str, list[Figure], str]]:
    """(title, figures, kind) for each group-by and period series worth a chart."""
    groups: dict[tuple[str, str], list[Figure]] = defaultdict(list)
    for figure in analysis.figures:
        op: str = figure.provenance.operation
        if op in ("group_sum", "group_count", "period_sum", "period_count"):
            key = figure.provenance.cells + op
            groups[(key, op)].append(figure)
    series = []
    for (_, op), figs in groups.items():
        if len(figs) < 2:
            continue
        column = figs[0].column or ""
        if op.startswith("group"):
            dim = (figs[0].provenance.filter or "").split(" = ")[0].strip("`")
            title = f"{column} by {dim}" if op == "group_sum" else f"rows by {dim}"
        else:
            title = f"{column} per period"
        series.append((title, figs, "bar" if op.startswith("group") else "line"))
    return series[:4]


def _category(figure: Figure) -> str:
    filt = figure.provenance.filter or figure.label
    match = re.search(r"`([^`]*)`\s*$", filt)
    return match.group(1) if match else filt


def _cell_text(text: str) -> str:
    """:func:`cell_text` of text from the workbook or the model, with format characters shown
    as ``<U+202E>`` (:func:`~orchestrator.textnorm.visible_format`; tester15 T15-6)."""
    return cell_text(visible_format(text))


def build_xlsx(content: ReportContent) -> XlsxWorkbook:
    """The report workbook: ``Summary``, ``Figures``, ``Chart data`` with charts."""
    wb = XlsxWorkbook()
    summary = wb.active
    assert isinstance(summary, Worksheet)  # a new workbook holds one worksheet, active
    summary.title = "Summary"
    bold = Font(bold=True)
    for r, (key, value) in enumerate(_summary_rows(content), start=1):
        summary.cell(r, 1, _cell_text(key)).font = bold
        summary.cell(r, 2, _cell_text(value))
    summary.column_dimensions["A"].width = 22
    summary.column_dimensions["B"].width = 100
    _figures_sheet(wb.create_sheet("Figures"), content.analysis, bold)
    series = _chart_series(content.analysis)
    if series:
        _chart_sheets(wb, series, bold)
    return wb


def _summary_rows(content: ReportContent) -> list[tuple[str, str]]:
    """The Summary sheet's (key, value) rows: title, summary, claim check, narrative,
    sections and findings."""
    rows: list[tuple[str, str]] = [("Report on", content.workbook.filename)]
    if content.title is not None:
        rows.append(("Title (model)", content.title.plain))
    if content.summary is not None:
        rows.append(("Summary (model)", content.summary.plain))
    elif code := code_summary(content):
        rows.append(("Summary (code)", " ".join(t.plain for t in code)))
    if content.check is not None:
        check = content.check
        rows.append(
            (
                "Claim check",
                f"{check.kept} of {check.sentences} model sentences shown, "
                f"{len(check.dropped)} dropped, {check.merged} repeats merged"
                + ("; figures-only narrative shown" if check.figures_only else ""),
            )
        )
    if content.narrative_unavailable is not None:
        rows.append(
            (
                "Narrative",
                f"unavailable: the model server was lost ({content.narrative_unavailable})",
            )
        )
    for heading, body in content.sections:
        rows.append((heading.plain or "Section", body.plain))
    figures = content.analysis.by_id()
    for i, finding in enumerate(content.findings, start=1):
        cites = "; ".join(f"{figures[f].display} ({f})" for f in finding.figure_ids if f in figures)
        rows.append((f"Finding {i} (model)", f"{finding.statement.plain} — based on {cites}"))
    return rows


def _figures_sheet(sheet: Worksheet, analysis: Analysis, bold: Font) -> None:
    """One row per figure: id, label, value (number-formatted), unit and source."""
    for c, head in enumerate(("id", "figure", "value", "unit", "source"), start=1):
        sheet.cell(1, c, head).font = bold
    for r, figure in enumerate(analysis.figures, start=2):
        sheet.cell(r, 1, figure.id)
        sheet.cell(r, 2, _cell_text(figure.label))
        value = sheet.cell(
            r, 3, figure.value if not isinstance(figure.value, str) else _cell_text(figure.value)
        )
        if figure.unit == "%":
            value.number_format = "0.0%"
        elif not isinstance(figure.value, str):
            value.number_format = "#,##0.00" if isinstance(figure.value, float) else "#,##0"
        sheet.cell(r, 4, _cell_text(figure.unit or ""))
        sheet.cell(r, 5, _cell_text(_source(figure)))
    for col, width in zip("ABCDE", (6, 60, 18, 6, 70), strict=True):
        sheet.column_dimensions[col].width = width


def _chart_sheets(
    wb: XlsxWorkbook, series: list[tuple[str, list[Figure], str]], bold: Font
) -> None:
    """``Chart data`` (each series' categories and values) and ``Charts`` (one chart each)."""
    data = wb.create_sheet("Chart data")
    charts = wb.create_sheet("Charts")
    row = 1
    for k, (title, figs, kind) in enumerate(series):
        data.cell(row, 1, _cell_text(title)).font = bold
        data.cell(row, 2, "value")
        for j, figure in enumerate(figs, start=1):
            data.cell(row + j, 1, _cell_text(_category(figure)))
            data.cell(row + j, 2, figure.value)
        chart = BarChart() if kind == "bar" else LineChart()
        chart.title = _cell_text(title)[:200]
        chart.legend = None
        values = Reference(data, min_col=2, min_row=row, max_row=row + len(figs))
        labels = Reference(data, min_col=1, min_row=row + 1, max_row=row + len(figs))
        chart.add_data(values, titles_from_data=True)
        chart.set_categories(labels)
        charts.add_chart(chart, f"A{1 + 16 * k}")
        row += len(figs) + 2


def _safe_stem(name: str) -> str:
    stem = re.sub(r"[^\w\-.]+", "_", Path(name).stem, flags=re.UNICODE).strip("._")
    return stem[:80] or "workbook"


def report_stem(workbook_path: str) -> str:
    """The name the report files of the workbook at ``workbook_path`` share:
    ``<stem>.<8 hex digits>``, the file's stem (made safe for a file name) and the start of the
    SHA-1 of its absolute path. Two workbooks of one name in different folders (``q1/sales.xlsx``
    and ``q2/sales.xlsx``, a batch over a folder tree) get reports of their own, and a rerun on
    the same file writes over its own report, not a new one."""
    digest = hashlib.sha1(os.path.abspath(workbook_path).encode("utf-8", "surrogatepass"))
    return f"{_safe_stem(PurePath(workbook_path).name)}.{digest.hexdigest()[:8]}"


def report_folder(out_dir: Path) -> Path:
    """``out_dir``, created when missing, once a file can be made in it (the CLI asks once the
    workbook reads, before it starts a model server; :func:`write_report_files` again).

    Raises:
        UserError: It cannot be created (a file in its path, no permission, ``/proc``) or
            holds no new file: one line naming the folder and the reason.
    """
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"cannot make the report folder {out_dir}: {exc.strerror or exc}; choose another "
            "folder (--out)"
        ) from exc
    check_writable(out_dir / "report.md")
    return out_dir


def write_report_files(content: ReportContent, out_dir: Path) -> ReportFiles:
    """Write ``<stem>.<hash>.report.md`` and ``<stem>.<hash>.report.xlsx`` into ``out_dir``
    atomically (names: :func:`report_stem`).

    Raises:
        UserError: The folder cannot be made (:func:`report_folder`), or a file cannot be
            written (a full disk): ``cannot write PATH: reason``; no partial file is left
            (:func:`orchestrator.outfiles.output_files`).
    """
    report_folder(out_dir)
    stem = report_stem(content.workbook.path)
    targets = (out_dir / f"{stem}.report.md", out_dir / f"{stem}.report.xlsx")
    markdown = render_markdown(content)
    with output_files(*targets) as temps:  # openpyxl's own temp files fail in here too
        book = io.BytesIO()  # a zip that fails half-way on disk complains again when collected
        build_xlsx(content).save(book)
        temps[0].write_text(markdown, encoding="utf-8")
        temps[1].write_bytes(book.getvalue())
    return ReportFiles(markdown=targets[0], xlsx=targets[1])


def figure_ids_in(texts: Sequence[SafeText]) -> list[str]:
    """All figure ids cited by ``texts``, in order, without repeats."""
    return list(dict.fromkeys(fid for text in texts for fid in text.cited))
