"""The customer's answer to a confirmation question, and what language a message is in.

:func:`is_yes` reads the answer to "… Reply yes to confirm": a plain yes in English, Chinese
(Simplified or Traditional) or Cantonese, or a short run of set phrases of assent ("yes, no
problem", "sure, no worries", "yes that's fine", "好的，沒問題"), and nothing else. A "no"
counts only inside such a set phrase: "yes, no, wait", "no problem... actually don't" and
"yes but to another address instead" are no yes, and nothing is written (fails safe).
:func:`third_language` and :func:`has_words` say whether a message can be read at all.
Split out of :mod:`workflows.customer_service.asks` (which re-exports them).

Hand-written patterns rather than a model: a yes runs a write, so code a test can pin reads it.
"""

from __future__ import annotations

import re

from workflows.customer_service.ask_marks import normalise

#: What a customer's own plain answer does not hold: a quoted line (``> yes``, ``| yes``), the
#: word cited in quotes or brackets (``"yes"``, ``[yes]``, ``<yes>``), or an answer trailing
#: off (``ok...``, ``是…``: hesitation, not a decision).
_NOT_PLAIN = re.compile(r"^\s*(?:[>|]|&gt;)|[\"“”「」『』\[\]<>＜＞]|\.{2,}|…|。。")
#: Set phrases of assent (after :func:`~workflows.customer_service.ask_marks.normalise`,
#: lower case, punctuation and apostrophes turned into spaces): a "no" here is no refusal.
_ASSENT = (
    r"(?:no problems?|not a problem|no probs?|no worries|no worry|no issues?|no objections?)"
    r"(?: at all)?|(?:that s |that is |thats |it s |its )?(?:fine|ok|okay|alright|all right|"
    r"good|perfect)(?: with me| by me)?|(?:that s |that is |thats )(?:right|correct)|"
    r"sounds good|works for me|that works|all good|of course|absolutely|definitely|certainly|"
    r"go for it|please proceed|proceed|当然|当然可以|没错|没问题的|可以的|行的"
)
#: What a plain answer is written with (after ``normalise``): letters, spaces and the marks
#: that end or split a sentence. An emoji, emoticon or other symbol ("yes 😂", "ok 🙄",
#: "yes :)", "yes ^^", "好的👌") says more than yes: a joke, a shrug, sarcasm (tester11 B).
_PLAIN_CHARS = re.compile(r"[^\W\d_]|[\s.,!'’，。！、]")
#: Assent that is no decision on its own ("fine.", "good", "perfect", "all good": grudging or
#: a reaction); it counts beside a plain yes ("yes, that's fine"). The filler 嗯 is no yes.
_WEAK = re.compile(r"(?:fine|good|perfect|alright|all right|all good)(?:\s?(?:la|lah))?")
#: Grudging assent: a "fine" that is not said of something ("okay fine", "yes fine", "fine,
#: yes", "fine, do it", "fine by me") is a shrug, not a decision, even beside a yes: asked once
#: more (tester12 F, tester13 F, cs13). "that's fine" and "it's fine (by me)" still count.
_GRUDGING = re.compile(r"(?<!that s )(?<!that is )(?<!thats )(?<!it s )(?<!its )(?<!it is )"
                       r"\bfine\b")  # fmt: skip
#: An answer longer than this (after the folding in :func:`is_yes`) is never a plain yes.
_MOST_CHARS = 40
#: Nor is a run of more set phrases than this ("yes ok sure do it go …": not a plain answer).
_MOST_PHRASES = 4
_YES = re.compile(
    r"(?:yes|yep|yeah|yup|y|sure|confirm|confirmed|ok|okay|ok do it|okay do it|go ahead|do it|"
    r"please do|yes please|yes do it|yes go ahead|correct|that'?s right|是|是的|确认|确定|好的|好|"
    r"可以|对|对的|行|没问题|确认无误|好的确认|是的确认|"
    # Cantonese (after OpenCC: 係 -> 系): 係, 得, 好嘅, 冇問題
    r"系|系的|得|冇问题|无问题|好嘅|" + _ASSENT + r")"
    # set phrases of assent, "no" in some (tester7: "yes, no problem" was asked again)
    r"(?:\s?(?:啊|呀|啦|喇|嘅|lah|la))?"  # a particle after the yes ("可以啊", "ok lah")
)


def is_yes(answer: str) -> bool:
    """Whether ``answer`` is a plain yes and nothing else (``yes``, ``ok do it``, ``是的``,
    ``确认``, ``yes, no problem``, ``沒問題``): a yes with more in it ("yes but change the
    address", "yes, no, wait", "no problem... actually don't") is not, nor is one with an
    emoji or other symbol (:data:`_PLAIN_CHARS`), a filler (嗯), only grudging assent
    (:data:`_WEAK`: "fine."), a bare "fine" even beside a yes (:data:`_GRUDGING`: "okay
    fine") or a phrase said twice ("yes yes yes", "ok ok", 是是是, 好的好的:
    impatience, asked once more). A "no" counts only
    inside a set phrase of assent (:data:`_ASSENT`: ``no problem``, ``no worries``).

    Example:
        >>> is_yes("Yes please!"), is_yes("好的"), is_yes("yes, but refund the other one")
        (True, True, False)
        >>> is_yes("yes?"), is_yes("係呀"), is_yes("> yes"), is_yes("ok...")
        (False, True, False, False)
        >>> is_yes("sure, no worries"), is_yes("yes, no, wait"), is_yes("no problem")
        (True, False, True)
        >>> is_yes("yes 😂"), is_yes("嗯"), is_yes("fine."), is_yes("yes, that's fine")
        (False, False, False, True)
        >>> is_yes("yeah yeah"), is_yes("行行行"), is_yes("ok ok"), is_yes("是的，确认")
        (False, False, False, True)
        >>> is_yes("okay fine"), is_yes("fine, yes"), is_yes("it's fine, go ahead")
        (False, False, True)
    """
    if re.search(r"[?？¿]", answer):  # "yes?", "確定？", "ok?": a question back, never a yes
        return False
    if _NOT_PLAIN.search(answer):  # "> yes" quoted, '"yes"' cited, "ok..." trailing off
        return False
    text = normalise(answer).lower()
    if not all(_PLAIN_CHARS.match(ch) for ch in text):  # an emoji, emoticon or symbol
        return False
    text = re.sub(r"\bplease\b|请", " ", text)
    text = re.sub(r"[\s\W_]+", " ", text).strip()
    if not text or len(text) > _MOST_CHARS or _GRUDGING.search(text):
        return False
    rest, decided = text, False
    seen: set[str] = set()
    while rest:  # a short run of yes-phrases ("yes ok do it", "是的确认")
        end = next((e for e in range(len(rest), 0, -1) if _YES.fullmatch(rest[:e].strip())), 0)
        phrase = rest[:end].strip()
        if not end or len(seen) >= _MOST_PHRASES:
            return False
        if phrase in seen:  # "yes yes yes", "ok ok", 是是是, 行行行: impatience, not a decision
            return False
        seen.add(phrase)
        decided = decided or not _WEAK.fullmatch(phrase)
        rest = rest[end:].strip()
    return decided


#: Latin-script languages a customer may write in instead of English (wordfreq's small lists).
_OTHER_LATIN = ("es", "fr", "de", "it", "pt", "nl", "id", "ms", "vi", "tr", "pl", "sv", "ro")
#: How much more common (Zipf, log10 per billion words) a word must be in another language
#: than in English to count as that language's word.
_FOREIGN_MARGIN = 1.0


def third_language(message: str) -> bool:
    """Whether ``message`` is written in neither English nor Chinese: letters of another
    script, or Latin words most of which are clearly another language's (wordfreq: a word
    counts as foreign when it is :data:`_FOREIGN_MARGIN` Zipf more common in one of
    :data:`_OTHER_LATIN` than in English, as English when at least as common in English).
    Terse English ("Wrong item received, ORD-100076") is English; unknown words (typos,
    names) count for neither side; one foreign word is enough only with an accent ("sí").

    Example:
        >>> third_language("Delivery late again, unacceptable")
        False
        >>> third_language("Mi pedido no ha llegado")
        True
    """
    text = normalise(message)
    if re.search(
        r"[\u0400-\u04ff\u0600-\u06ff\u0e00-\u0e7f\u3040-\u30ff\uac00-\ud7af\u0590-\u05ff\u0900-\u097f]",
        text,
    ):
        return True
    if re.search(r"[\u4e00-\u9fff]", text):
        return False
    words = re.findall(r"[^\W\d_]{2,}", re.sub(r"\bORD-\d+\b", " ", text).lower())
    if not words:
        return False
    accented = re.search(r"[\u00c0-\u024f]", text) is not None  # é, ñ, ß, ő
    from wordfreq import zipf_frequency  # loaded on the first Latin message only

    english = foreign = 0
    for word in words:
        en = zipf_frequency(word, "en", wordlist="small")
        other = max(zipf_frequency(word, lang, wordlist="small") for lang in _OTHER_LATIN)
        if other >= en + _FOREIGN_MARGIN:
            foreign += 1
        elif en > 0 and en >= other:
            english += 1
    return foreign > english and (foreign >= 2 or accented)


def has_words(message: str) -> bool:
    """Whether ``message`` holds any letter, CJK character or digit (not only emoji,
    punctuation or symbols)."""
    return any(ch.isalnum() for ch in normalise(message))
