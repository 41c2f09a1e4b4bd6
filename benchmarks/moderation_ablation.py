"""Which features carry the Chinese scorer (issue 47): an ablation on the DEV part only.

Each configuration refits the ``zh/flagged`` model on the train part (COLD of the shared
sample, held-out topic excluded, plus the Chinese ordinary sentences of train) with some
features removed, calibrates it and picks its review threshold on dev with the same rule as
the packaged scorer (:func:`~workflows.content_moderation.scorer._choose_thresholds`: best F1
of "lexicon or scorer", the scorer alone at dev precision >= ``MIN_SOLO_PRECISION``), and
reports the Chinese dev figures of lexicon + scorer: precision, recall, flagged F1, macro F1,
and the share of COLD anti-bias and other safe posts flagged. Test and the held-out topic are
never read.

Usage, from the repository root::

    python -m benchmarks.moderation_ablation

Writes ``benchmarks/results/moderation_ablation.{json,md}`` (``--out``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from benchmarks.harness import BenchParser, host_info, write_results
from orchestrator.config import Settings
from workflows.content_moderation.dataset import (
    LabelledPost,
    load_moderation_set,
    load_ordinary_set,
)
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.scorer import (
    FIT_SETTINGS,
    N_FEATURES,
    SEED,
    EvalRows,
    features,
    fit_one,
)
from workflows.content_moderation.service import moderate_lexicon_only
from workflows.content_moderation.zh_cues import CUE_NAMES

ALL = frozenset(CUE_NAMES)
CONFIGS: dict[str, tuple[bool, frozenset[str]]] = {
    "char n-grams only (before issue 47)": (True, frozenset()),
    "cues only": (False, ALL),
    "char n-grams + all cues (packaged)": (True, ALL),
    **{f"all but {name}": (True, ALL - {name}) for name in CUE_NAMES},
}


def _flags(posts: list[LabelledPost], workflow: ContentModerationWorkflow) -> tuple[Any, Any]:
    """Per post: the lexicon alone flags it; it is speech about harm (the scorer is capped)."""
    verdicts = [moderate_lexicon_only(p.text, workflow, scorer=False) for p in posts]
    lex = np.array([v.decision.value != "allow" for v in verdicts])
    speech = np.array([v.lexicon.speech_about_harm for v in verdicts])
    return lex, speech


def _figures(posts: list[LabelledPost], flagged: np.ndarray) -> dict[str, float]:
    truth = np.array([p.truth["flagged"] for p in posts])

    def f1(t: np.ndarray, g: np.ndarray) -> tuple[float, float, float]:
        tp = float((t & g).sum())
        p = tp / g.sum() if g.sum() else 0.0
        r = tp / t.sum() if t.sum() else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    p, r, f = f1(truth, flagged)
    neg = f1(~truth, ~flagged)[2]
    anti = np.array([q.fine == "anti-bias" for q in posts])
    safe = np.array([q.topic is not None and not q.truth["flagged"] and q.fine != "anti-bias"
                     for q in posts])  # fmt: skip
    return {
        "precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
        "macro_f1": round((f + neg) / 2, 4),
        "anti_bias_flagged": round(float(flagged[anti].mean()), 4),
        "safe_flagged": round(float(flagged[safe].mean()), 4),
    }  # fmt: skip


def run_config(chars: bool, cues: frozenset[str], data: dict[str, Any]) -> dict[str, Any]:
    """Fit, calibrate on dev and score one configuration."""
    from sklearn.feature_extraction.text import HashingVectorizer

    analyzer = functools.partial(features, chars=chars, cues=cues)
    vec = HashingVectorizer(analyzer=analyzer, n_features=N_FEATURES, alternate_sign=False,
                            binary=True, norm="l2")  # fmt: skip
    train, dev = data["train"], data["dev"]
    c, min_precision, grid_start = FIT_SETTINGS["zh/flagged"]

    def rows(posts: list[LabelledPost], lex: Any) -> EvalRows:
        return EvalRows(
            y=np.array([p.truth["flagged"] for p in posts], dtype=np.int64),
            lex=lex,
            plain=np.array([p.fine == "ordinary" for p in posts]),
            cand=np.ones(len(posts), dtype=bool),
        )

    dev_matrix = vec.transform([p.text for p in dev])
    model = fit_one(
        vec.transform([p.text for p in train]), rows(train, data["train_lex"]), c=c,
        min_precision=min_precision, seed=SEED, grid_start=grid_start, solo=True,
        dev=(dev_matrix, rows(dev, data["dev_lex"])),
    )  # fmt: skip
    p = model.probability(dev_matrix)
    labelled = np.array([p.fine != "ordinary" for p in dev])
    flagged = data["dev_lex"] | ((p >= model.review) & ~data["dev_speech"])
    posts = [q for q, keep in zip(dev, labelled, strict=True) if keep]
    return {"review": model.review, **_figures(posts, flagged[labelled])}


def main(argv: list[str] | None = None) -> int:
    parser = BenchParser(
        "benchmarks.moderation_ablation", (__doc__ or "").splitlines()[0], repeat=None,
        quick=False,
    )  # fmt: skip
    args = parser.parse_args(argv)
    root = Settings().data_dir
    zh = [p for p in load_moderation_set(root, "tune") if p.part == "train" and p.lang == "zh"]
    zh += [p for p in load_ordinary_set(root, "train") if p.lang == "zh"]
    dev = [p for p in load_moderation_set(root, "dev") if p.lang == "zh"]
    dev += [p for p in load_ordinary_set(root, "dev") if p.lang == "zh"]
    workflow = ContentModerationWorkflow(scorer_path=None)
    train_lex, _ = _flags(zh, workflow)
    dev_lex, dev_speech = _flags(dev, workflow)
    data = {"train": zh, "dev": dev, "train_lex": train_lex, "dev_lex": dev_lex,
            "dev_speech": dev_speech}  # fmt: skip
    results = {name: run_config(ch, cu, data) for name, (ch, cu) in CONFIGS.items()}
    lexicon = _figures([p for p in dev if p.fine != "ordinary"],
                       dev_lex[[p.fine != "ordinary" for p in dev]])  # fmt: skip
    head = "| features | review ≥ | P | R | F1 | macro F1 | anti-bias flagged | safe flagged |"
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    lines.append(f"| lexicon alone | – | {lexicon['precision']} | {lexicon['recall']} | "
                 f"{lexicon['f1']} | {lexicon['macro_f1']} | {lexicon['anti_bias_flagged']:.1%} | "
                 f"{lexicon['safe_flagged']:.1%} |")  # fmt: skip
    for name, r in results.items():
        cells = [name, r["review"], r["precision"], r["recall"], r["f1"], r["macro_f1"],
                 f"{r['anti_bias_flagged']:.1%}", f"{r['safe_flagged']:.1%}"]  # fmt: skip
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    md = (f"# Chinese scorer ablation (dev part only; lexicon + scorer)\n\n"
          f"{len(zh)} train rows, {len(dev)} dev rows (Chinese, ordinary included).\n\n"
          + "\n".join(lines) + "\n")  # fmt: skip
    write_results(args.out, "moderation_ablation",
                  {"lexicon": lexicon, "configs": results, "host": host_info()}, md,
                  command=args.command)  # fmt: skip
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
