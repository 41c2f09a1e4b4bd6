"""``orchestrator report FILE``: a spreadsheet in, a Markdown + .xlsx report out. The
workflow's own command, mounted on ``orchestrator`` through its ``moe_orchestrator.commands``
entry point (``pyproject.toml``), which names :func:`report`.

The file is read first, before any server is started, so a bad file fails in seconds with the
reader's error (exit code 2). ``--inspect`` prints what the reader found and stops there.
Otherwise the request goes through the classifier and the ``excel_report`` workflow on a
running vLLM server (``--server-url``), or on a co-hosted one started like ``orchestrator run``
does unless ``--no-launch``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from orchestrator.batch.files import file_problem
from orchestrator.cli.common import (
    EncodingOption,
    NoLaunchOption,
    ServerUrlOption,
    TelemetryDbOption,
    console,
    err,
    fail,
    served_settings,
    settings_from_flags,
    working,
)
from orchestrator.cli.console import request_lines
from orchestrator.cli.storage import check_storage
from orchestrator.config import Settings
from orchestrator.core.runtime import configured_orchestrator, make_client
from orchestrator.exceptions import OrchestratorError, UserError
from orchestrator.request import Attachment, Request
from orchestrator.spreadsheet import SpreadsheetError, Table, Workbook, read_workbook
from orchestrator.telemetry import TelemetryStore
from workflows.excel_report import ExcelReportWorkflow, ReportConfig
from workflows.excel_report.offline import figures_only_report
from workflows.excel_report.render import report_folder

#: Columns listed per table by ``--inspect``; the rest are counted ("... +N more of M").
INSPECT_COLUMNS = 40
#: Empty sheets listed one by one; the rest are counted in one row.
INSPECT_EMPTY_SHEETS = 10
#: Text blocks listed per sheet; the rest are counted in one row.
INSPECT_TEXT_BLOCKS = 3


def _cut(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, with ``…`` when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _columns(table: Table) -> str:
    """``name:type[unit]`` of the first :data:`INSPECT_COLUMNS` columns, then how many more."""
    shown = [
        _cut(c.name, 40) + f":{c.type.value}" + (f"[{c.unit}]" if c.unit else "")
        for c in table.columns[:INSPECT_COLUMNS]
    ]
    more = len(table.columns) - len(shown)
    if more > 0:
        shown.append(f"… +{more:,} more ({len(table.columns):,} columns)")
    return ", ".join(shown)


def reader_table(wb: Workbook) -> RichTable:
    """What the reader found: one row per table or text block; a hidden sheet that was not
    read says so (it is not called empty), and every list that is cut says how much is left
    out."""
    table = RichTable(
        title=f"{escape(wb.filename)}: {len(wb.sheets)} of {wb.sheets_total} sheets read, "
        f"{wb.format}, {wb.date_system} date system, {wb.read_seconds:.2f} s"
    )
    for name in ("sheet", "what", "range", "header rows", "data rows", "columns (type, unit)"):
        table.add_column(name)
    empty_listed = empty_more = 0
    for sheet in wb.sheets:
        if sheet.state != "visible" and not wb.include_hidden:
            what = "very hidden" if sheet.state == "veryHidden" else "hidden"
            table.add_row(
                escape(sheet.name), f"{what}, not read", "", "", "", "--include-hidden reads it"
            )
            continue
        if not sheet.tables and not sheet.text_blocks:
            if empty_listed < INSPECT_EMPTY_SHEETS:
                table.add_row(escape(sheet.name), "empty", "", "", "", "")
                empty_listed += 1
            else:
                empty_more += 1
        for t in sheet.tables:
            table.add_row(
                escape(sheet.name),
                f"{t.id} {t.source}",
                t.ref,
                ",".join(map(str, t.header_rows)) or "none",
                f"{t.n_rows:,}",
                escape(_columns(t)),
            )
        for block in sheet.text_blocks[:INSPECT_TEXT_BLOCKS]:
            table.add_row(
                escape(sheet.name),
                "text",
                block.ref,
                "",
                "",
                escape(_cut(block.lines[0] if block.lines else "", 80)),
            )
        if len(sheet.text_blocks) > INSPECT_TEXT_BLOCKS:
            more = len(sheet.text_blocks) - INSPECT_TEXT_BLOCKS
            table.add_row(escape(sheet.name), f"… +{more:,} more text blocks", "", "", "", "")
    if empty_more:
        table.add_row("…", f"+{empty_more:,} more empty sheets", "", "", "", "")
    return table


def report(
    file: Annotated[Path, typer.Argument(help="Spreadsheet (.xlsx, .xlsm, .xls, .csv, .tsv).")],
    out: Annotated[Path | None, typer.Option(help="Folder for the report files.")] = None,
    server_url: ServerUrlOption = None,
    no_launch: NoLaunchOption = False,
    inspect: Annotated[
        bool, typer.Option(help="Only show what the reader found; no model call.")
    ] = False,
    database_url: TelemetryDbOption = None,
    no_model: Annotated[
        bool,
        typer.Option(
            "--no-model",
            help="Figures-only report without a server: fast and deterministic.",
        ),
    ] = False,
    include_hidden: Annotated[
        bool,
        typer.Option("--include-hidden", help="Read hidden rows, columns and sheets as data."),
    ] = False,
    encoding: EncodingOption = None,
) -> None:
    """Turn a spreadsheet into a narrative report (Markdown + .xlsx with charts)."""
    settings = settings_from_flags(server_url=server_url, database_url=database_url)
    problem = file_problem(file)
    if problem is not None:
        raise fail(f"{file} {problem}; pass a spreadsheet file (.xlsx, .xlsm, .xls, .csv, .tsv)", 2)
    if out is not None and out.exists() and not out.is_dir():
        raise fail(
            f"--out {out} is a file, not a folder; pass a folder for the report files (it is "
            "created when missing)",
            2,
        )
    config = ReportConfig.from_settings(settings, **({"output_dir": out} if out else {}))
    # the file named on the command line is the operator's choice: its folder is allowed
    config = config.model_copy(
        update={"attachment_dirs": (*config.attachment_dirs, file.resolve().parent)}
    )
    if include_hidden or encoding:
        limits: dict[str, object] = {
            "include_hidden": include_hidden or config.limits.include_hidden
        }
        limits |= {"encoding": encoding} if encoding else {}
        config = config.model_copy(update={"limits": config.limits.model_copy(update=limits)})
    try:
        with working(f"reading {file}"):
            wb = read_workbook(file, config.limits)
    except SpreadsheetError as exc:
        raise fail(exc, 2) from exc
    console.print(reader_table(wb))
    for note in [*wb.warnings, *(w for s in wb.sheets for w in s.warnings)]:
        console.print(f"[yellow]note:[/] {escape(note)}")
    if inspect:
        return
    try:  # where the files go, before a server is asked (made once the workbook reads)
        report_folder(config.output_dir)
    except UserError as exc:
        raise fail(exc, 2) from exc
    if no_model:
        try:
            analysis, files = figures_only_report(wb, config.output_dir, config.analysis)
        except OrchestratorError as exc:  # a full disk: "cannot write ...", no partial file
            raise fail(exc, 2) from exc
        console.print(f"report: {files.markdown}\n        {files.xlsx}")
        console.print(f"{len(analysis.figures)} figures, no model (--no-model)")
        return
    check_storage(settings)  # a damaged or locked telemetry file: one line, before the server
    starting = f"starting co-hosted vLLM; log: {settings.server_log}"
    with served_settings(
        settings, server_url=server_url, no_launch=no_launch, starting=starting
    ) as served:
        workflow = ExcelReportWorkflow(config)
        workflow.preload(wb)  # the file was read above: the workflow does not read it again
        code = asyncio.run(_run(served, workflow, file))
    raise typer.Exit(code)


async def _run(settings: Settings, workflow: ExcelReportWorkflow, file: Path) -> int:
    """Send one report request for ``file`` through the classifier and ``workflow``; print
    where the report went. 1 when no report was written, else 0."""
    store = TelemetryStore(settings.database_url)
    client = make_client(settings)
    try:
        await client.check()
        orch = configured_orchestrator(settings, client, store, [workflow])
        text = f"Summarise the attached spreadsheet {file.name} as a report"
        request = Request(text=text, attachments=(Attachment(filename=file.name, path=str(file)),))
        outcome = await orch.handle(request)
    finally:
        await client.aclose()
        store.close()
    console.print(request_lines(outcome, text, str(file)))
    result = outcome.result or {}
    if outcome.status != "succeeded" or result.get("status") != "succeeded":
        err.print(f"[bold red]no report:[/] {escape(outcome.error or outcome.headline)}")
        return 1
    console.print(f"report: {result['markdown']}\n        {result['xlsx']}")
    if result.get("narrative_unavailable"):
        err.print(
            "[yellow]narrative unavailable:[/] the model server was lost "
            f"({escape(str(result['narrative_unavailable']))}); the figures are complete"
        )
    console.print(
        f"prompt tokens per call: {result['prompt_tokens']} (encoding "
        f"{result['encoding_tokens']} of a {result['token_budget']}-token budget)"
    )
    return 0
