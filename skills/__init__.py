"""Reusable model-calling steps. Each takes a :class:`~orchestrator.core.gateway.ModelGateway`."""

from skills.assess_risk import RiskAssessment, assess_risk
from skills.calling import CallOptions
from skills.interpret_data import Finding, Interpretation, interpret_data
from skills.prompting import delimit
from skills.reply import DraftReply, FactGuard, draft_reply, fact_sentence, stream_reply
from skills.tool_call import ToolRequest, request_tool_call
from skills.triage import TRIAGE_SCHEMA, IssueTriage, parse_triage, triage_issue
from skills.write_report import ReportDraft, write_report

__all__ = [
    "TRIAGE_SCHEMA",
    "CallOptions",
    "DraftReply",
    "FactGuard",
    "Finding",
    "Interpretation",
    "IssueTriage",
    "ReportDraft",
    "RiskAssessment",
    "ToolRequest",
    "assess_risk",
    "delimit",
    "draft_reply",
    "fact_sentence",
    "interpret_data",
    "parse_triage",
    "request_tool_call",
    "stream_reply",
    "triage_issue",
    "write_report",
]
