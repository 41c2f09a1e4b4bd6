"""Insisting on or chasing the SAME ask keeps a waiting write waiting (cs10 item b).

While a confirmed write waits for a person, a message keeps it waiting unless it is the
customer's own withdrawal or change (``withdrawing.waiting_decision``; since cs12, tester12 D,
the reading is positive both ways: before, any message of no benign kind ended it). "please
just process it", "why hasn't my refund been processed yet?", "still nothing", 我没说不要退款,
唔好取消我嘅退款, 地址改好了没？ withdrew it; now they keep it. A changed, negated or withdrawn
ask ("just refund half", "don't process it", 快点处理，改成退到余额) still takes it back.
Cases in ``tests/data/cases/cs_waiting10.toml`` (en, zh-Hans, zh-Hant, Cantonese, typos, mixed).
"""

from __future__ import annotations

from typing import Any

from case_tables import tables

from workflows.customer_service.withdrawing import waiting_decision

CASES = tables("cs_waiting10.toml")


def _kept(message: str, tool: str) -> bool:
    """What ``withdrawing.waiting_input`` decides: the write keeps waiting (neither amended
    nor withdrawn)."""
    action: dict[str, Any] = {"tool": tool, "arguments": {"order_id": "ORD-100555"}}
    return waiting_decision(message, action) == "kept"


def test_insisting_keeps_the_write_waiting_and_a_change_does_not() -> None:
    withdrawn = [(tool, m) for tool, m in CASES["keep"] if not _kept(m, tool)]
    assert not withdrawn, (f"{len(withdrawn)} of {len(CASES['keep'])} withdrawn", withdrawn)
    kept = [(tool, m) for tool, m in CASES["change"] if _kept(m, tool)]
    assert not kept, (f"{len(kept)} of {len(CASES['change'])} kept waiting", kept)
