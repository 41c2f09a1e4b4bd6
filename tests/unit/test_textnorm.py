"""Word-level obfuscation folding shared by the classifier and moderation
(:mod:`orchestrator.textnorm`)."""

from __future__ import annotations

import pytest

from orchestrator.textnorm import fold_obfuscation, fold_text, join_spaced_letters, unleet


@pytest.mark.parametrize(
    ("word", "readings"),
    [
        ("k1ll", ("kill", "klll")),
        ("ki11", ("kiii", "kill")),
        ("d!e", ("die",)),
        ("ur$elf", ("urself",)),
        ("p@55w0rd", ("password",)),
        ("2024", ()),  # digits only: a number, not leetspeak
        ("hello", ()),  # nothing to read
    ],
)
def test_unleet_gives_every_reading(word: str, readings: tuple[str, ...]) -> None:
    assert unleet(word) == readings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("k i l l yourself", "kill yourself"),
        ("f.u.c.k this", "fuck this"),
        ("a-b-c-d", "abcd"),
        ("I am ok", "I am ok"),  # two single letters are not a run
        ("你 好 吗", "你 好 吗"),  # Chinese is left alone
    ],
)
def test_join_spaced_letters(text: str, expected: str) -> None:
    assert join_spaced_letters(text) == expected


def test_fold_obfuscation_folds_characters_then_words() -> None:
    assert fold_obfuscation("Ｋ1LL  y0urself, k i l l") == "kill  yourself, kill"
    assert fold_obfuscation("Order 2024 shipped at 9am") == "order 2024 shipped at 9am"
    # plain text folds exactly as fold_text
    assert fold_obfuscation("Refund my café order") == fold_text("Refund my café order")
