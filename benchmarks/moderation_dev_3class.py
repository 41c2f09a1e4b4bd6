"""A three-class Chinese scorer, judged on the DEV part only (issue 47 item 2, session 10).

The packaged ``zh/flagged`` model is binary: COLD's anti-bias posts (safe posts that oppose,
report or quote discrimination) are negatives mixed with every other safe post, while they use
the same vocabulary as the offensive ones. Here the model learns them as a class of their own:
a multinomial logistic regression fitted on the TRAIN part with COLD's fine labels as
separate classes,

* ``offensive`` (COLD label 1: fine ``individual`` / ``group``, and the sample's offensive),
* ``anti-bias`` (fine label 3; only COLD's fine-labelled file has it),
* ``other`` (fine ``other``, the sample's safe posts, and the ordinary sentences) — or, in the
  four-class variants, ``other`` and ``ordinary`` apart,

over the packaged features (char 1-3-grams of the folded text, the :mod:`.zh_cues`, the
lexicon's hits) and, in some variants, the cue features of ``moderation_dev_generalise``
(negation, condemnation, reporting, target groups, second person). A post is scored by its
*margin*: the decision value of ``offensive`` less the largest of the other classes' (log
P(offensive) - log max P(other class)), or in the ``logit`` variants by log P(off) / (1 -
P(off)). The margin is calibrated (Platt) on dev and read by the packaged rules and at equal
anti-bias flags, exactly as ``moderation_dev_generalise`` reads its variants
(:func:`benchmarks.moderation_dev_generalise.judge`), so the tables compare.

Controls and mixes: the same solver with two classes (offensive against the rest), the
offensive class split by COLD's target label (individual / group), and the binary model's logit
less λ times the three-class model's anti-bias-over-offensive margin (:data:`COMBINED`).

The sample's safe posts carry no fine label (some are anti-bias); variants put them in
``other`` (weight 1 or 0.5) or leave them out of the fit.

Usage, from the repository root::

    python -m benchmarks.moderation_dev_3class

Writes ``benchmarks/results/moderation_dev_3class.{json,md}`` (``--out``). Test and the
held-out topic are never read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.moderation_ablation import finish, start
from benchmarks.moderation_dev_generalise import (
    CUES,
    DevFlags,
    _lines,
    _probabilities,
    cue_features,
    judge,
)
from workflows.content_moderation.dataset import LabelledPost
from workflows.content_moderation.fitting import platt
from workflows.content_moderation.policy import load_policy
from workflows.content_moderation.scorer import SEED, features, hashed_matrix, lexicon_features


def fine_class(p: LabelledPost, four: bool, targets: bool = False) -> str:
    """The class of a train post (see the module docstring); with ``targets`` an offensive
    post of the fine-labelled file is ``offensive-individual`` or ``offensive-group``."""
    if p.truth["flagged"]:
        split = targets and p.fine in ("individual", "group")
        return f"offensive-{p.fine}" if split else "offensive"
    if p.fine == "anti-bias":
        return "anti-bias"
    if four and p.fine == "ordinary":
        return "ordinary"
    return "other"


#: name -> settings: ``c``; ``four`` (ordinary apart); ``cues`` (study cues added);
#: ``sample`` (weight of the sample's safe posts in ``other``; 0 leaves them out); ``anti``
#: (extra weight of the anti-bias rows); ``score`` (``margin`` or ``logit``).
VARIANTS: dict[str, dict[str, Any]] = {
    "3 classes, margin": {},
    "3 classes, logit of P(off)": {"score": "logit"},
    "3 classes, C 0.5": {"c": 0.5},
    "3 classes, C 2": {"c": 2.0},
    "3 classes, C 4": {"c": 4.0},
    "3 classes, sample safe weight 0.5": {"sample": 0.5},
    "3 classes, sample safe left out": {"sample": 0.0},
    "3 classes, anti-bias rows x2": {"anti": 2.0},
    "3 classes, anti-bias rows x3": {"anti": 3.0},
    "offensive split by target (individual / group / sample) + anti-bias + other": {
        "targets": True
    },
    "control: 2 classes, same solver": {"two": True},
    "4 classes (ordinary apart), margin": {"four": True},
    "3 classes + study cues": {"cues": tuple(CUES)},
    "4 classes + study cues": {"four": True, "cues": tuple(CUES)},
    "3 classes + study cues, C 2": {"cues": tuple(CUES), "c": 2.0},
}
#: Weights λ of the combined score: the binary model's logit less λ times the three-class
#: model's anti-bias-over-offensive decision value (``max(., 0)`` in the ``hinge`` rows).
COMBINED = (0.1, 0.25, 0.5, 1.0)


def _matrix(posts: list[LabelledPost], spans: list[Any], cues: tuple[str, ...]) -> Any:
    return hashed_matrix(
        [
            features(p.text) + lexicon_features(s) + cue_features(p.text, cues)
            for p, s in zip(posts, spans, strict=True)
        ]
    )


def decision_values(data: dict[str, Any], cfg: dict[str, Any]) -> tuple[np.ndarray, list[str]]:
    """Dev decision values ``(posts, classes)`` of one variant fitted on train, and the
    class names of the columns."""
    from sklearn.linear_model import LogisticRegression

    cues = cfg.get("cues", ())
    train, dev = data["train"], data["dev"]
    classes = np.array([fine_class(p, cfg.get("four", False), cfg.get("targets", False))
                        for p in train])  # fmt: skip
    if cfg.get("two"):  # the control: offensive against everything else, same solver
        classes = np.where(classes == "offensive", "offensive", "other")
    weight = np.ones(len(train))
    sample = np.array([p.fine is not None and "/" in p.fine for p in train]) & (classes == "other")
    weight[sample] = cfg.get("sample", 1.0)
    for c in np.unique(classes):  # balanced classes, by their total weight
        weight[classes == c] *= len(train) / (len(np.unique(classes)) * weight[classes == c].sum())
    weight[classes == "anti-bias"] *= cfg.get("anti", 1.0)
    keep = weight > 0
    x = _matrix(train, data["train_flags"]["spans"], cues)[keep]
    model = LogisticRegression(C=cfg.get("c", 1.0), solver="lbfgs", max_iter=3000,
                               random_state=SEED)  # fmt: skip
    model.fit(x, classes[keep], sample_weight=weight[keep])
    z = model.decision_function(_matrix(dev, data["dev_flags"]["spans"], cues))
    names = [str(c) for c in model.classes_]
    if z.ndim == 1:  # two classes: sklearn gives the second class's decision value only
        z = np.c_[-z / 2, z / 2] if names[1] == "other" else np.c_[z / 2, -z / 2]
    return np.asarray(z), names


def margin(z: np.ndarray, names: list[str], score: str = "margin") -> np.ndarray:
    """The offensive class's decision value less the largest other one (``margin``), or
    log P(off) / (1 - P(off)) (``logit``)."""
    off = [i for i, n in enumerate(names) if n.startswith("offensive")]
    rest = np.delete(z, off, axis=1)
    if score == "logit":
        lse = np.log(np.exp(z[:, off]).sum(axis=1))
        return np.asarray(lse - np.log(np.exp(rest).sum(axis=1)))
    return np.asarray(z[:, off].max(axis=1) - rest.max(axis=1))


def calibrated(data: dict[str, Any], m: np.ndarray) -> np.ndarray:
    """Platt scaling of a dev score ``m`` against the dev labels."""
    a, b = platt(m, np.array([p.truth["flagged"] for p in data["dev"]], dtype=np.int64))
    return np.asarray(1.0 / (1.0 + np.exp(-(a * m + b))))


def scores(data: dict[str, Any], cfg: dict[str, Any]) -> np.ndarray:
    """Calibrated dev probabilities of one variant (fit on train, Platt on dev)."""
    z, names = decision_values(data, cfg)
    return calibrated(data, margin(z, names, cfg.get("score", "margin")))


def diagnosis(
    data: dict[str, Any], z: np.ndarray, names: list[str], binary: np.ndarray
) -> list[str]:
    """Why: the three-class model's dev confusion (true class -> its argmax) and the ROC AUC of
    each score on anti-bias against offensive posts of the fine-labelled file, and on all
    labelled dev posts."""
    from sklearn.metrics import roc_auc_score

    dev = data["dev"]
    truth = [fine_class(p, False) for p in dev]
    guess = [names[i] for i in z.argmax(axis=1)]
    lines = ["## Why (the three-class model, C 1, margin)", "",
             "| true class | " + " | ".join(f"called {n}" for n in names) + " |",
             "|---|" + "---|" * len(names)]  # fmt: skip
    for t in names:
        row = [
            sum(1 for a, g in zip(truth, guess, strict=True) if a == t and g == n) for n in names
        ]
        lines.append(f"| {t} | " + " | ".join(str(v) for v in row) + " |")
    fine = [i for i, p in enumerate(dev) if p.fine in ("anti-bias", "individual", "group")]
    cold = [i for i, p in enumerate(dev) if p.fine != "ordinary"]
    pair = z[:, names.index("offensive")] - z[:, names.index("anti-bias")]
    m = margin(z, names)

    def auc(idx: list[int], score: np.ndarray) -> float:
        y = [dev[i].truth["flagged"] for i in idx]
        return round(float(roc_auc_score(y, score[idx])), 3)

    lines += ["", "| ROC AUC on dev | binary refit | three-class |", "|---|---|---|",
              f"| offensive vs anti-bias ({len(fine)} fine-labelled posts; three-class: "
              f"offensive - anti-bias) | {auc(fine, binary)} | {auc(fine, pair)} |",
              f"| flagged, all {len(cold)} COLD posts (three-class: margin) | "
              f"{auc(cold, binary)} | {auc(cold, m)} |"]  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    args, data = start("moderation_dev_3class", __doc__, argv)
    flags = DevFlags(data)
    solo_floor = load_policy().scorer_min_precision
    binary = _probabilities(data, {"idf": False})
    results = {"binary (packaged features, refit)": judge(binary, flags, solo_floor)}
    for name, cfg in VARIANTS.items():
        results[name] = judge(scores(data, cfg), flags, solo_floor)
    z, names = decision_values(data, {})
    anti = z[:, names.index("anti-bias")] - z[:, names.index("offensive")]
    logit = np.log(binary / (1.0 - binary))
    for lam in COMBINED:
        for hinge in (False, True):
            m = logit - lam * (np.maximum(anti, 0.0) if hinge else anti)
            name = f"binary logit - {lam} x anti-bias margin{' (hinge)' if hinge else ''}"
            results[name] = judge(calibrated(data, m), flags, solo_floor)
    finish(args, "moderation_dev_3class",
           "A three-class Chinese scorer: offensive / anti-bias / other (dev part only)", data,
           [*_lines(results), "", *diagnosis(data, z, names, binary)],
           {"variants": results, "settings": VARIANTS, "combined": COMBINED})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
