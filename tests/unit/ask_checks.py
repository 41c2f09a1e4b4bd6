"""The write gate's two readings of a message, checked together (one copy for the gate's tests).

A message is read twice before money moves: :func:`~workflows.customer_service.asks.read_asks`
(what the workflow offers) and :func:`~workflows.customer_service.asks.doubt` (what the refund
policy reads again before it writes). Both must agree.
"""

from __future__ import annotations

from workflows.customer_service.asks import doubt, read_asks


def assert_no_write(text: str) -> None:
    """Neither reading takes ``text`` as a write: ``read_asks`` finds none and ``doubt`` names
    why (negated, quoted...)."""
    assert read_asks(text).writes == (), text
    assert doubt(text) is not None, text


def assert_own_ask(text: str) -> None:
    """Both readings take ``text`` as the customer's own ask: a write is read, with no doubt."""
    assert read_asks(text).writes, text
    assert doubt(text) is None, text
