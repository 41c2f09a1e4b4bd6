"""Code's sentences around a reply: the handoff's waiting line, a person's review, and the
notes (attachments, the parts of a compound request left to a person, sign in). Split out
of :mod:`workflows.customer_service.graph` (issue 48).
"""

from __future__ import annotations

import functools
from typing import Any

from orchestrator.core.registry import file_routes, plugin_route_specs
from orchestrator.routes import RouteSpec
from workflows.customer_service.route import ROUTE
from workflows.customer_service.state import CustomerServiceState


def waiting_text(handoff: dict[str, Any], lang: str = "en") -> str:
    """What the reply says while the turn waits on a person (never the internal reason,
    which the operator sees in the handoff)."""
    if lang == "zh":
        return "同事会接手这段对话，请稍候。"
    return "A colleague will take over this conversation."


def reviewed_text(handoff: dict[str, Any], locale: str) -> str:
    """What the reply says of a person's decision when no tool result says it."""
    if locale.startswith("zh"):
        return (
            f"同事已处理您的问题（{'已批准' if handoff['decision'] == 'approved' else '未批准'}）。"
        )
    return f"A colleague reviewed your case: {handoff['decision']}."


@functools.cache
def _declared() -> dict[str, RouteSpec]:
    """The declared routes by name: the routes file's, then the installed workflows' own."""
    return {spec.name: spec for spec in (*file_routes(), *plugin_route_specs())}


def route_title(route: str, lang: str) -> str:
    """What a reply in ``lang`` calls a request of ``route`` (its declaration's ``titles``;
    its name with spaces for a route no declaration titles)."""
    spec = _declared().get(route)
    return spec.title(lang) if spec else route.replace("_", " ")


def reply_notes(state: CustomerServiceState, locale: str) -> list[str]:
    """Attachments used as evidence, parts of a compound request handed to a person (not run
    here), and a turn with nothing to look up."""
    zh = locale.startswith("zh")
    notes: list[str] = []
    files = state.get("attachments") or []
    if files:
        names = ", ".join(files)
        notes.append(f"已收到附件作为凭证：{names}。" if zh else f"Attached as evidence: {names}.")
    notes.extend(handed_on_notes(state, locale))
    plan = state.get("plan") or {}
    if plan.get("note"):
        notes.append(
            "请登录后我们再为您查询订单。" if zh else "Please sign in so I can look up your orders."
        )
    return notes


def handed_on_notes(state: CustomerServiceState, locale: str) -> list[str]:
    """One sentence per part of a compound request the dispatcher handed to a person (this
    turn's ``secondary_routes``): said with every reply of the turn, a question back or a
    confirmation question too (cs15: the customer was not told beside a question)."""
    zh = locale.startswith("zh")
    others = [r for r in state.get("secondary_routes") or [] if r != ROUTE]
    # the dispatcher ran this workflow only: each part it handed on is recorded for a person
    # (orchestrator.core.compound: only a part the customer's words ask for), and the note
    # says exactly that (issue 46, tester13 E2)
    return [
        f"您请求中关于{route_title(other, 'zh')}的部分这里没有处理：已单独记录，转交人工跟进。"
        if zh
        else f"The part of your request about {route_title(other, 'en')} was not done here: "
        "it is recorded separately for a colleague, who will follow it up."
        for other in dict.fromkeys(others)
    ]
