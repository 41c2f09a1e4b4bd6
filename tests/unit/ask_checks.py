"""The write gate's two readings of a message, checked together (one copy for the gate's tests).

A message is read twice before money moves: :func:`~workflows.customer_service.asks.read_asks`
(what the workflow offers) and :func:`~workflows.customer_service.asks.doubt` (what the refund
policy reads again before it writes). Both must agree. The list helpers take the messages of
a case table, where ``{en}`` and ``{zh}`` stand for an order id (:func:`with_ids`), and
return the ones the gate misses; :func:`assert_gate` checks two such tables at once,
:func:`assert_yes_table` two tables of answers to a confirmation question.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from workflows.customer_service.asks import doubt, is_yes, read_asks


def assert_no_write(text: str) -> None:
    """Neither reading takes ``text`` as a write: ``read_asks`` finds none and ``doubt`` names
    why (negated, quoted...)."""
    assert read_asks(text).writes == (), text
    assert doubt(text) is not None, text


def assert_own_ask(text: str) -> None:
    """Both readings take ``text`` as the customer's own ask: a write is read, with no doubt."""
    assert read_asks(text).writes, text
    assert doubt(text) is None, text


def with_ids(messages: Iterable[str]) -> list[str]:
    """``messages`` with ``{en}`` and ``{zh}`` filled with an English and a Chinese seed
    order's id."""
    return [m.format(en="ORD-100076", zh="ORD-105142") for m in messages]


def read_as_writes(messages: Iterable[str]) -> list[str]:
    """Those of ``messages`` (ids filled) in which ``read_asks`` reads a write."""
    return [m for m in with_ids(messages) if read_asks(m).writes]


def not_set_aside(messages: Iterable[str]) -> list[str]:
    """Those of ``messages`` (ids filled) that either reading lets through: a write is read,
    or ``doubt`` names nothing."""
    return [m for m in with_ids(messages) if read_asks(m).writes or not doubt(m)]


def lost_asks(messages: Iterable[str]) -> list[str]:
    """Those of ``messages`` (ids filled) not taken as the customer's own ask: no write is
    read, or ``doubt`` names something."""
    return [m for m in with_ids(messages) if not read_asks(m).writes or doubt(m)]


def assert_gate(no_write: Sequence[str], own: Sequence[str], *, doubted: bool = False) -> None:
    """No message of ``no_write`` is read as a write (with ``doubted``, ``doubt`` must also
    name something in each: :func:`not_set_aside`) and every message of ``own`` is the
    customer's own ask (:func:`lost_asks`); ids filled. Fails naming how many of each list
    were missed, and which."""
    taken = not_set_aside(no_write) if doubted else read_as_writes(no_write)
    assert not taken, (f"{len(taken)} of {len(no_write)} taken as a write", taken)
    lost = lost_asks(own)
    assert not lost, (f"{len(lost)} of {len(own)} own asks lost", lost)


def assert_yes_table(not_yes: Sequence[str], yes: Sequence[str]) -> None:
    """No answer of ``not_yes`` is a plain yes to a confirmation question and every one of
    ``yes`` is (:func:`~workflows.customer_service.asks.is_yes`). Fails naming how many of each
    list were missed, and which."""
    taken = [m for m in not_yes if is_yes(m)]
    assert not taken, (f"{len(taken)} of {len(not_yes)} read as a yes", taken)
    lost = [m for m in yes if not is_yes(m)]
    assert not lost, (f"{len(lost)} of {len(yes)} plain yeses lost", lost)
