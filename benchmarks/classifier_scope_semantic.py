"""Issue 46 item 9, round 17: can a MiniLM scope check tell another business's question from
the shop's own? A study (nothing of it is in the classifier).

The idea: an English customer-service decision that no decisive rule made (not a compound
request) is checked by a logistic regression on the request's MiniLM embedding (the
``[semantic]`` extra), fitted on the labelled set's English tune rows (customer service against
fallback) and the spent parts' English families; when it says "out of scope" surely enough,
the request falls back.

Usage, from the repository root (the extra installed; a few minutes of CPU)::

    python -m benchmarks.classifier_scope_semantic               # dev figures only
    python -m benchmarks.classifier_scope_semantic --held-out    # + the guardrail's aggregates

Dev figures, for each candidate (:data:`CANDIDATES`):

* **spent parts, leave one part out**: each part's English rows scored by a model fitted on the
  tune rows and the *other* parts, so every part is phrasings the model never saw (as a blind
  set is). Of the rows the packaged classifier sends to customer service with no decisive rule
  (*reachable*), how many out-of-scope rows the check would send to fallback (``+``) and how
  many in-scope asks it would lose (``-``).
* the threshold is not chosen on those: it is the ``1 - budget`` quantile of the check's
  out-of-fold scores of the tune split's English customer-service rows (5 folds by phrasing
  family), so that about ``budget`` of real customer-service asks would be sent away.

``--held-out`` also scores the labelled set's held-out split (``classifier eval``'s rows) for the
first candidate at fixed thresholds and prints aggregates only (accuracy, customer-service
precision, counts moved): the brief's guardrail. No row of it is printed.

The parts read are :data:`SPENT` only: round 15's and 16's blind sets (``test_15``,
``test_16``) are never opened here.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression

from benchmarks.classifier_oos_families import families
from orchestrator.classification import Classification
from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.fit_lexical import script
from orchestrator.classifier.fit_semantic import load_encoder
from orchestrator.classifier.labelled_set import load_split
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.core.registry import plugin_route_specs
from orchestrator.routes import FALLBACK, RouteSpec

CS = "customer_service"
#: The spent parts (every one looked at already, or a dev part): never test_15 or test_16.
SPENT = (
    *("train_dev", "test", "test_2", "test_3", "test_4", "test_6", "dev_7", "test_7", "dev_8"),
    *("test_8", "dev_9", "test_9", "dev_10", "test_10", "dev_11", "test_11", "dev_12"),
    *("test_12", "dev_13", "test_13", "test_14"),
)
#: ``(C, weight of tune customer-service rows, of tune fallback rows, of spent rows, pooling)``;
#: pooling ``mean`` is the sentence embedding, ``mean+max`` adds the max over its tokens.
CANDIDATES = (
    (1.0, 1.0, 1.0, 1.0, "mean"),
    (1.0, 0.3, 0.3, 1.0, "mean"),
    (4.0, 1.0, 0.1, 2.0, "mean"),
    (4.0, 1.0, 0.1, 2.0, "mean+max"),
    (4.0, 0.3, 0.1, 1.0, "mean+max"),
)
BUDGETS = (0.01, 0.02, 0.03)
HELD_OUT_THRESHOLDS = (0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5)


@dataclass(frozen=True)
class Row:
    """One English row: its text, whether it is out of scope, and where it came from."""

    text: str
    out_of_scope: bool
    group: str  # a spent part, or a tune row's phrasing family
    reachable: bool = False  # the classifier sends it to customer service with no sure reason


def reachable(clf: RuleClassifier, c: Classification, text: str) -> bool:
    """Whether the check would read ``c``: an English one-route customer-service decision
    with no positive decisive customer-service rule fired outside a negation."""
    if c.route != CS or c.secondary_routes or script(text) != "en":
        return False
    decisive = {r.id for r in clf.rules if r.decisive and not r.negative and r.route == CS}
    return not any(s.rule_id in decisive and not s.negated for s in c.signals)


def spent_rows(clf: RuleClassifier) -> list[Row]:
    """The spent parts' English rows, each classified by the packaged classifier."""
    rows = []
    for part in SPENT:
        for lang, want, texts in families(part).values():
            for text in texts if lang == "en" else ():
                c = clf.classify_text(text)
                rows.append(Row(text, want == FALLBACK, part, reachable(clf, c, text)))
    return rows


def embed(encoder: object, texts: list[str]) -> dict[str, np.ndarray]:
    """Each pooling's matrix ``(len(texts), dims)``, rows normalised."""
    out = encoder.encode(texts, batch_size=64, output_value=None, normalize_embeddings=True)  # type: ignore[attr-defined]
    mean = np.array([np.asarray(o["sentence_embedding"]) for o in out])
    top = np.array([np.asarray(o["token_embeddings"]).max(axis=0) for o in out])
    top /= np.linalg.norm(top, axis=1, keepdims=True)
    return {"mean": mean, "mean+max": np.hstack([mean, top])}


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float) -> LogisticRegression:
    """A logistic regression of ``y`` (1: out of scope) on ``x``, rows weighted ``w``, classes
    balanced, inverse regularisation ``c``."""
    return LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(
        x, y, sample_weight=w
    )


def held_apart(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, groups: np.ndarray, scored: np.ndarray, c: float
) -> np.ndarray:
    """Each ``scored`` row's probability of out of scope from a model fitted without its
    group (the other rows of ``scored``'s groups, and every row outside ``scored``)."""
    p = np.zeros(len(y))
    for g in sorted(set(groups[scored].tolist())):
        out = scored & (groups == g)
        model = fit(x[~out], y[~out], w[~out], c)
        p[out] = model.predict_proba(x[out])[:, 1]
    return p


def dev_table(tune: list[Row], spent: list[Row], vecs: dict[str, np.ndarray]) -> list[str]:
    """The dev figures of every candidate, as Markdown table rows."""
    rows = tune + spent
    y = np.array([r.out_of_scope for r in rows], dtype=int)
    is_tune = np.arange(len(rows)) < len(tune)
    folds = [int(hashlib.sha256(r.group.encode()).hexdigest(), 16) % 5 for r in tune]
    groups = np.array([f"fold{f}" for f in folds] + [r.group for r in spent])
    reach = np.array([r.reachable for r in rows])
    tune_cs = is_tune & (y == 0)
    lines = []
    for c, w_cs, w_fb, w_spent, pool in CANDIDATES:
        w = np.where(is_tune, np.where(y == 1, w_fb, w_cs), w_spent)
        x = vecs[pool]
        p_spent = held_apart(x, y, w, groups, ~is_tune, c)
        p_tune = held_apart(x, y, w, groups, is_tune, c)
        cells = []
        for budget in BUDGETS:
            t = float(np.quantile(p_tune[tune_cs], 1 - budget))
            gate = ~is_tune & reach & (p_spent >= t)
            cells.append(
                f"{t:.2f}: +{int((gate & (y == 1)).sum())} / -{int((gate & (y == 0)).sum())}"
            )
        lines.append(
            f"| C={c}, weights {w_cs}/{w_fb}/{w_spent}, {pool} | " + " | ".join(cells) + " |"
        )
    return lines


def declared_elsewhere() -> tuple[RouteSpec, ...]:
    """The routes installed workflows declare besides the rules file's, as ``classifier eval``
    adds them."""
    taken = {s.name for s in RuleClassifier(reload_interval=None, semantic=False).route_specs}
    return tuple(p for p in plugin_route_specs() if p.name not in taken)


def held_out(
    tune: list[Row], spent: list[Row], vecs: dict[str, np.ndarray], encoder: object
) -> list[str]:
    """The first candidate, fitted on every tune and spent row, on the held-out split:
    aggregates only, at :data:`HELD_OUT_THRESHOLDS` (the first line: the classifier as it is)."""
    c, w_cs, w_fb, w_spent, pool = CANDIDATES[0]
    rows = tune + spent
    y = np.array([r.out_of_scope for r in rows], dtype=int)
    w = np.array(
        [
            w_spent if i >= len(tune) else (w_fb if r.out_of_scope else w_cs)
            for i, r in enumerate(rows)
        ]
    )
    model = fit(vecs[pool], y, w, c)
    test = load_split(DEFAULT_DATA_DIR, "test")
    clf = RuleClassifier(reload_interval=None, routes=declared_elsewhere(), semantic=False)
    got = [clf.classify(r.to_request()) for r in test]
    truth = np.array([r.route for r in test])
    route = np.array([g.route for g in got])
    reach = np.array([reachable(clf, g, r.text) for g, r in zip(got, test, strict=True)])
    p = np.zeros(len(test))
    idx = np.flatnonzero(reach)
    p[idx] = model.predict_proba(embed(encoder, [test[i].text for i in idx])[pool])[:, 1]
    lines = [
        f"n={len(test)}, reachable {int(reach.sum())}",
        "",
        "| threshold | accuracy | CS precision | moved: CS lost / fallback gained / other |",
        "|---|---|---|---|",
    ]
    for t in (2.0, *HELD_OUT_THRESHOLDS):
        moved = reach & (p >= t)
        q = np.where(moved, FALLBACK, route)
        said = q == CS
        right = int((said & (truth == CS)).sum())
        lines.append(
            f"| {'none' if t > 1 else t} | {(q == truth).mean():.4f} | {right / said.sum():.5f} "
            f"({right}/{int(said.sum())}) | {int((moved & (truth == CS)).sum())} / "
            f"{int((moved & (truth == FALLBACK)).sum())} / "
            f"{int((moved & (truth != CS) & (truth != FALLBACK)).sum())} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--held-out", action="store_true", help="Also the guardrail's aggregates.")
    args = parser.parse_args()
    logging.getLogger("orchestrator").setLevel(logging.ERROR)
    encoder = load_encoder()
    if encoder is None:
        raise SystemExit("the [semantic] extra (MiniLM) is not installed")
    clf = RuleClassifier(reload_interval=None, semantic=False)
    spent = spent_rows(clf)
    tune = [
        Row(r.text, r.route == FALLBACK, r.family or r.id)
        for r in load_split(DEFAULT_DATA_DIR, "tune")
        if r.lang == "en" and r.route in (CS, FALLBACK)
    ]
    vecs = embed(encoder, [r.text for r in tune + spent])
    oos = [r for r in spent if r.out_of_scope]
    reach = [r for r in spent if r.reachable]
    print(
        f"spent parts, English: {len(oos)} out of scope ({sum(r.reachable for r in oos)} "
        f"reachable), {len(spent) - len(oos)} in scope; reachable rows {len(reach)}; "
        f"tune rows {len(tune)}\n"
    )
    print("| candidate | " + " | ".join(f"budget {b}: t, +oos / -in-scope" for b in BUDGETS) + " |")
    print("|---|" + "---|" * len(BUDGETS))
    print("\n".join(dev_table(tune, spent, vecs)))
    if args.held_out:
        print("\n" + "\n".join(held_out(tune, spent, vecs, encoder)))


if __name__ == "__main__":
    main()
