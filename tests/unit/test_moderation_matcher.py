"""Normalisation and term matching: obfuscations are undone and every span points back into
the original text."""

from __future__ import annotations

import pytest
from case_tables import cases

from workflows.content_moderation.matcher import Lexicon, Matcher
from workflows.content_moderation.matcher_text import squeeze
from workflows.content_moderation.normalize import homoglyph_table, normalize, scripts_report


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Lexicon(reload_interval=None).matcher()


def hits(matcher: Matcher, text: str) -> list[tuple[str, str, str]]:
    """(term, how, original span text) of every hit, checking each span on the way."""
    out = []
    for h in matcher.scan(text).hits:
        assert text[h.start : h.end] == h.text, "a span must index the original text"
        out.append((h.term, h.how, h.text))
    return out


def test_normalize_maps_every_character_back_to_the_original() -> None:
    text = "Ｆ\u200bυсk &amp; fück"
    n = normalize(text)
    assert n.text == "fuck & fuck"
    assert n.removed == 1  # the zero-width space
    assert n.span(0, 4) == (0, 5)  # full-width F, zero-width space, Greek upsilon, Cyrillic es
    assert text[slice(*n.span(5, 6))] == "&amp;"
    assert text[slice(*n.span(7, 11))] == "fück"


def test_homoglyph_table_comes_from_unicode_confusables() -> None:
    table = homoglyph_table()
    assert len(table) > 1000
    assert table["а"] == "a" and table["ѕ"] == "s"  # Cyrillic
    assert not any("\u4e00" <= c <= "\u9fff" for c in table)  # Chinese is never folded


@pytest.mark.parametrize(("text", "term", "how"), cases("moderation_matcher.toml", "obfuscated"))
def test_obfuscated_terms_are_found(matcher: Matcher, text: str, term: str, how: str) -> None:
    assert (term, how) in [(t, h) for t, h, _ in hits(matcher, text)]


@pytest.mark.parametrize(
    "text",
    [
        "I passed the class assignment",  # ass inside a word
        "Scunthorpe is a town",
        "a cocktail in the cockpit",
        "the therapist said",
        "assess the assets",
        "我每天都去操场做体操",  # 操 in innocent words
        "这个东西逼真得很",
        "垃圾分类很重要",
        "nigerian prince",
        "white people",  # no fuzzy whitey
    ],
)
def test_innocent_text_is_not_flagged(matcher: Matcher, text: str) -> None:
    assert hits(matcher, text) == []


def test_nested_lower_severity_hit_is_dropped(matcher: Matcher) -> None:
    found = hits(matcher, "你这个傻逼")
    assert [t for t, _, _ in found] == ["傻逼"]  # not also the single character 逼


def test_chinese_match_does_not_join_sentences(matcher: Matcher) -> None:
    assert "傻逼" not in [t for t, _, _ in hits(matcher, "他真傻。逼得我没办法")]


def test_spans_are_in_text_order_and_cover_long_text(matcher: Matcher) -> None:
    text = "clean words " * 5000 + "and then a bitch at the end"
    result = matcher.scan(text)
    assert [h.term for h in result.hits] == ["bitch"]
    assert text[result.hits[0].start : result.hits[0].end] == "bitch"


def test_squeeze_and_scripts() -> None:
    assert squeeze("fuuuuck") == "fuck"
    scripts, mixed = scripts_report("pаypal 你好")  # Cyrillic а inside a Latin word
    assert scripts == ("Cyrillic", "Han", "Latin") and mixed == 1


# Latin forms of Chinese terms (abbreviations, pinyin, Latin variants) count only in Chinese
# context: the same letters are ordinary in English text (bills, shops, model numbers, names).
@pytest.mark.parametrize(
    "text",
    [
        "SB 1047 is a California AI bill",
        "I bought headphones at JB Hi-Fi",
        "the TMD-200 and NB3 models ship today",
        "NC State beat Duke",
        "CNM certification exam next week",
        "the NMB mediates rail disputes",
        "WC is down the hall",
        "NB: read the terms first",
        "the gang can help you move",  # pinyin gang + can = 港灿
        "Guinan is a Star Trek character",  # pinyin of 龟男
        "an SB Nation article about the draft",
        "FLG is the flag register on this chip",
        "wan wan is so cute",
        "加州SB 1047法案通过了",  # a bill number inside Chinese text
        "我在JB Hi-Fi买的耳机",  # a shop name inside Chinese text
    ],
)
def test_chinese_abbreviations_do_not_fire_on_english_text(matcher: Matcher, text: str) -> None:
    assert hits(matcher, text) == []


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("你真是个SB", "傻逼"),
        ("你这个sb，滚", "傻逼"),
        ("NMSL", "你妈死了"),  # a post of Chinese-style words only
        ("wcnm sb", "操你妈"),
        ("ni shi sha bi", "傻逼"),  # all pinyin
        ("you are such a shabi", "傻逼"),  # a spelled-out pinyin word of no language
        ("go caonima", "操你妈"),
        ("他就是个jb", "鸡巴"),
        ("你们这些heigui", "黑鬼"),
    ],
)
def test_chinese_abbreviations_count_in_chinese_context(
    matcher: Matcher, text: str, term: str
) -> None:
    assert term in [t for t, _, _ in hits(matcher, text)]


def test_pinyin_split_reads_syllables() -> None:
    from workflows.content_moderation.wordlists import pinyin_split

    assert pinyin_split("shabi") == 2 and pinyin_split("ni") == 1
    assert pinyin_split("help") == 0 and pinyin_split("mn") == 0  # no vowel-less syllables


# Obfuscated English threats and self-harm: leetspeak, spacing, slang, inside phrases.
@pytest.mark.parametrize(
    ("text", "term", "severities"),
    [
        ("k1ll yourself", "kill yourself", {"critical"}),
        ("k i l l yourself", "kill yourself", {"critical"}),
        ("K.I.L.L Y.O.U.R.S.E.L.F", "kill yourself", {"critical"}),
        ("k-i-l-l yourself now", "kill yourself", {"critical"}),
        ("killyourself", "kill yourself", {"critical"}),
        ("ki11 ur$elf", "kill yourself", {"critical"}),  # 1 read as l, $ as s
        ("just unalive yourself", "kill yourself", {"critical"}),
        ("go d!e", "kill yourself", {"critical"}),
        ("h0pe you d1e", "hope you die", {"high"}),
        ("i w1ll k1ll you", "i will kill you", {"high"}),
        ("so d!e", "die", {"medium"}),  # a disguised ordinary word
        ("just d!e already", "kill yourself", {"critical"}),  # a death wish (tester6 finding 11)
        ("s h o o t", "shoot", {"medium"}),
        ("I want to unalive myself", "kill myself", {"medium"}),
    ],
)
def test_obfuscated_threats_and_self_harm_are_found(
    matcher: Matcher, text: str, term: str, severities: set[str]
) -> None:
    found = {h.term: h.severity.value for h in matcher.scan(text).hits}
    assert term in found and found[term] in severities, found


@pytest.mark.parametrize(
    "text",
    [
        "my phone batteries die after a year",
        "kill the process and restart it",
        "a photo shoot in the park",
        "the murder mystery novel",
        "die Katze ist schwarz",  # German article
        "I was 1 of 3 winners",
    ],
)
def test_plain_violent_words_are_ordinary(matcher: Matcher, text: str) -> None:
    assert hits(matcher, text) == []
