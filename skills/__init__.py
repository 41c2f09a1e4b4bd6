"""Reusable model-calling steps. Each takes a :class:`~orchestrator.gateway.ModelGateway`."""

from skills.prompting import delimit
from skills.reply import DraftReply, draft_reply
from skills.triage import TRIAGE_SCHEMA, IssueTriage, parse_triage, triage_issue

__all__ = [
    "TRIAGE_SCHEMA",
    "DraftReply",
    "IssueTriage",
    "delimit",
    "draft_reply",
    "parse_triage",
    "triage_issue",
]
