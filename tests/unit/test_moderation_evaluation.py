"""The labelled moderation set, its held-out split and the metrics.

Reads the real posts of ../shared/data/moderation/ (davidson_hate_offensive_sample.csv,
jigsaw_toxic_sample.csv, cold_zh_offensive_sample.csv; sources in ../shared/data/SOURCES.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.exceptions import UserError
from workflows.content_moderation.dataset import load_moderation_set, read_posts
from workflows.content_moderation.evaluation import evaluate_lexicon, label_metrics


def test_split_is_stable_disjoint_and_about_half(data_dir: Path) -> None:
    everything = load_moderation_set(data_dir, "all")
    again = load_moderation_set(data_dir, "all")
    assert [(p.id, p.split) for p in everything] == [(p.id, p.split) for p in again]
    test = {p.id for p in everything if p.split == "test"}
    tune = {p.id for p in everything if p.split == "tune"}
    assert not test & tune and len(test) + len(tune) == len(everything)
    assert 0.4 < len(test) / len(everything) < 0.6


def test_label_schemes_are_read_from_the_columns(data_dir: Path) -> None:
    folder = data_dir / "moderation"
    davidson = read_posts(folder / "davidson_hate_offensive_sample.csv")
    assert {p.lang for p in davidson} == {"en"}
    hate = [p for p in davidson if p.truth["hate"]]
    assert hate and all("offensive" not in p.truth and p.truth["flagged"] for p in hate)
    cold = read_posts(folder / "cold_zh_offensive_sample.csv")
    assert {p.lang for p in cold} == {"zh"} and all(set(p.truth) == {"flagged"} for p in cold)
    jigsaw = read_posts(folder / "jigsaw_toxic_sample.csv")
    assert sum(p.truth["flagged"] for p in jigsaw) == 9  # toxic: 1 for 9 rows (SOURCES.md)


def test_file_without_label_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("text,score\nhello,1\n", encoding="utf-8")
    with pytest.raises(UserError, match="no label column"):
        read_posts(path)


def test_metric_arithmetic() -> None:
    m = label_metrics([(True, True), (True, False), (False, True), (False, False)], "flagged")
    assert (m.tp, m.support, m.predicted) == (1, 2, 2)
    assert m.precision == 0.5 and m.recall == 0.5 and m.f1 == 0.5
    none = label_metrics([(False, False)], "hate")
    assert none.precision == none.recall == none.f1 == 0.0


def test_lexicon_on_held_out_posts_beats_chance_per_language(data_dir: Path) -> None:
    posts = load_moderation_set(data_dir, "test")
    sample = [p for p in posts if p.lang == "en"][::4] + [p for p in posts if p.lang == "zh"][::4]
    report = evaluate_lexicon(sample)
    assert [s.system for s in report.systems] == ["lexicon", "scorer", "lexicon+scorer"]
    system = report.systems[0]
    for lang, floor in (("en", 0.85), ("zh", 0.5)):
        flagged = next(m for m in system.by_lang[lang] if m.label == "flagged")
        base_rate = flagged.support / flagged.n
        assert flagged.f1 >= floor, (lang, flagged)
        assert flagged.precision > base_rate + 0.1, (lang, flagged)
