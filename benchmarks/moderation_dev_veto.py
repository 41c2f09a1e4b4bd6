"""An anti-bias veto for the Chinese scorer, tried on dev only (issue 47, session 7; not packaged).

Issue 47 asks for anti-bias posts flagged at 20% or less with Chinese flagged F1 at 0.75 or
more. Every change of the scorer's features or weights tried before (``moderation_ablation``,
``moderation_dev_experiments``, ``moderation_dev_transfer``) moved the two together. This tries
a second model instead: a logistic regression over the same features (char n-grams, cues,
lexicon hits) fitted on the fine-labelled COLD train rows to tell anti-bias posts from the
others, whose probability vetoes the scorer's flag (never a high or critical term). It reports:

* the veto model's dev ROC AUC, anti-bias against all fine-labelled posts and against the
  offensive ones only (how well the two can be told apart at all);
* lexicon + scorer on dev, per review threshold and veto level: P, R, F1, anti-bias and safe
  posts flagged;
* the packaged configuration's flag rate per COLD fine label on dev (where the misses are).

Test, the held-out topic and the fresh split are never read.

Usage, from the repository root::

    python -m benchmarks.moderation_dev_veto

Writes ``benchmarks/results/moderation_dev_veto.{json,md}`` (``--out``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from benchmarks.moderation_ablation import _figures, finish, start
from workflows.content_moderation.dataset import LabelledPost
from workflows.content_moderation.fitting import FIT_SETTINGS, EvalRows, fit_one
from workflows.content_moderation.scorer import SEED, features, hashed_matrix, lexicon_features

FINE = ("other", "individual", "group", "anti-bias")
THRESHOLDS = (0.45, 0.55)
VETOES = (None, 0.5, 0.6, 0.7)


def _matrix(posts: list[LabelledPost], spans: list[Any]) -> Any:
    rows = [features(p.text) + lexicon_features(s) for p, s in zip(posts, spans, strict=True)]
    return hashed_matrix(rows)


def _rows(posts: list[LabelledPost], flags: dict[str, Any]) -> EvalRows:
    return EvalRows(
        y=np.array([p.truth["flagged"] for p in posts], dtype=np.int64),
        lex=flags["strong"],
        plain=np.array([p.fine == "ordinary" for p in posts]),
        cand=~flags["speech"],
        term=flags["term"],
    )


def _anti_bias_model(train: list[LabelledPost], x: Any, dev_x: Any, offensive_only: bool) -> Any:
    """Probability of anti-bias on dev, from the fine-labelled train rows (anti-bias against
    all others, or against the offensive ones only)."""
    from sklearn.linear_model import LogisticRegression

    keep = [
        i for i, p in enumerate(train)
        if p.fine in FINE and (not offensive_only or p.fine == "anti-bias" or p.truth["flagged"])
    ]  # fmt: skip
    y = np.array([train[i].fine == "anti-bias" for i in keep])
    model = LogisticRegression(C=1.0, solver="liblinear", class_weight="balanced",
                               random_state=SEED, max_iter=1000).fit(x[keep], y)  # fmt: skip
    return model.predict_proba(dev_x)[:, 1]


def main(argv: list[str] | None = None) -> int:
    from sklearn.metrics import roc_auc_score

    args, data = start("moderation_dev_veto", __doc__, argv)
    train, dev, tr, dv = data["train"], data["dev"], data["train_flags"], data["dev_flags"]
    x, dev_x = _matrix(train, tr["spans"]), _matrix(dev, dv["spans"])
    c, min_precision, grid_start = FIT_SETTINGS["zh/flagged"]
    model = fit_one(x, _rows(train, tr), c=c, min_precision=min_precision, seed=SEED,
                    grid_start=grid_start, solo=True, dev=(dev_x, _rows(dev, dv)),
                    clears=True)  # fmt: skip
    p = model.probability(dev_x)
    labelled = np.array([q.fine != "ordinary" for q in dev])
    posts = [q for q, k in zip(dev, labelled, strict=True) if k]
    anti = np.array([q.fine == "anti-bias" for q in dev])
    fine = np.array([q.fine in FINE for q in dev])
    offensive = fine & (anti | np.array([q.truth["flagged"] for q in dev]))
    figures: dict[str, Any] = {"review": model.review, "auc": {}, "rows": {}}
    lines = ["| veto model fitted on | dev ROC AUC, anti-bias vs all | vs offensive |",
             "|---|---|---|"]  # fmt: skip
    vetoes = {}
    for name, off in (("anti-bias vs all", False), ("anti-bias vs offensive", True)):
        pab = vetoes[name] = _anti_bias_model(train, x, dev_x, off)
        auc = (roc_auc_score(anti[fine], pab[fine]), roc_auc_score(anti[offensive], pab[offensive]))
        figures["auc"][name] = [round(float(a), 4) for a in auc]
        lines.append(f"| {name} | {auc[0]:.3f} | {auc[1]:.3f} |")
    lines += ["", "| review ≥ | veto (model ≥) | P | R | F1 | anti-bias flagged | safe flagged |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for t in THRESHOLDS:
        for name, pab in vetoes.items():
            for a in VETOES if name == "anti-bias vs all" else VETOES[1:]:
                veto = np.zeros(len(dev), bool) if a is None else pab >= a
                flagged = dv["strong"] | ((p >= t) & ~dv["speech"] & ~veto)
                fig = _figures(posts, flagged[labelled])
                key = f"{t:.2f} / {'none' if a is None else f'{name} ≥ {a}'}"
                figures["rows"][key] = fig
                lines.append(
                    f"| {t:.2f} | {'none' if a is None else f'{name} ≥ {a}'} | {fig['precision']} "
                    f"| {fig['recall']} | {fig['f1']} | {fig['anti_bias_flagged']:.1%} "
                    f"| {fig['safe_flagged']:.1%} |"
                )
    flagged = dv["strong"] | ((p >= model.review) & ~dv["speech"])
    rates = Counter(q.fine for q, f in zip(dev, flagged, strict=True) if f)
    totals = Counter(q.fine for q in posts)
    figures["per_fine_label"] = {k: [rates[k], n] for k, n in sorted(totals.items())}
    lines += ["", f"Flagged per COLD fine label at the refit's review ≥ {model.review:.2f} (dev):",
              "", "| fine label | flagged | of |", "|---|---|---|"]  # fmt: skip
    lines += [f"| {k} | {rates[k]} | {n} |" for k, n in sorted(totals.items())]
    title = "Chinese scorer: an anti-bias veto (dev only; not packaged)"
    finish(args, "moderation_dev_veto", title, data, lines, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
