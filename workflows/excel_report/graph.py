"""The excel_report workflow: a spreadsheet in, a verifiable narrative report out.

::

    START → read → analyse → interpret → write_report → render → END
              └──(bad file)──────────────────────────────→ END

* ``read``: :func:`orchestrator.spreadsheet.read_workbook` on the request's first spreadsheet
  attachment. A bad file ends the run with ``status="rejected"`` and the reader's error
  (naming the file and what is wrong); nothing is written.
* ``analyse``: figures computed in Python (:mod:`~workflows.excel_report.analysis`) and a
  token-budgeted encoding (:mod:`~workflows.excel_report.encoding`).
* ``interpret`` (model, JSON schema): key findings citing figure ids; findings citing ids
  that do not exist are dropped.
* ``write_report`` (model, JSON schema): title, summary and sections around the figures.
* ``render``: every model sentence checked against the figures first
  (:mod:`~workflows.excel_report.checked`, :mod:`~workflows.excel_report.claims`): a false or
  unsupported one is dropped with its reason, repeats merged, and when none survives the
  figures-only narrative (written by code) stands; then Markdown + .xlsx written atomically
  (:mod:`~workflows.excel_report.render`).

**The server lost mid-report.** When a model call finds the server gone (unreachable, the
connection cut mid-answer, an HTTP error of a dying server), the figures are still computed
and rendered: the report is written with its narrative marked unavailable
(``ExcelReportResult.narrative_unavailable``, a banner and the Summary of the Markdown, a row
of the .xlsx), and the request succeeds rather than losing the file's figures.

Both model calls go through the request's gateway, so each is recorded with its prompt
tokens, experts and router confidence. Model output is data: parsed as JSON, never executed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.config import Settings
from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.exceptions import ModelCallError, ServerUnavailableError, UserError
from orchestrator.request import Request, resolve_attachment_path
from orchestrator.spreadsheet import ReadLimits, SpreadsheetError, Workbook, read_workbook
from orchestrator.spreadsheet.sniff import EXTENSIONS
from skills import CallOptions, Interpretation, ReportDraft, interpret_data, write_report
from workflows.excel_report.analysis import Analysis, AnalysisConfig, analyse
from workflows.excel_report.checked import (
    CheckedNarrative,
    DroppedSentence,
    ShownSentence,
    check_narrative,
    workbook_names,
)
from workflows.excel_report.encoding import (
    EncodedWorkbook,
    TokenCounter,
    default_counter,
    encode_workbook,
)
from workflows.excel_report.render import RenderedFinding, ReportContent, write_report_files
from workflows.excel_report.route import ROUTE


def default_attachment_dirs() -> tuple[Path, ...]:
    """Folders a report may read attachments from by default: the working folder (uploads
    and ``runs/`` live under it), the data folder (``ORCH_DATA_DIR``) and the system's
    temporary folder (where chat front ends and tests store uploads)."""
    settings = Settings()
    return (Path.cwd(), Path(settings.data_dir), Path(tempfile.gettempdir()))


class ReportConfig(BaseModel):
    """Knobs of the workflow.

    Attributes:
        output_dir: Where reports are written.
        token_budget: Tokens for the workbook encoding in the ``interpret`` prompt.
        facts_budget: Tokens for the facts in the ``write_report`` prompt.
        interpret_max_tokens: Completion limit of ``interpret``.
        write_max_tokens: Completion limit of ``write_report``.
        limits: Reading limits.
        analysis: Analysis bounds.
        attachment_dirs: The only folders an attachment is read from (symlinks resolved:
            :func:`~orchestrator.request.resolve_attachment_path`); any other path a request
            carries (``../../etc/passwd``, ``/proc/self/environ``, a link out of an upload
            folder) is rejected without being opened. :func:`default_attachment_dirs` when
            not given.
    """

    model_config = ConfigDict(frozen=True)

    output_dir: Path = Path("runs/reports")
    token_budget: int = Field(900, ge=64)
    facts_budget: int = Field(600, ge=64)
    interpret_max_tokens: int = Field(640, ge=16)
    write_max_tokens: int = Field(800, ge=16)
    limits: ReadLimits = ReadLimits()
    analysis: AnalysisConfig = AnalysisConfig()
    attachment_dirs: tuple[Path, ...] = Field(default_factory=default_attachment_dirs)

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> ReportConfig:
        """Defaults from :class:`Settings` (``ORCH_REPORT_*``, ``ORCH_SPREADSHEET_*``)."""
        values: dict[str, Any] = {}
        for field, setting in (
            ("output_dir", "report_dir"),
            ("token_budget", "report_token_budget"),
        ):
            if hasattr(settings, setting):
                values[field] = getattr(settings, setting)
        limits = {}
        for field, setting in (
            ("max_rows", "spreadsheet_max_rows"),
            ("max_sheets", "spreadsheet_max_sheets"),
        ):
            if hasattr(settings, setting):
                limits[field] = getattr(settings, setting)
        if limits:
            values["limits"] = ReadLimits(**limits)
        if settings.attachment_dirs:  # ORCH_ATTACHMENT_DIRS: added to the built-in folders
            values["attachment_dirs"] = (*default_attachment_dirs(), *settings.attachment_dirs)
        values.update(overrides)
        return cls(**values)


class SheetSummary(BaseModel):
    """What the reader found on one sheet (for the console and the result)."""

    model_config = ConfigDict(frozen=True)

    name: str
    tables: list[str]
    header_rows: list[list[int]]
    text_blocks: int


class ExcelReportResult(BaseModel):
    """The workflow's output.

    Attributes:
        status: ``succeeded`` or ``rejected`` (bad input; see ``error``).
        file: The spreadsheet read.
        error: Why it was rejected.
        sheets: Per sheet: tables (``T1 A1:U9995``), header rows, text blocks.
        figures: Figures computed.
        findings: Findings kept (sanitised statement, cited ids).
        dropped_findings: Findings dropped for citing unknown ids, with the reason.
        numbers_removed: Numbers the model wrote that were not figures (their sentences
            were dropped).
        model_sentences: Model sentences checked (title, summary, sections, findings).
        model_sentences_kept: Of them, shown in the report.
        dropped_sentences: Those dropped by the claim checker: where, the model's text (data,
            never shown unescaped) and the reason.
        shown_sentences: Those shown (plain text with the values, and their figure ids).
        figures_only_narrative: True when no model sentence survived and the report shows
            the narrative written by code from the figures.
        encoding_tokens: Tokens of the workbook encoding, and its budget.
        prompt_tokens: Prompt tokens per model call node, as the server counted them.
        markdown: Path of the Markdown report.
        xlsx: Path of the .xlsx report.
        narrative_unavailable: Why the model's narrative is missing when the model server
            was lost mid-report (the figures are complete and the report says so); None when
            the narrative was written.
    """

    model_config = ConfigDict(frozen=True)

    status: Literal["succeeded", "rejected"]
    file: str | None = None
    error: str | None = None
    sheets: list[SheetSummary] = []
    figures: int = 0
    findings: list[RenderedFinding] = []
    dropped_findings: list[str] = []
    numbers_removed: list[str] = []
    model_sentences: int = 0
    model_sentences_kept: int = 0
    dropped_sentences: list[DroppedSentence] = []
    shown_sentences: list[ShownSentence] = []
    figures_only_narrative: bool = False
    encoding_tokens: int | None = None
    token_budget: int | None = None
    prompt_tokens: dict[str, int] = {}
    markdown: str | None = None
    xlsx: str | None = None
    narrative_unavailable: str | None = None


class ExcelReportState(TypedDict, total=False):
    """Graph state."""

    path: str | None
    error: str | None
    workbook: Workbook
    analysis: Analysis
    encoding: EncodedWorkbook
    interpretation: Interpretation
    draft: ReportDraft
    result: ExcelReportResult
    fallback: str | None


#: Media types of spreadsheets (IANA), for uploads stored without an extension.
SPREADSHEET_MEDIA_TYPES = frozenset(
    {
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.ms-excel.sheet.macroenabled.12",
        "application/vnd.ms-excel",
        "text/csv",
        "text/tab-separated-values",
    }
)


def spreadsheet_attachment(request: Request) -> str | None:
    """Path of the request's first spreadsheet attachment, if any: a spreadsheet extension,
    a spreadsheet media type, or no extension at all (chat front ends store uploads as
    ``upload_7f3a9c``; the reader then decides by the file's bytes)."""
    for attachment in request.attachments:
        if not attachment.path:
            continue
        media = (attachment.media_type or "").split(";")[0].strip().lower()
        if (
            attachment.extension in EXTENSIONS
            or media in SPREADSHEET_MEDIA_TYPES
            or not attachment.extension
        ):
            return attachment.path
    return None


def _facts(
    analysis: Analysis, interpretation: Interpretation, counter: TokenCounter, budget: int
) -> tuple[str, list[str]]:
    """Figures cited by findings first, then the rest, within ``budget`` tokens."""
    by_id = analysis.by_id()
    cited = [fid for f in interpretation.findings for fid in f.figure_ids]
    order = list(dict.fromkeys([*cited, *by_id]))
    lines: list[str] = []
    ids: list[str] = []
    used = 0
    for finding in interpretation.findings:
        line = "finding: " + finding.statement.replace("\n", " ")
        cost = counter.count(line) + 1
        if used + cost <= budget // 3:
            lines.append(line)
            used += cost
    for fid in order:
        figure = by_id[fid]
        line = f"{fid} {figure.label} = {figure.display}"
        cost = counter.count(line) + 1
        if used + cost > budget:
            continue
        lines.append(line)
        ids.append(fid)
        used += cost
    return "\n".join(lines), ids


#: What a lost model server raises at a model call: the unreachable server, and the failing
#: answer of a dying one (an HTTP 5xx, a cut body). The figures need no model, so the report
#: is written with the narrative marked unavailable instead of no report at all.
_MODEL_LOST = (ServerUnavailableError, ModelCallError)


def _notes(
    lost: str | None,
    draft: ReportDraft,
    interpretation: Interpretation,
    checked: CheckedNarrative,
) -> list[str]:
    """The report's workflow notes: a lost server, unparsed answers, dropped findings, and
    the claim check's counts and the reason of each dropped sentence."""
    notes = []
    if lost:
        notes.append(f"narrative unavailable: the model server was lost ({lost})")
    elif not interpretation.parsed:
        notes.append("interpret: the model's answer was not valid JSON; no findings")
    if not draft.parsed and not lost:
        notes.append(
            "write_report: no narrative (the answer was not valid JSON or there were no figures)"
        )
    notes += [f"dropped finding: {d.reason}" for d in interpretation.dropped]
    if not lost:
        notes.append(
            f"claim check: {checked.kept} of {checked.sentences} model sentences shown, "
            f"{len(checked.dropped)} dropped, {checked.merged} repeats merged"
            + ("; the figures-only narrative is shown" if checked.figures_only else "")
        )
    notes += [f"dropped model sentence ({d.where}): {d.reason}" for d in checked.dropped]
    return notes


def build_graph(config: ReportConfig, counter: TokenCounter):  # -> CompiledStateGraph
    """Compile the graph for ``config`` (no checkpointer: one short stateless run)."""
    nodes = _Nodes(config, counter)
    graph = StateGraph(ExcelReportState, context_schema=WorkflowContext)
    graph.add_node("read", nodes.read)
    graph.add_node("analyse", nodes.analyse)
    graph.add_node("interpret", nodes.interpret)
    graph.add_node("write_report", nodes.write)
    graph.add_node("render", nodes.render)
    graph.add_edge(START, "read")
    graph.add_conditional_edges("read", _after_read, ["analyse", END])
    graph.add_edge("analyse", "interpret")
    graph.add_edge("interpret", "write_report")
    graph.add_edge("write_report", "render")
    graph.add_edge("render", END)
    return graph.compile()


async def _after_read(state: ExcelReportState) -> str:
    # a coroutine: LangGraph runs a plain-function edge in a worker thread (a thread hop)
    return END if state.get("error") else "analyse"


class _Nodes:
    """The graph's nodes for one :class:`ReportConfig` and token counter."""

    def __init__(self, config: ReportConfig, counter: TokenCounter) -> None:
        self.config = config
        self.counter = counter

    async def read(
        self, state: ExcelReportState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        path = state.get("path")
        if path is None:
            exts = ", ".join(f".{e}" for e in EXTENSIONS)
            return {"error": f"no spreadsheet attached: attach a file ({exts}) with a path"}
        workbook = state.get("workbook")  # already read by the caller: not read twice
        if workbook is None:
            try:
                # only from the allowed folders, and the resolved file, never the link
                real = resolve_attachment_path(path, self.config.attachment_dirs)
                workbook = read_workbook(real, self.config.limits)
            except (SpreadsheetError, UserError) as exc:
                return {"error": str(exc)}
        if not any(table.rows for sheet in workbook.sheets for table in sheet.tables):
            return {
                "error": f"{Path(path).name}: no table with data rows was found (only headers or "
                "free text). A report needs a table: a header row and at least one row of data"
            }
        return {"workbook": workbook}

    async def analyse(self, state: ExcelReportState) -> dict[str, Any]:
        analysis = analyse(state["workbook"], self.config.analysis)
        encoding = encode_workbook(
            state["workbook"], analysis, self.config.token_budget, self.counter
        )
        return {"analysis": analysis, "encoding": encoding}

    async def interpret(
        self, state: ExcelReportState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        encoding = state["encoding"]
        if not encoding.figure_ids:
            return {"interpretation": Interpretation(findings=[])}
        try:
            result = await interpret_data(
                runtime.context.llm,
                encoding.text,
                encoding.figure_ids,
                options=CallOptions(max_tokens=self.config.interpret_max_tokens),
            )
        except _MODEL_LOST as exc:  # the figures need no model: narrative marked unavailable
            return {"interpretation": Interpretation(findings=[]), "fallback": str(exc)}
        return {"interpretation": result}

    async def write(
        self, state: ExcelReportState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        facts, ids = _facts(
            state["analysis"], state["interpretation"], self.counter, self.config.facts_budget
        )
        if not ids or state.get("fallback"):
            return {"draft": ReportDraft(parsed=False)}
        try:
            draft = await write_report(
                runtime.context.llm,
                facts,
                options=CallOptions(max_tokens=self.config.write_max_tokens),
            )
        except _MODEL_LOST as exc:  # the figures need no model: narrative marked unavailable
            return {"draft": ReportDraft(parsed=False), "fallback": str(exc)}
        return {"draft": draft}

    async def render(
        self, state: ExcelReportState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        wb, analysis = state["workbook"], state["analysis"]
        draft, interpretation = state["draft"], state["interpretation"]
        checked = check_narrative(draft, interpretation, analysis.by_id(), workbook_names(wb))
        title, summary, sections = checked.title, checked.summary, checked.sections
        findings = [
            RenderedFinding(statement=f.statement, figure_ids=f.figure_ids)
            for f in checked.findings
        ]
        lost = state.get("fallback")
        notes = _notes(lost, draft, interpretation, checked)
        removed = [n for d in checked.dropped for n in d.numbers]
        content = ReportContent(
            workbook=wb,
            analysis=analysis,
            title=title,
            summary=summary,
            sections=sections,
            findings=findings,
            notes=notes,
            narrative_unavailable=lost or None,
            check=None if lost else checked,
        )
        files = write_report_files(content, self.config.output_dir)
        prompt_tokens = {c.node: c.prompt_tokens for c in runtime.context.llm.calls}
        result = ExcelReportResult(
            status="succeeded",
            file=wb.path,
            sheets=_sheets(wb),
            figures=len(analysis.figures),
            findings=findings,
            dropped_findings=[d.reason for d in interpretation.dropped],
            numbers_removed=removed,
            model_sentences=checked.sentences,
            model_sentences_kept=checked.kept,
            dropped_sentences=checked.dropped,
            shown_sentences=checked.shown,
            figures_only_narrative=checked.figures_only and not lost,
            encoding_tokens=state["encoding"].tokens,
            token_budget=state["encoding"].budget,
            prompt_tokens=prompt_tokens,
            markdown=str(files.markdown),
            xlsx=str(files.xlsx),
            narrative_unavailable=lost or None,
        )
        return {"result": result}


def _sheets(wb: Workbook) -> list[SheetSummary]:
    return [
        SheetSummary(
            name=s.name,
            tables=[f"{t.id} {t.ref}" for t in s.tables],
            header_rows=[t.header_rows for t in s.tables],
            text_blocks=len(s.text_blocks),
        )
        for s in wb.sheets
    ]


class ExcelReportWorkflow(Workflow[ExcelReportState, ExcelReportResult]):
    """Registered for its route, ``excel_report`` (:data:`.route.ROUTE`).

    Args:
        config: Output folder, token budgets, limits; from :class:`Settings` when None.
        counter: Token counter for the budgets; the served checkpoint's tokenizer when
            available (``Settings.checkpoint_dir``), else the UTF-8 byte upper bound.
    """

    name = "excel_report"
    route = ROUTE

    def __init__(
        self, config: ReportConfig | None = None, counter: TokenCounter | None = None
    ) -> None:
        settings = Settings()
        self.config = config or ReportConfig.from_settings(settings)
        self.counter = counter or default_counter(settings.checkpoint_dir)
        self.graph = build_graph(self.config, self.counter)

    def configured(self, settings: Settings) -> ExcelReportWorkflow:
        """This workflow reading attachments from ``settings``' folders too (a batch's)."""
        return ExcelReportWorkflow(ReportConfig.from_settings(settings), self.counter)

    def preload(self, workbook: Workbook) -> None:
        """Use ``workbook`` (already read by the caller) for its file instead of reading the
        file again."""
        self._preloaded = {str(workbook.path): workbook}

    def initial_state(self, request: Request) -> ExcelReportState:
        path = spreadsheet_attachment(request)
        workbook = getattr(self, "_preloaded", {}).get(str(path)) if path else None
        if workbook is not None:
            return ExcelReportState(path=path, workbook=workbook)
        return ExcelReportState(path=path)

    def result(self, state: ExcelReportState) -> ExcelReportResult:
        error = state.get("error")
        if error:
            return ExcelReportResult(status="rejected", file=state.get("path"), error=error)
        return state["result"]

    def output(self, result: ExcelReportResult) -> str | None:
        """The report's path (the ``.xlsx``, else the Markdown)."""
        return result.xlsx or result.markdown

    def headline(self, result: ExcelReportResult) -> str:
        if result.status == "rejected":
            return f"rejected: {result.error}"
        narrative = "; narrative unavailable" if result.narrative_unavailable else ""
        return (
            f"report {result.markdown} ({result.figures} figures, {len(result.findings)} "
            f"findings{narrative})"
        )
