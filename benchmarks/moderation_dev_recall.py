"""Where the Chinese recall is lost and where anti-bias posts are flagged, on the DEV part only,
and which cross-topic features carry a gain (issue 47, session 8).

1. **Where.** The packaged workflow (lexicon + scorer, what ``orchestrator moderation eval``
   runs) on each Chinese dev post, grouped by COLD fine label (fine-labelled file: other,
   individual, group, anti-bias) and by topic and label (both COLD files: race/offensive ...):
   how many are flagged, by which signal (a high or critical lexicon term, else the
   scorer's review over a medium term or a clean post), and how many offensive ones are missed.
2. **Which features.** The ``zh/flagged`` model refitted on train (the same rows as
   ``moderation_ablation``) with one change at a time, calibrated (Platt) and thresholded on dev
   by the packaged rule (:func:`~workflows.content_moderation.fitting.choose_thresholds`):

   * second-person address as a cue (``z:you``: 你, 你们, 楼主, 楼上 ... and its pairs with the
     other cues of the post), the address that COLD's attacks on individuals carry;
   * the anti-bias train rows weighted 2 or 4 times (they are the negatives most like the
     positives: a model that must not flag them learns the condemnation and report cues);
   * the cues alone with the lexicon hits (no character n-grams: only what carries across
     topics), and n-grams alone with the lexicon hits (no cues).

   Each row gives dev P, R, F1, anti-bias and safe posts flagged at the chosen threshold, and
   the best recall at which anti-bias flagged stays at or under 20% with P at least 0.75.

The library model is scikit-learn's logistic regression over hashed character n-grams and cue
features (the project already depends on scikit-learn for the packaged scorer), not a hand-tuned
word list. Test, the held-out topic and the fresh parts are never read.

Usage, from the repository root::

    python -m benchmarks.moderation_dev_recall

Writes ``benchmarks/results/moderation_dev_recall.{json,md}`` (``--out``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.moderation_ablation import _figures, finish, start
from workflows.content_moderation.dataset import LabelledPost
from workflows.content_moderation.fitting import FIT_SETTINGS, EvalRows, choose_thresholds, platt
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.scorer import SEED, features, hashed_matrix, lexicon_features
from workflows.content_moderation.service import moderate_lexicon_only

#: Second-person address in a Chinese post: the reader (你, 你们, 妳) or another user of the
#: thread named by place (楼主, 楼上 ...); 你好 and 迷你 are no address.
_YOU = re.compile(r"(?<!迷)[你妳您](?!好)|楼主|楼上|楼下|层主|博主|up主|题主")
Extra = Callable[[str, list[str]], list[str]]


def _you(text: str, feats: list[str]) -> list[str]:
    """``feats`` with ``z:you`` and ``z:you&<cue>`` for each cue of the post, when it
    addresses someone."""
    if not _YOU.search(normalize(text).text):
        return feats
    cues = [f[2:] for f in feats if f.startswith("z:") and "&" not in f]
    return [*feats, "z:you", *(f"z:you&{c}" for c in cues)]


def _no_chars(text: str, feats: list[str]) -> list[str]:
    return [f for f in feats if not f.startswith("c:")]


def _no_cues(text: str, feats: list[str]) -> list[str]:
    return [f for f in feats if not f.startswith("z:")]


#: name → (feature change, anti-bias weight). The change maps (text, packaged features) to the
#: features to use (None: the packaged ones), or names a column weighting learned on train
#: (``nb``: Wang and Manning's NB log-count ratio, 2012; ``idf``: inverse document frequency).
VARIANTS: dict[str, tuple[Extra | str | None, float]] = {
    "packaged features (refit)": (None, 1.0),
    "+ second-person cue": (_you, 1.0),
    "anti-bias train rows x2": (None, 2.0),
    "anti-bias train rows x4": (None, 4.0),
    "+ second-person cue, anti-bias x2": (_you, 2.0),
    "cues + lexicon hits, no char n-grams": (_no_chars, 1.0),
    "NB log-count ratio weights (NB-LR)": ("nb", 1.0),
    "idf weights": ("idf", 1.0),
    "char n-grams + lexicon hits, no cues": (_no_cues, 1.0),
}


def _signal(text: str, workflow: ContentModerationWorkflow) -> str:
    """``lexicon`` when the lexicon alone flags the post at high or critical, ``scorer`` when
    the packaged lexicon + scorer flags it otherwise, ``missed`` when it is allowed."""
    both = moderate_lexicon_only(text, workflow)
    if both.decision.value == "allow":
        return "allowed"
    alone = moderate_lexicon_only(text, workflow, scorer=False)
    strong = alone.decision.value != "allow" and alone.lexicon.severity.value in (
        "high",
        "critical",
    )
    return "lexicon" if strong else "scorer"


def where(dev: list[LabelledPost]) -> dict[str, dict[str, int]]:
    """Per group of dev posts (fine label; topic/label), how many are flagged by which signal."""
    workflow = ContentModerationWorkflow()
    table: dict[str, Counter[str]] = {}
    for p in dev:
        if p.fine == "ordinary":
            continue
        signal = _signal(p.text, workflow)
        label = "offensive" if p.truth["flagged"] else "safe"
        keys = [f"topic {p.topic or '?'}/{label}"]
        if p.fine in ("other", "individual", "group", "anti-bias"):
            keys.append(f"fine {p.fine}")
        for key in keys:
            table.setdefault(key, Counter())[signal] += 1
    return {k: dict(v) for k, v in sorted(table.items())}


def _weights(posts: list[LabelledPost], anti: float) -> np.ndarray:
    """Balanced class weights, times ``anti`` on the anti-bias rows."""
    y = np.array([p.truth["flagged"] for p in posts])
    w = np.where(y, len(y) / (2.0 * y.sum()), len(y) / (2.0 * (~y).sum()))
    return w * np.array([anti if p.fine == "anti-bias" else 1.0 for p in posts])


def _scaled(x: Any, y: np.ndarray, how: str) -> np.ndarray:
    """Per-column weights learned on the train matrix ``x`` (binary) and labels ``y``."""
    pos = np.asarray(x[y == 1].astype(bool).sum(axis=0)).ravel() + 1.0
    neg = np.asarray(x[y == 0].astype(bool).sum(axis=0)).ravel() + 1.0
    if how == "nb":
        return np.abs(np.log((pos / pos.sum()) / (neg / neg.sum())))
    return np.log((len(y) + 2.0) / (pos + neg - 1.0)) + 1.0


def _weighted(x: Any, scale: np.ndarray) -> Any:
    from sklearn.preprocessing import normalize as l2

    return l2(x.multiply(scale).tocsr())


def _matrix(posts: list[LabelledPost], spans: list[Any], change: Extra | None) -> Any:
    rows = []
    for p, s in zip(posts, spans, strict=True):
        feats = features(p.text) + lexicon_features(s)
        rows.append(feats if change is None else change(p.text, feats))
    return hashed_matrix(rows)


def run_variant(data: dict[str, Any], change: Extra | str | None, anti: float) -> dict[str, Any]:
    """Fit on train, calibrate and threshold on dev; dev figures of lexicon + scorer."""
    from sklearn.linear_model import LogisticRegression

    train, dev, tr, dv = data["train"], data["dev"], data["train_flags"], data["dev_flags"]
    c, min_precision, grid_start = FIT_SETTINGS["zh/flagged"]
    model = LogisticRegression(C=c, solver="liblinear", random_state=SEED, max_iter=1000)
    y = np.array([p.truth["flagged"] for p in train], dtype=np.int64)
    feats = None if isinstance(change, str) else change
    x, x_dev = _matrix(train, tr["spans"], feats), _matrix(dev, dv["spans"], feats)
    if isinstance(change, str):
        scale = _scaled(x, y, change)
        x, x_dev = _weighted(x, scale), _weighted(x_dev, scale)
    model.fit(x, y, sample_weight=_weights(train, anti))
    z = model.decision_function(x_dev)
    rows = EvalRows(
        y=np.array([p.truth["flagged"] for p in dev], dtype=np.int64),
        lex=dv["strong"],
        plain=np.array([p.fine == "ordinary" for p in dev]),
        cand=~dv["speech"],
        term=dv["term"],
    )
    a, b = platt(z, rows.y)
    p = 1.0 / (1.0 + np.exp(-(a * z + b)))
    review, _high, _fig = choose_thresholds(
        p, rows, min_precision=min_precision, grid_start=grid_start, solo=True
    )
    labelled = ~rows.plain
    posts = [q for q, k in zip(dev, labelled, strict=True) if k]

    def at(t: float) -> dict[str, float]:
        return _figures(posts, (dv["strong"] | ((p >= t) & ~dv["speech"]))[labelled])

    sweep = [at(t) for t in np.round(np.arange(0.3, 0.99, 0.01), 2)]
    ok = [f for f in sweep if f["anti_bias_flagged"] <= 0.20 and f["precision"] >= 0.75]
    best = max(ok, key=lambda f: f["recall"], default=None)
    return {"review": float(review), **at(review), "at_anti_bias_20": best}


def _lines(found: dict[str, dict[str, int]], results: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["## Where (packaged lexicon + scorer, dev)", "",
             "| group | n | flagged: high/critical term | flagged: scorer | allowed |",
             "|---|---|---|---|---|"]  # fmt: skip
    for key, c in found.items():
        n = sum(c.values())
        cells = [c.get(s, 0) for s in ("lexicon", "scorer", "allowed")]
        lines.append(f"| {key} | {n} | " + " | ".join(f"{x} ({x / n:.0%})" for x in cells) + " |")
    lines += ["", "## Which features (zh/flagged refitted on train, thresholded on dev)", "",
              "| variant | review ≥ | P | R | F1 | anti-bias | safe | best R with anti-bias ≤ 20%,"
              " P ≥ 0.75 (F1) |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in results.items():
        best = r["at_anti_bias_20"]
        tail = f"{best['recall']} ({best['f1']})" if best else "none"
        lines.append(f"| {name} | {r['review']:.2f} | {r['precision']} | {r['recall']} | "
                     f"{r['f1']} | {r['anti_bias_flagged']:.1%} | {r['safe_flagged']:.1%} | "
                     f"{tail} |")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    args, data = start("moderation_dev_recall", __doc__, argv)
    found = where(data["dev"])
    results = {name: run_variant(data, change, anti) for name, (change, anti) in VARIANTS.items()}
    finish(args, "moderation_dev_recall", "Chinese recall and anti-bias flags (dev part only)",
           data, _lines(found, results), {"where": found, "variants": results})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
