"""Changes tried on the Chinese scorer for issue 47 (dev part only; none is packaged).

Each row refits the stacked ``zh/flagged`` model on the train part with one change, calibrates
it (Platt) on dev and picks its review threshold by the packaged rule
(:func:`~workflows.content_moderation.fitting.choose_thresholds`), then reports the Chinese dev
figures of lexicon + scorer. The last column is the best dev F1 among thresholds that keep
COLD's anti-bias posts flagged at 20% or less (the issue's target): the trade-off each change
makes. Test, the held-out topic and the fresh split are never read.

Changes: regularisation C; a separate anti-bias class (multinomial: offensive / anti-bias /
other safe; the offensive probability is used); anti-bias training posts weighted 2x; the two
COLD files weighted equally (source balance); stance features by position (cues of the first
and last sentence, cue counts, length).

Usage, from the repository root::

    python -m benchmarks.moderation_dev_experiments

Writes ``benchmarks/results/moderation_dev_experiments.{json,md}`` (``--out``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from benchmarks.moderation_ablation import _figures, finish, start
from workflows.content_moderation.dataset import FINE_FILE, LabelledPost
from workflows.content_moderation.fitting import EvalRows, choose_thresholds, platt
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.scorer import SEED, features, hashed_matrix, lexicon_features
from workflows.content_moderation.zh_cues import CUE_NAMES, SENTENCE, load_zh_cues


def stance_features(text: str) -> list[str]:
    """Cues of the first and the last sentence, counts of three cues (capped at 3), length."""
    s = normalize(text).text
    cues = load_zh_cues()
    sentences = [x for x in SENTENCE.findall(s) if x.strip()] or [s]
    out = []
    for tag, sentence in (("first", sentences[0]), ("last", sentences[-1])):
        out += [f"z:{tag}:{n}" for n in CUE_NAMES if cues.patterns[n].search(sentence)]
    for name in ("anti", "insult", "target"):
        out.append(f"z:n:{name}:{min(len(cues.patterns[name].findall(s)), 3)}")
    return [*out, f"z:len:{min(len(s) // 40, 4)}"]


class Change(NamedTuple):
    """One row: C, a multinomial anti-bias class, anti-bias weight, source balance, extra."""

    c: float = 1.0
    multi: bool = False
    anti_weight: float = 1.0
    source_balance: bool = False
    extra: Callable[[str], list[str]] | None = None


CHANGES: dict[str, Change] = {
    "packaged (C=1)": Change(),
    **{f"C={c}": Change(c=c) for c in (0.3, 0.5, 2.0, 4.0)},
    "separate anti-bias class (multinomial, C=1)": Change(multi=True),
    "separate anti-bias class (multinomial, C=4)": Change(multi=True, c=4.0),
    "anti-bias posts weighted 2x, C=2": Change(anti_weight=2.0, c=2.0),
    "COLD files weighted equally": Change(source_balance=True),
    "+ stance by position and counts": Change(extra=stance_features),
}


def _decision_values(ch: Change, train: Sequence[LabelledPost], xtr: Any, xdv: Any) -> Any:
    """Fit one change on train; its decision values on dev."""
    from sklearn.linear_model import LogisticRegression

    y = np.array([p.truth["flagged"] for p in train], dtype=np.int64)
    anti = np.array([p.fine == "anti-bias" for p in train])
    if ch.multi:
        classes = np.where(y == 1, 1, np.where(anti, 2, 0))
        model = LogisticRegression(C=ch.c, max_iter=3000, class_weight="balanced")
        off = model.fit(xtr, classes).predict_proba(xdv)[:, list(model.classes_).index(1)]
        off = np.clip(off, 1e-9, 1 - 1e-9)
        return np.log(off / (1 - off))
    w = np.where(y == 1, len(y) / 2 / y.sum(), len(y) / 2 / (len(y) - y.sum()))
    w = w * np.where(anti, ch.anti_weight, 1.0)
    if ch.source_balance:
        fine = np.array([p.source == FINE_FILE.name for p in train])
        w = w * np.where(fine, (~fine).sum() / fine.sum(), 1.0)
    model = LogisticRegression(C=ch.c, solver="liblinear", random_state=SEED, max_iter=1000)
    return model.fit(xtr, y, sample_weight=w).decision_function(xdv)


def run_change(ch: Change, data: dict[str, Any]) -> dict[str, Any]:
    """Fit, calibrate on dev, choose the threshold; the dev figures at it."""
    train, dev, tr, dv = data["train"], data["dev"], data["train_flags"], data["dev_flags"]

    def matrix(posts: Sequence[LabelledPost], spans: Sequence[Any]) -> Any:
        extra = ch.extra or (lambda _t: [])
        return hashed_matrix(
            [features(p.text) + lexicon_features(s) + extra(p.text)
             for p, s in zip(posts, spans, strict=True)]
        )  # fmt: skip

    z = _decision_values(ch, train, matrix(train, tr["spans"]), matrix(dev, dv["spans"]))
    rows = EvalRows(
        y=np.array([p.truth["flagged"] for p in dev], dtype=np.int64), lex=dv["strong"],
        plain=np.array([p.fine == "ordinary" for p in dev]), cand=~dv["speech"], term=dv["term"],
    )  # fmt: skip
    a, b = platt(z, rows.y)
    p = 1 / (1 + np.exp(-(a * z + b)))
    review, _high, _fig = choose_thresholds(p, rows, min_precision=0.0, grid_start=0.30, solo=True)
    labelled = ~rows.plain.astype(bool)
    posts = [q for q, k in zip(dev, labelled, strict=True) if k]

    def at(t: float) -> dict[str, float]:
        return _figures(posts, (dv["strong"] | ((p >= t) & ~dv["speech"]))[labelled])

    under = [at(float(t)) for t in np.round(np.arange(0.30, 0.95, 0.01), 2)]
    best = max((r["f1"] for r in under if r["anti_bias_flagged"] <= 0.20), default=0.0)
    return {"review": review, **at(review), "f1_at_anti_bias_20": best}


def main(argv: list[str] | None = None) -> int:
    args, data = start("moderation_dev_experiments", __doc__, argv)
    results = {name: run_change(ch, data) for name, ch in CHANGES.items()}
    lines = ["| change | review ≥ | P | R | F1 | anti-bias flagged | safe flagged | "
             "best F1 with anti-bias ≤ 20% |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['review']:.2f} | {r['precision']} | {r['recall']} | {r['f1']} | "
            f"{r['anti_bias_flagged']:.1%} | {r['safe_flagged']:.1%} | "
            f"{r['f1_at_anti_bias_20']} |"
        )
    finish(args, "moderation_dev_experiments",
           "Chinese scorer: changes tried on dev (issue 47; none packaged)", data, lines,
           {"changes": results})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
