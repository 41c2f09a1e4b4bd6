"""Lexicon and policy files: validated with file:line errors, reloadable, table total."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from workflows.content_moderation.lexicon import (
    DEFAULT_LEXICON_DIR,
    LexiconError,
    load_lexicon,
)
from workflows.content_moderation.matcher import Lexicon
from workflows.content_moderation.policy import (
    DEFAULT_POLICY_PATH,
    LEXICON_STATES,
    MODEL_STATES,
    PolicyError,
    load_policy,
)
from workflows.content_moderation.verdict import Decision

GOOD = 'category = "harassment"\n\n[[term]]\ntext = "meanie"\nseverity = "medium"\n'


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_packaged_lexicon_loads_with_every_file(tmp_path: Path) -> None:
    data = load_lexicon()
    assert len(data.terms) > 150 and len(data.version) == 12
    assert {c.value for c, _ in data.terms} >= {"hate", "harassment", "political_sensitivity"}


def test_bad_severity_names_file_and_line(tmp_path: Path) -> None:
    text = GOOD + '\n[[term]]\ntext = "jerk"\nseverity = "awful"\n'
    path = write(tmp_path, "x.toml", text)
    with pytest.raises(LexiconError) as info:
        load_lexicon(tmp_path)
    bad_line = text.splitlines().index('severity = "awful"') + 1
    assert info.value.path == path and info.value.line == bad_line
    assert "term.1.severity" in str(info.value)


def test_bad_toml_and_duplicate_category_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "a", "x.toml", 'category = "hate"\n[[term]\n')
    with pytest.raises(LexiconError, match=r"x.toml:2: not valid TOML"):
        load_lexicon(tmp_path / "a")
    write(tmp_path / "b", "one.toml", GOOD)
    write(tmp_path / "b", "two.toml", GOOD)
    with pytest.raises(LexiconError, match=r"already defined in one\.toml"):
        load_lexicon(tmp_path / "b")
    with pytest.raises(LexiconError, match="not found"):
        load_lexicon(tmp_path / "missing")


def test_chinese_term_with_word_mode_is_refused(tmp_path: Path) -> None:
    write(
        tmp_path, "x.toml", GOOD + '\n[[term]]\ntext = "傻瓜"\nseverity = "low"\nmatch = "prefix"\n'
    )
    with pytest.raises(LexiconError, match="Chinese terms always match as substrings"):
        load_lexicon(tmp_path)


def test_obfuscated_only_is_for_single_english_words(tmp_path: Path) -> None:
    bad = GOOD + '\n[[term]]\ntext = "go die"\nseverity = "medium"\nobfuscated_only = true\n'
    write(tmp_path, "x.toml", bad)
    with pytest.raises(LexiconError, match="obfuscated_only is for single lower-case English"):
        load_lexicon(tmp_path)


def test_lexicon_reloads_on_change_and_keeps_the_last_good_one(tmp_path: Path) -> None:
    folder = tmp_path / "lex"
    path = write(folder, "h.toml", GOOD)
    lexicon = Lexicon(folder, reload_interval=0)
    assert [h.term for h in lexicon.matcher().scan("you meanie").hits] == ["meanie"]
    v1 = lexicon.version
    write(folder, "h.toml", GOOD.replace("meanie", "grump"))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert [h.term for h in lexicon.matcher().scan("you grump").hits] == ["grump"]
    assert lexicon.version != v1
    write(folder, "h.toml", "category = 3\n")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 2 * 10**9))
    assert [h.term for h in lexicon.matcher().scan("you grump").hits] == ["grump"]
    assert lexicon.last_error is not None and "h.toml" in lexicon.last_error


def test_policy_table_is_total_and_spot_checks_hold() -> None:
    policy = load_policy()
    for lex in LEXICON_STATES:
        for model in MODEL_STATES:
            assert policy.decide(lex, model).decision in set(Decision)
    assert policy.decide("critical", "allow").decision is Decision.BLOCK
    assert policy.decide("high", "uncertain").decision is Decision.BLOCK
    assert policy.decide("medium", "allow").decision is Decision.REVIEW
    assert policy.decide("none", "block").decision is Decision.REVIEW  # disagreement
    assert policy.decide("none", "absent").decision is Decision.ALLOW


def test_policy_gap_and_dead_rule_are_refused(tmp_path: Path) -> None:
    text = DEFAULT_POLICY_PATH.read_text(encoding="utf-8")
    gap = text.replace('id = "nothing-judged"', 'id = "nothing-judged-x"').replace(
        'lexicon = ["absent"]\nmodel = ["absent"]', 'lexicon = ["absent"]\nmodel = ["allow"]'
    )
    path = write(tmp_path, "gap.toml", gap)
    with pytest.raises(PolicyError, match="no rule decides lexicon='absent', model='absent'"):
        load_policy(path)
    dead = text + '\n[[rule]]\nid = "late"\nlexicon = ["high"]\nmodel = ["*"]\n' \
        'decision = "allow"\nreason = "never reached"\n'  # fmt: skip
    path = write(tmp_path, "dead.toml", dead)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert "never fires" in str(info.value) and info.value.line is not None


def _policy_error(tmp_path: Path, bad_line: str) -> tuple[str, PolicyError]:
    """``(policy text, error)`` of loading the packaged policy with its first
    ``decision = "block"`` line replaced by ``bad_line``."""
    text = DEFAULT_POLICY_PATH.read_text(encoding="utf-8").replace(
        'decision = "block"', bad_line, 1
    )
    path = write(tmp_path, "p.toml", text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    return text, info.value


def test_policy_bad_decision_names_line(tmp_path: Path) -> None:
    text, err = _policy_error(tmp_path, 'decision = "delete"')
    assert "decision" in str(err)
    assert err.line is not None
    assert text.splitlines()[err.line - 1].startswith("decision")


def test_packaged_folder_copy_gives_same_version(tmp_path: Path) -> None:
    shutil.copytree(DEFAULT_LEXICON_DIR, tmp_path / "copy")
    assert load_lexicon(tmp_path / "copy").version == load_lexicon().version


def test_policy_toml_syntax_error_names_its_line(tmp_path: Path) -> None:
    text, err = _policy_error(tmp_path, 'decision = = "block"')
    line = text.splitlines().index('decision = = "block"') + 1
    assert err.line == line and f"p.toml:{line}: not valid TOML" in str(err)


def test_a_bad_policy_is_not_a_lexicon_error(tmp_path: Path) -> None:
    path = write(tmp_path, "p.toml", "version = 1\n")
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert not isinstance(info.value, LexiconError)
    reason = "version: Input should be a valid string (and 1 more problem(s))"
    assert str(info.value) == f"{path}:1: {reason}"


def test_the_taxonomy_file_needs_every_category_once(tmp_path: Path) -> None:
    from workflows.content_moderation.verdict import (
        TAXONOMY,
        TAXONOMY_PATH,
        Category,
        _load_taxonomy,
    )

    assert set(TAXONOMY) == set(Category) and TAXONOMY[Category.HATE].mlcommons == ("S10",)
    text = TAXONOMY_PATH.read_text(encoding="utf-8")
    broken = tmp_path / "taxonomy.toml"
    broken.write_text(text.replace("[spam]", "[spam_and_ads]"), encoding="utf-8")
    with pytest.raises(ValueError, match="one table per category"):
        _load_taxonomy(broken)
