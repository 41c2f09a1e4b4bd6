"""Issue 47: the fresh COLD split (drawn after the test part was burnt) follows its committed
rule, shares no post with anything the team fitted, tuned or looked at, and is never fitted on."""

from __future__ import annotations

import csv
from pathlib import Path

from benchmarks.moderation_fresh_split import anonymise, keep
from tests.unit.moderation_data import DATA, needs_data
from workflows.content_moderation.dataset import (
    FINE_FILE,
    FRESH_FILE,
    FRESH_PARTS,
    HELDOUT_TOPIC,
    load_moderation_set,
    part_of,
)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_fresh_row_follows_the_committed_rule() -> None:
    rows = _rows(FRESH_FILE)
    assert len(rows) > 2000
    texts = [r["TEXT"] for r in rows]
    assert len(set(texts)) == len(texts)
    assert all(keep(t) and anonymise(t) == t for t in texts)
    assert {r["split"] for r in rows} <= {"train", "dev"}  # COLD's own split: no test.csv row


@needs_data
def test_fresh_posts_are_in_no_other_file_the_team_read() -> None:
    fresh = {r["TEXT"].strip() for r in _rows(FRESH_FILE)}
    seen = {r["TEXT"].strip() for r in _rows(FINE_FILE)}
    seen |= {r["TEXT"].strip() for r in _rows(DATA / "moderation/cold_zh_offensive_sample.csv")}
    assert not fresh & seen


@needs_data
def test_the_fit_and_the_other_parts_never_read_the_fresh_file() -> None:
    for name in ("train", "dev", "test", "heldout-topic", "tune", "all"):
        assert all(p.source != FRESH_FILE.name for p in load_moderation_set(DATA, name))
    parts = {name: load_moderation_set(DATA, name) for name in FRESH_PARTS}
    assert all(p.topic == HELDOUT_TOPIC for p in parts["fresh-heldout-topic"])
    assert all(p.topic != HELDOUT_TOPIC for p in parts["fresh"])
    assert len(parts["fresh"]) + len(parts["fresh-heldout-topic"]) == len(_rows(FRESH_FILE))


def test_part_of_a_fresh_row_depends_on_its_topic_only() -> None:
    assert part_of(FRESH_FILE.name, "任意一句", "race") == "fresh"
    assert part_of(FRESH_FILE.name, "任意一句", HELDOUT_TOPIC) == "fresh-heldout-topic"
    assert part_of("other.csv", "任意一句", "race") not in FRESH_PARTS


def test_anonymise_replaces_contacts_and_keeps_words() -> None:
    assert anonymise("联系13812345678或a.b@c.com，见https://x.cn/p @某人") == (
        "联系<PHONE>或<EMAIL>，见<URL> @USER"
    )
    assert anonymise("广东人和河南人") == "广东人和河南人"
