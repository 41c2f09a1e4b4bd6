"""Whether a model sentence is in the customer's language and clearly well formed: checks of
the claim checker (:mod:`workflows.customer_service.claims`), split out of it.

A sentence that is not clearly well formed is dropped; the fact sentence code wrote is enough
(tester12 H, tester13 H: "Your approved, and you can look at approved, and you can.", "Could
you trouble.", "订单 RF-000057 目前CNY 98.00 已approved。", "Let me know if it is
TRK0000018224."). The checks are of kinds, each a safe default:

* **language** (:func:`language_reason`): another script, another Latin-script language, a
  Chinese sentence with more Latin letters than Chinese, and (cs13) an English word run into
  a Chinese sentence that is no tool value and no code (``已approved``, ``您的patience``).
* **ids** (:func:`ill_formed`): an id is named by the noun of its own kind: an order id by
  "order"/订单, a refund id by "refund"/退款, a tracking number by "tracking number"/运单号, a
  ticket by "ticket"/"case"/工单. An id called by another kind's noun ("your order RF-…",
  订单 RF-…) or equated with a pronoun ("if it is 1Z…", 它是…) is dropped.
* **form** (:func:`ill_formed`): a clause that stops at an auxiliary or a modal ("…, and you
  can.", "your order is."), a determiner or possessive whose noun is missing ("Your
  approved, …"), a question put with a full stop ("Could you trouble."), a phrase of three
  words said twice ("let me know if me know if"), a doubled word or phrase (:func:`repeats`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from orchestrator.textnorm import to_simplified
from workflows.customer_service.language import Lang

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
#: Scripts that are neither English nor Chinese (Cyrillic, Greek, Arabic, Hebrew, Indic,
#: Thai, kana, Hangul).
_OTHER_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0e7f"
                           r"\u3040-\u30ff\uac00-\ud7af]")  # fmt: skip
#: Function words of other Latin-script languages (Spanish, French, German, Italian,
#: Portuguese, Dutch): a sentence with more of them than of English ones is not English.
_FOREIGN_COMMON = frozenset(
    re.findall(
        r"\S+",
        "el la los las del que y en su se es por para con una un le les des et est pour "
        "pas der die das und ist nicht mit ein eine il di che per non sono em não com uma "
        "het een van niet ya fue al lo sus muy también aussi votre nous vous ihre wir sie ",
    )
)
_EN_COMMON = frozenset(
    re.findall(
        r"\S+",
        "i you your we our us it its is are was were be been will can could would should "
        "may the a an to of for and or in on at with this that please thank thanks sorry "
        "here there have has had do does not no yes any more as by from if me my they "
        "them so ",
    )
)
#: Latin words a Chinese sentence may hold when no tool returned them: currency codes and a
#: few loan words written in Latin letters.
_ZH_LATIN_OK = frozenset(
    [
        "usd",
        "cny",
        "rmb",
        "hkd",
        "twd",
        "eur",
        "gbp",
        "aud",
        "cad",
        "sgd",
        "id",
        "app",
        "email",
        "e-mail",
        "ok",
        "pdf",
        "sms",
    ]
)


#: An id, amount or field name (``ORD-100001``, ``order_id``): left to the figure and form
#: checks, which say more.
_FIGURE_OR_FIELD = re.compile(r"[A-Za-z0-9_./:,$#+-]*\d[A-Za-z0-9_./:,$#+-]*|\b[a-z]+_[a-z_]+\b")


def language_reason(sentence: str, lang: Lang, values: Iterable[str]) -> str | None:
    """Why ``sentence`` is not in the customer's language ``lang`` (or too short to be a
    sentence), or None. ``values``: the tools' fact values, left out of the count."""
    if _OTHER_SCRIPT.search(sentence):
        return "language: not the customer's language"
    text = sentence
    for value in values:  # a status code (approved, in_transit) is no word of Chinese
        if lang == "en" or not re.fullmatch(r"[a-z_]+", value):
            text = text.replace(value, " ")
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    if lang == "en":
        words = re.findall(r"[a-z']+", text.lower())
        english = sum(w in _EN_COMMON for w in words)
        foreign = sum(w in _FOREIGN_COMMON for w in words)
        if cjk or foreign > english or (len(words) >= 4 and not english):
            return "language: not English"
        if len(words) < 2:
            return "broken: a fragment (under two words)"
        return None
    if cjk < 2 or latin > cjk:
        return "language: not Chinese" if latin > cjk else "broken: a fragment (too short)"
    bare = _FIGURE_OR_FIELD.sub(" ", text)  # a figure or a field name: other checks' business
    stray = [w for w in re.findall(r"[A-Za-z][A-Za-z-]+", bare) if w.lower() not in _ZH_LATIN_OK]
    return f"language: the English word {stray[0]!r} in Chinese" if stray else None


def repeats(sentence: str, lang: Lang) -> bool:
    """Whether ``sentence`` says a word, or four characters (Chinese) or words, twice, or
    three words with one of substance in them ("me know if … me know if")."""
    if lang == "zh":
        chars = "".join(_CJK.findall(sentence))
        grams = [chars[i : i + 4] for i in range(len(chars) - 3)]
        return len(grams) != len(set(grams))
    words = re.findall(r"[a-z0-9'][a-z0-9'./:-]*", sentence.lower())
    if any(a == b and len(a) > 1 for a, b in itertools.pairwise(words)):
        return True
    for n in (3, 4):
        runs = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
        seen = [g for g in runs if n == 4 or not set(g) <= _EN_COMMON]
        if len(seen) != len(set(seen)):
            return True
    return False


# --- ids and their nouns --------------------------------------------------------------------

#: Each id's kind, by the shop's formats (the store's ids and the seed's tracking numbers).
_ID_KINDS = (
    ("order", re.compile(r"(?<![A-Za-z0-9])ORD-\d{6}(?!\d)", re.I)),
    ("refund", re.compile(r"(?<![A-Za-z0-9])RF-?\d{1,9}(?!\d)", re.I)),
    ("ticket", re.compile(r"(?<![A-Za-z0-9])T-\d{6}(?!\d)")),
    (
        "tracking",
        re.compile(r"(?<![A-Za-z0-9])(?:1Z[0-9A-Z]{8,16}|(?:TRK|SF|JD|YT|ZTO|EMS)\d{8,16})\b"),
    ),
)
#: The noun of each kind, English and Chinese (Simplified: the checker folds Traditional).
_NOUNS = (
    ("tracking", r"tracking|waybill|运单|快递单|物流单|追踪|跟踪"),
    ("order", r"orders?|purchase|订单|单子"),
    ("refund", r"refunds?|reimbursement|退款|退款单"),
    ("ticket", r"tickets?|case|工单|案例|个案"),
)
#: What may stand between a noun and its id: a number word, a copula, a colon.
_BETWEEN = r"(?:\s|number|no\.?|id|#|is|was|:|：|号码|编号|号|是|为)*"
_NOUN_BEFORE = [
    (kind, re.compile(rf"(?:^|[^a-z])(?:{nouns}){_BETWEEN}$", re.I)) for kind, nouns in _NOUNS
]
#: A pronoun equated with an id ("if it is 1Z…", "this is RF-…", 它是…): what is it?
_PRONOUN_BEFORE = re.compile(
    r"\b(?:it|this|that|which|what)(?:'s|\s+(?:is|was|will be|would be))\s*$|"
    r"(?:它|这|那)(?:个)?是\s*$",
    re.I,
)


def _id_reason(sentence: str) -> str | None:
    """An id named by another kind's noun, or equated with a pronoun."""
    sentence = to_simplified(sentence)
    for kind, pattern in _ID_KINDS:
        for match in pattern.finditer(sentence):
            before = sentence[max(0, match.start() - 40) : match.start()]
            if _PRONOUN_BEFORE.search(before):
                return f"broken: {match.group(0)} is called 'it'"
            named = [k for k, noun in _NOUN_BEFORE if noun.search(before)]
            if named and kind not in named and not (kind == "tracking" and before.endswith("单号")):
                return f"broken: the {kind} id {match.group(0)} is called a {named[0]}"
    return None


# --- clauses ---------------------------------------------------------------------------------

_AUX = (
    "can could will would should may might must shall is are was were am be been being do does "
    "did has have had"
)
#: A clause that stops at an auxiliary or a modal ("…, and you can.", "your order is."), unless
#: it is of :data:`_EN_FORM`'s ``ellipsis_ok``.
_STOPS = re.compile(rf"\b(?:{'|'.join(_AUX.split())})\s*$", re.I)
#: Clause forms, English (case folded): ``ellipsis_ok``, a comparison or a condition's clause,
#: which may stop at an auxiliary ("if you can", "as soon as we can", "than it was");
#: ``no_noun``, a determiner or possessive whose noun is missing (a participle or state word,
#: then the clause's end: "Your approved, …", "the shipped."); ``question``, a question's
#: opening, which needs its question mark ("Could you trouble.").
_EN_FORM = {
    name: re.compile(pattern, re.I)
    for name, pattern in (
        ("ellipsis_ok", r"\b(?:if|as|than|whenever|when|so|whether|because|how|what|where|who|"
                        r"which|however)\b"),
        ("no_noun", r"\b(?:your|my|our|their|its|the|this|that)\s+(?:\w+(?<!ee)ed|approved|"
                    r"shipped|delivered|cancelled|canceled|declined|eligible|pending)\s*$"),
        ("question", r"^\W*(?:could|would|can|will|do|did|does|are|is|have|has|shall|should) "
                     r"(?:you|we|i)\b"),
    )
}  # fmt: skip
_EN_CLAUSES = re.compile(r"[,;:]|\s(?:and|but|or|so)\s|[.!?]\s*$")


def ill_formed(sentence: str, lang: Lang) -> str | None:
    """Why ``sentence`` (NFKC, one sentence) is not clearly well formed, or None: an id
    called by another kind's noun or equated with a pronoun; in English, a clause that stops
    at an auxiliary or whose determiner has no noun, a question put with a full stop."""
    reason = _id_reason(sentence)
    if reason is not None or lang != "en":
        return reason
    if _EN_FORM["question"].search(sentence) and not sentence.rstrip().endswith("?"):
        return "broken: a question without a question mark"
    for clause in _EN_CLAUSES.split(sentence):
        if _STOPS.search(clause) and not _EN_FORM["ellipsis_ok"].search(clause):
            return f"broken: a clause stops at {clause.split()[-1]!r}"
        no_noun = _EN_FORM["no_noun"].search(clause)
        if no_noun is not None:
            return f"broken: no noun after {no_noun.group(0).strip()!r}"
    return None
