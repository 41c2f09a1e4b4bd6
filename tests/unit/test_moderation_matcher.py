"""Normalisation and term matching: obfuscations are undone and every span points back into
the original text."""

from __future__ import annotations

import pytest

from workflows.content_moderation.matcher import Lexicon, Matcher, squeeze
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


@pytest.mark.parametrize(
    ("text", "term", "how"),
    [
        ("what the f*ck", "fuck", "masked"),
        ("F U C K you", "fuck", "spaced"),
        ("f.u.c.k", "fuck", "spaced"),
        ("fuuuuuck", "fuck", "repeated"),
        ("b!tch please", "bitch", "leet"),
        ("ｂｉｔｃｈ", "bitch", "exact"),  # full-width
        ("bіtch", "bitch", "exact"),  # Cyrillic і
        ("fu.ck off", "fuck", "joined"),
        ("bitches", "bitch", "infix"),
        ("hoes", "hoe", "inflected"),
        ("you are a faggots", "faggot", "prefix"),
        ("you f*cking idiot", "fuck", "masked"),
        ("kill yourself", "kill yourself", "exact"),
        ("KYS", "kill yourself", "exact"),
        ("你个傻 逼", "傻逼", "spaced"),
        ("傻😀逼", "傻逼", "spaced"),
        ("你就是个sb吧", "傻逼", "abbreviation"),
        ("sha bi", "傻逼", "pinyin"),
        ("cnm", "操你妈", "abbreviation"),
    ],
)
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
