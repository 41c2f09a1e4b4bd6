"""Issue 47, session 11: the COLD pool of the dev study ``benchmarks/moderation_dev_coldtrain.py``
follows its stated rule on a checkout written here: no held-out-topic row, no text of a file the
protocol evaluates on (shared sample, COLD's fine-labelled file, the fresh file), no repeat, and
the texts anonymised; the study's char 4-grams are those of the Chinese runs."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.unit.moderation_data import DATA, needs_data
from workflows.content_moderation.dataset import FINE_FILE, FRESH_FILE, HELDOUT_TOPIC


def _first_text(path: Path) -> str:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return next(csv.DictReader(handle))["TEXT"]


@needs_data
def test_the_pool_leaves_out_the_held_out_topic_evaluated_texts_and_repeats(
    tmp_path: Path,
) -> None:
    from benchmarks.moderation_dev_coldtrain import pool

    sample = _first_text(DATA / "moderation/cold_zh_offensive_sample.csv")
    rows = [
        ("race", "1", "这句只在池子里出现，联系13812345678"),
        ("region", "0", "这句只在池子里出现，联系13812345678"),  # a repeat once anonymised
        (HELDOUT_TOPIC, "1", "另一句只在池子里的话"),
        ("race", "0", _first_text(FINE_FILE)),
        ("region", "1", _first_text(FRESH_FILE)),
        ("race", "1", sample),
        ("region", "0", "第二句只在池子里的话"),
    ]
    folder = tmp_path / "COLDataset"
    folder.mkdir()
    for name, part in (("train.csv", rows[:4]), ("dev.csv", rows[4:])):
        with (folder / name).open("w", encoding="utf-8", newline="") as handle:
            out = csv.writer(handle)
            out.writerow(["", "split", "topic", "label", "TEXT"])
            out.writerows([i, name[:-4], *row] for i, row in enumerate(part))
    got = pool(tmp_path)
    assert [(p.text, p.truth["flagged"], p.topic) for p in got] == [
        ("这句只在池子里出现，联系<PHONE>", True, "race"),
        ("第二句只在池子里的话", False, "region"),
    ]
    assert all(p.part == "train" and p.split == "tune" for p in got)


def test_four_grams_are_those_of_each_chinese_run() -> None:
    from benchmarks.moderation_dev_generalise import four_grams

    assert four_grams("河南人都是 ok 好人") == ["q:河南人都", "q:南人都是"]
    assert four_grams("歧視") == []
