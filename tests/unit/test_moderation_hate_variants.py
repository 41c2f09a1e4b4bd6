"""benchmarks/moderation_hate_variants.py: the verdict's hate rule and the F1 it reports."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.moderation_hate_variants import Data, guess, main, prf


def _data(y: list[int], lexflag: list[bool], crit: list[bool], slur: list[bool]) -> Data:
    n = len(y)
    return Data(
        texts=[f"post {i}" for i in range(n)],
        norm=[f"post {i}" for i in range(n)],
        spans=[() for _ in range(n)],
        y=np.array(y),
        y3=np.array([2 * v for v in y]),
        share=np.array(y, dtype=float),
        labelled=np.ones(n, dtype=bool),
        lexflag=np.array(lexflag),
        crit=np.array(crit),
        slur=np.array(slur),
    )


def test_the_rule_is_the_verdicts() -> None:
    # rows: critical term; slur at 0.4; no slur at 0.4; no slur at 0.9; not flagged at 0.99
    d = _data(
        [1, 1, 0, 1, 1],
        [True, True, True, True, False],
        [True, False, False, False, False],
        [False, True, False, False, False],
    )
    p = np.array([0.0, 0.4, 0.4, 0.9, 0.99])
    g = guess(d, p, np.arange(5), (0.3, 0.8))
    assert g.tolist() == [True, True, False, True, False]
    # a higher slur threshold withdraws the slur's hate label; the critical term stays hate
    assert guess(d, p, np.arange(5), (0.5, 0.8)).tolist() == [True, False, False, True, False]


def test_hate_posts_left_out_of_the_rows_count_against_recall() -> None:
    d = _data([1, 1, 0], [True, True, True], [False] * 3, [False] * 3)
    g = np.array([True, False, True])
    f1, prec, rec = prf(d, g, np.arange(3))
    assert (prec, rec) == (0.5, 0.5)
    assert f1 == pytest.approx(0.5)
    kept = d.subset(np.array([True, False, True]))
    assert kept.missed == 1 and kept.y.tolist() == [1, 0]
    _, _, rec_kept = prf(kept, np.array([True, False]), np.arange(2), missed=kept.missed)
    assert rec_kept == 0.5


def test_help_names_the_module(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "python -m benchmarks.moderation_hate_variants" in capsys.readouterr().out
