"""The figures-only report: no model, no server. ``orchestrator report FILE --no-model``.

The same reader, analysis and renderer as the workflow, without the two model calls: the
report has the figures, the reader's tables and "What this report could not use", and no
narrative. It is deterministic (same file, same report) and takes as long as reading the
file. The workflow falls back to it when the model server is gone.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.spreadsheet import Workbook
from workflows.excel_report.analysis import Analysis, AnalysisConfig, analyse
from workflows.excel_report.render import ReportContent, ReportFiles, write_report_files

NO_MODEL_NOTE = "figures only: no model was used (orchestrator report --no-model)"


def figures_only_report(
    workbook: Workbook,
    out_dir: Path,
    config: AnalysisConfig | None = None,
    *,
    analysis: Analysis | None = None,
    note: str = NO_MODEL_NOTE,
) -> tuple[Analysis, ReportFiles]:
    """Write the figures-only report of an already read ``workbook``.

    Args:
        workbook: The reader's result (the file is not read again).
        out_dir: Folder for ``<stem>.<hash>.report.md`` and ``.report.xlsx``
            (:func:`~workflows.excel_report.render.report_stem`).
        config: Analysis bounds; defaults when None.
        analysis: A ready analysis of ``workbook`` (the workflow's fallback passes its own).
        note: Why there is no narrative, shown under the report's notes.

    Returns:
        ``(analysis, files)``.

    Raises:
        OSError: The folder cannot be written (no partial file is left).
    """
    analysis = analysis or analyse(workbook, config)
    content = ReportContent(workbook=workbook, analysis=analysis, notes=[note], model_used=False)
    return analysis, write_report_files(content, out_dir)
