"""An amount that is a side remark is never the refund's (cs10; tester10 kind M).

"Please refund ORD-…; my bank charged USD 3" was offered (and, on yes, written) as a USD 3
refund; "in full plus USD 20 compensation" as USD 20. Now an amount is the refund's only when
its own clause asks for money back (refund, back, 退) with no side remark's words (paid, fee,
shipping, 运费, 补偿 …), and never beside "in full"/全额: otherwise it is asked back
(``amounts.refund_ask`` unclear). Cases in ``tests/data/cases/cs_amounts10.toml``.
"""

from __future__ import annotations

from case_tables import tables

from workflows.customer_service.amounts import refund_ask

CASES = tables("cs_amounts10.toml")


def test_a_side_amount_is_asked_back_and_the_refunds_own_is_read() -> None:
    asks = {m: refund_ask(m.format(id="ORD-100076")) for m in CASES["side"]}
    offered = [(m, a.cents) for m, a in asks.items() if a is None or not a.unclear]
    assert not offered, (f"{len(offered)} of {len(asks)} side amounts offered", offered)
    read = [(m, refund_ask(m.format(id="ORD-100076"))) for m, _ in CASES["own"]]
    wrong = [(m, a) for (m, cents), (_, a) in zip(CASES["own"], read, strict=True)
             if a is None or a.unclear or a.cents != cents]  # fmt: skip
    assert not wrong, wrong
