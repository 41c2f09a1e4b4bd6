"""Excel-to-report workflow (LangGraph): spreadsheet in, verifiable narrative report out."""

from workflows.excel_report.graph import (
    ExcelReportResult,
    ExcelReportState,
    ExcelReportWorkflow,
    ReportConfig,
    build_graph,
)

__all__ = [
    "ExcelReportResult",
    "ExcelReportState",
    "ExcelReportWorkflow",
    "ReportConfig",
    "build_graph",
]
