"""A turn that cannot reach the order store (the main job, or nobody signed in) never offers a
write or a look-up it cannot do: it says that nothing was changed and where the ask can be
made, in the customer's language (a tester read "reply here to confirm you want it" where no
confirmation can follow, and "I have ORD-… tell me what you would like" after "where is it?")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator import TelemetryStore
from orchestrator.textnorm import to_simplified

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel, customer_service_only, stream_turn

ASKS = [
    ("Please refund ORD-100560", "en"),
    ("I'd like my money back for ORD-104321 please", "en"),
    ("cancel ORD-100777 now", "en"),
    ("Change the address of ORD-100560 to 12 Main St, Ely CB7 4AA", "en"),
    ("请取消订单 ORD-100560", "zh"),
    ("ORD-102345 帮我退款", "zh"),
    ("把订单 ORD-100412 的地址改成北京市朝阳区建国路1号", "zh"),
    ("請幫我取消訂單 ORD-100412", "zh"),
]
LOOKUPS = [
    ("where is ORD-100076?", "en"),
    ("What's the status of ORD-100555?", "en"),
    ("ORD-100076 到哪了", "zh"),
    ("查询订单 ORD-100555 的状态", "zh"),
]
OFFERS = ("reply here", "confirm you want", "在这里回复", "I have ORD", "what you would like")


async def _reply(text: str) -> str:
    model = ScriptedToolModel(replies=["Thanks for reaching out."])
    orch = customer_service_only(model, TelemetryStore("sqlite://"))
    _, done = await stream_turn(orch, text, None, None)
    assert done.result["tool_results"] == []  # nothing was run, so nothing may be claimed
    return str(done.result["reply"]["text"])


@pytest.mark.parametrize(("text", "lang"), ASKS)
async def test_a_write_ask_is_told_nothing_changed(text: str, lang: str) -> None:
    reply = await _reply(text)
    assert not any(offer in reply for offer in OFFERS), reply
    said = to_simplified(reply)
    assert ("nothing was changed" in said) if lang == "en" else ("没有做任何更改" in said), reply
    assert text.upper().split("ORD-")[1][:6] in reply  # the order the customer named


@pytest.mark.parametrize(("text", "lang"), LOOKUPS)
async def test_a_look_up_is_not_offered(text: str, lang: str) -> None:
    reply = await _reply(text)
    assert not any(offer in reply for offer in OFFERS), reply
    said = to_simplified(reply)
    assert ("cannot see your orders" in said) if lang == "en" else ("无法查看您的订单" in said)
