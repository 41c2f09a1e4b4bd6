"""Unseen phrasings of each failing kind of issue 14, written for this test only.

None of these strings is in the labelled set or in ``routes.toml``; the fit never sees them.
The tables are data, in ``tests/data/cases/classifier_unseen.toml`` (with what each holds and
when it was written); each entry is ``(text, expected route)``, ``(text, primary, secondary)``
for :data:`TWO_INTENTS`.
"""

from __future__ import annotations

from orchestrator.routes import Route
from tests.unit.case_tables import tables

CS, MOD, XL, FB = (
    Route("customer_service"),
    Route("content_moderation"),
    Route("excel_report"),
    Route("fallback"),
)

_UNSEEN = tables("classifier_unseen.toml")
MODERATION_OTHER_WORDS: list[tuple[str, Route]] = _UNSEEN["moderation_other_words"]
OUT_OF_SCOPE_SERVICE_WORD: list[tuple[str, Route]] = _UNSEEN["out_of_scope_service_word"]
NEGATION: list[tuple[str, Route]] = _UNSEEN["negation"]
TIES: list[tuple[str, Route]] = _UNSEEN["ties"]
TWO_INTENTS: list[tuple[str, Route, Route]] = _UNSEEN["two_intents"]
TWO_INTENTS_TEXTS: list[tuple[str, Route]] = [(t, first) for t, first, _ in TWO_INTENTS]
IDS_NOT_HASHTAGS: list[tuple[str, Route]] = _UNSEEN["ids_not_hashtags"]
HASHTAGS: list[str] = _UNSEEN["hashtags"]
LONG_ASKS: list[tuple[str, Route]] = _UNSEEN["long_asks"]
# held out, session 4 and session 5 (see the data file)
MODERATION_OTHER_WORDS_2: list[tuple[str, Route]] = _UNSEEN["moderation_other_words_2"]
OUT_OF_SCOPE_SERVICE_WORD_2: list[tuple[str, Route]] = _UNSEEN["out_of_scope_service_word_2"]
OUT_OF_SCOPE_SERVICE_WORD_3: list[tuple[str, Route]] = _UNSEEN["out_of_scope_service_word_3"]

FILLER = (
    "The committee met on Tuesday to discuss the garden project. Several neighbours brought "
    "plants, and the weather stayed dry for most of the afternoon. "
)


#: Very long or repetitive inputs: ``(text, expected route)``; the route is what a person reading
#: the text would pick (a pasted document with the ask at its start or end, one word or line
#: repeated, an endless run of one character or emoji).
def long_and_repetitive() -> list[tuple[str, Route]]:
    """Built on call (the texts are large)."""
    prose = FILLER * 2000  # about 270,000 characters of neutral prose
    return [
        ("refund " * 50_000, CS),
        ("退款" * 100_000, CS),
        ("Where is my parcel?\n" * 20_000, CS),
        ("我的快递到哪了？" * 30_000, CS),
        ("Please refund my order, it never arrived. " + prose, CS),
        (prose + " Please summarise the attached spreadsheet by region.", XL),
        ("请审核这条评论是否违规：" + "你们都是垃圾" * 20_000, MOD),
        ("a" * 300_000, FB),
        ("\U0001f642" * 200_000, FB),
        (" " * 100_000 + "where is my refund" + " " * 100_000, CS),
        ("lol " * 80_000, FB),
        ("hello?\n" * 30_000 + "my card was charged twice, please help", CS),
    ]
