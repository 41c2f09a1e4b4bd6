"""Issue 47, session 8: a user named by handle is not read as leetspeak, so an insult emoji
aimed at them is found (the posts of the session's three kinds are in
``tests/data/moderation_kinds8.py``, judged in ``test_moderation_disguise_kinds7.py``)."""

from __future__ import annotations

from workflows.content_moderation.addressed import addressed_insults
from workflows.content_moderation.normalize import normalize, unleet_words


def test_a_handle_is_not_read_as_leetspeak() -> None:
    assert unleet_words("@user r4t") == "@user rat"
    found = addressed_insults(unleet_words(normalize("@user 🐀").text))
    assert [t for _, _, t in found] == ["you rat"]
