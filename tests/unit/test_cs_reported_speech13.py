"""Reported speech before an ask is read in linear time (tester13 L, HIGH): "my wife says the
lamp is broken. Refund ORD-…" spun the ask reader for minutes. Someone else's words are
blanked to spaces before the ask is read, and ``ask_forms._BARE_BEFORE`` / ``_BARE_AFTER``
repeated a group holding ``\\s+``, so a run of blanks backtracked exponentially. Each shape
below, with short and long reported parts, in English and Chinese, is read (an alarm fails the
test instead of hanging the run; no time is measured), and its refund is read (asked, or set
aside as someone else's words)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from workflows.customer_service.asks import read_asks

#: (shape, who, what) per language: someone's words, then the ask.
_EN = (
    [
        "{who} says {what}. Refund ORD-100076",
        "Thomas here, {who} says {what}. Refund ORD-100076",
        "{who} said that {what}. refund ORD-100076 please",
        "according to {who}, {what}, so refund ORD-100076",
    ],
    ["my wife", "my neighbour's son"],
    ["the lamp is broken", "the lamp " + "really " * 30 + "is broken"],
)
_ZH = (
    ["{who}说{what}。退款ORD-100076", "{who}講{what}，退款ORD-100076"],
    ["我老婆", "佢"],
    ["灯坏了", "灯" + "真的" * 20 + "坏了"],
)


@pytest.fixture
def alarm() -> Iterator[None]:
    def stop(*_: object) -> None:
        raise TimeoutError("the ask reader did not finish: backtracking")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.usefixtures("alarm")
def test_reported_speech_before_an_ask_is_read() -> None:
    wrong = []
    for shapes, people, words in (_EN, _ZH):
        for shape in shapes:
            for who in people:
                for what in words:
                    asks = read_asks(text := shape.format(who=who, what=what))
                    if "refund" not in {*asks.writes, *(i for i, _ in asks.declined)}:
                        wrong.append(text)  # the refund mention was not read at all
    assert not wrong, wrong
