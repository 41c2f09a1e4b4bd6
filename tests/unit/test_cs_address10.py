"""A note after the new address, in a separate sentence, is asked back (cs10 item c).

"My new address is 12 Oak St, Leeds LS1 4AB. Please leave it with the neighbour." stored the
address and dropped the note unsaid. Now anything after the address's sentence other than
thanks, a goodbye or the order id is asked back (``address_ask.NOTE_AFTER``): nothing is
stored, the reply says why, and a "yes" after it writes nothing; never merged into the
address. Cases in ``tests/data/cases/cs_address10.toml`` (en, zh-Hans, zh-Hant, mixed, typos).
"""

from __future__ import annotations

from case_tables import tables
from sqlalchemy import select
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.address_ask import NOTE_AFTER, WHY_ZH
from workflows.customer_service.asks import normalise, read_asks
from workflows.customer_service.store import Order

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_address10.toml")


def test_a_note_after_the_address_is_asked_back_and_thanks_are_not() -> None:
    notes = CASES["note_after"] + CASES["tail_same_sentence"]
    read = {m: read_asks(m.format(id="ORD-102091")) for m in notes}
    want = {m: NOTE_AFTER for m in CASES["note_after"]}  # a tail in the sentence: any reason
    kept = [
        m
        for m, a in read.items()
        if a.new_address
        or not a.address_problem
        or want.get(m, a.address_problem) != a.address_problem
    ]
    assert not kept, (f"{len(kept)} of {len(read)} not asked back", kept)
    wrong = [
        (m, a.new_address, a.address_problem)
        for m, address in CASES["plain"]
        if ((a := read_asks(m.format(id="ORD-102091"))).new_address, a.address_problem)
        != (address, "")
    ]
    assert not wrong, wrong


async def test_the_note_is_said_back_and_yes_writes_nothing(shop: Shop) -> None:
    store, orch = shop()
    columns = (Order.customer_id, Order.id, Order.shipping_address)
    with store.sessions() as s:
        found = s.execute(select(*columns).where(Order.status == "processing")).all()
    mine = [row for row in found if row[0] == found[0][0]]
    other = next(row for row in found if row[0] != found[0][0])
    customer, order_id, before = mine[0]
    notes = CASES["note_after"]
    for n, said in enumerate([notes[0], notes[8], notes[11]]):
        reply = normalise(_said(await _turn(orch, said.format(id=order_id), customer, f"n{n}")))
        assert NOTE_AFTER.split(";")[0] in reply or WHY_ZH[NOTE_AFTER][:12] in reply, reply
        await _turn(orch, "yes", customer, f"n{n}")
    with store.sessions() as s:
        assert s.get(Order, order_id).shipping_address == before
    # the same address alone, then yes: stored exactly (the ask back costs one message). On
    # another account: the notes name someone else, so this one's writes wait for a person
    # for a day (tester14 F14)
    customer, order_id, _ = other
    await _turn(
        orch, f"change the address of {order_id} to 12 Oak St, Leeds LS1 4AB", customer, "ok"
    )
    await _turn(orch, "yes", customer, "ok")
    with store.sessions() as s:
        assert s.get(Order, order_id).shipping_address == "12 Oak St, Leeds LS1 4AB"
