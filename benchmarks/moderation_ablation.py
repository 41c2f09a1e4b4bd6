"""Which features carry the Chinese scorer (issue 47): an ablation on the DEV part only.

Each configuration refits the ``zh/flagged`` model on the train part (COLD of the shared
sample, held-out topic excluded, the train rows of COLD's fine-labelled file unless a row says
otherwise, and the Chinese ordinary sentences of train) with some features removed, calibrates
it and picks its review threshold on dev with the same rule as the packaged scorer
(:func:`~workflows.content_moderation.fitting.choose_thresholds`: best F1 of the combination,
the scorer's own flags at dev precision >= ``MIN_SOLO_PRECISION``, its reviews of ordinary
sentences within budget), and reports the Chinese dev figures of lexicon + scorer: precision,
recall, flagged F1, macro F1, and the share of COLD anti-bias and other safe posts flagged.

A *stacked* configuration reads the lexicon's hits as features and decides the medium terms
(the policy's ``clear`` state): flagged = a high or critical term, or the scorer at ``review``.
Otherwise flagged = the lexicon flags, or the scorer at ``review``. Neither lets the scorer flag
speech about harm alone. Test and the held-out topic are never read.

Usage, from the repository root::

    python -m benchmarks.moderation_ablation

Writes ``benchmarks/results/moderation_ablation.{json,md}`` (``--out``).
"""

from __future__ import annotations

import functools
from argparse import Namespace
from typing import Any, NamedTuple

import numpy as np

from benchmarks.harness import BenchParser, host_info, write_results
from orchestrator.config import Settings
from workflows.content_moderation.dataset import (
    FINE_FILE,
    LabelledPost,
    load_moderation_set,
    load_ordinary_set,
)
from workflows.content_moderation.fitting import FIT_SETTINGS, EvalRows, fit_one
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.judgement import lexicon_state
from workflows.content_moderation.scorer import (
    SEED,
    features,
    hashed_matrix,
    lexicon_features,
    lexicon_spans,
)
from workflows.content_moderation.service import moderate_lexicon_only
from workflows.content_moderation.zh_cues import CUE_NAMES

ALL = frozenset(CUE_NAMES)
#: Review thresholds at which the packaged configuration is also reported (dev).
SWEEP = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


class Config(NamedTuple):
    """One ablation row: char n-grams, cue names, lexicon features (stacked), fine train rows."""

    chars: bool = True
    cues: frozenset[str] = ALL
    stacked: bool = True
    fine_train: bool = True


CONFIGS: dict[str, Config] = {
    "n-grams + cues, sample train only, lexicon OR scorer (before)": Config(
        stacked=False, fine_train=False
    ),
    "n-grams + cues + fine train rows, lexicon OR scorer": Config(stacked=False),
    "stacked: n-grams + cues + lexicon hits + fine train (packaged)": Config(),
    "stacked, sample train only": Config(fine_train=False),
    "stacked, no char n-grams": Config(chars=False),
    "stacked, no cues": Config(cues=frozenset()),
    **{f"stacked, all cues but {name}": Config(cues=ALL - {name}) for name in CUE_NAMES},
}


def _flags(posts: list[LabelledPost], workflow: ContentModerationWorkflow) -> dict[str, Any]:
    """Per post: the lexicon alone flags it; a high or critical term flags it; it is speech
    about harm (the scorer is capped); its lexicon spans; it holds a medium+ term."""
    verdicts = [moderate_lexicon_only(p.text, workflow, scorer=False) for p in posts]
    return {
        "lex": np.array([v.decision.value != "allow" for v in verdicts]),
        "strong": np.array([lexicon_state(v.lexicon) in ("high", "critical") for v in verdicts]),
        "speech": np.array([v.lexicon.speech_about_harm for v in verdicts]),
        "spans": lexicon_spans([p.text for p in posts]),
        "term": np.array(
            [lexicon_state(v.lexicon) not in ("none", "mention", "low") for v in verdicts]
        ),
    }


def zh_posts(split: str) -> list[LabelledPost]:
    """The Chinese posts of one split (``"train"`` or ``"dev"``): COLD's, then the ordinary ones."""
    root = Settings().data_dir
    both = [*load_moderation_set(root, split), *load_ordinary_set(root, split)]
    return [p for p in both if p.lang == "zh"]


def dev_data() -> dict[str, Any]:
    """The Chinese ``train`` and ``dev`` posts and the lexicon's flags of each
    (``train_flags``, ``dev_flags``: see :func:`_flags`), for the dev-only experiments."""
    train, dev = zh_posts("train"), zh_posts("dev")
    workflow = ContentModerationWorkflow(scorer_path=None)
    return {"train": train, "dev": dev, "train_flags": _flags(train, workflow),
            "dev_flags": _flags(dev, workflow)}  # fmt: skip


def start(module: str, doc: str | None, argv: list[str] | None) -> tuple[Namespace, dict[str, Any]]:
    """A dev-only experiment's command line (``--out``; see ``BenchParser``) and its
    :func:`dev_data`."""
    args = BenchParser(module, doc, repeat=None, quick=False).parse_args(argv)
    return args, dev_data()


def finish(
    args: Namespace, name: str, title: str, data: dict, lines: list[str], figures: dict
) -> None:
    """Write and print a dev-only experiment's results: ``figures`` (and the host) as
    ``<args.out>/<name>.json``; ``title``, the row counts of ``data`` and the table ``lines``
    as its ``.md``."""
    md = (f"# {title}\n\n{len(data['train'])} train rows, {len(data['dev'])} dev rows (Chinese, "
          "ordinary included).\n\n" + "\n".join(lines) + "\n")  # fmt: skip
    write_results(args.out, name, {**figures, "host": host_info()}, md, command=args.command)
    print(md)


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


def run_config(cfg: Config, data: dict[str, Any]) -> dict[str, Any]:
    """Fit, calibrate on dev and score one configuration."""
    feats = functools.partial(features, chars=cfg.chars, cues=cfg.cues)
    keep = [cfg.fine_train or p.source != FINE_FILE.name for p in data["train"]]
    train = [p for p, k in zip(data["train"], keep, strict=True) if k]
    dev = data["dev"]
    c, min_precision, grid_start = FIT_SETTINGS["zh/flagged"]

    def matrix(posts: list[LabelledPost], spans: list[Any]) -> Any:
        extra = lexicon_features if cfg.stacked else lambda _s: []
        return hashed_matrix([feats(p.text) + extra(s) for p, s in zip(posts, spans, strict=True)])

    def rows(posts: list[LabelledPost], flags: dict[str, Any], idx: Any) -> EvalRows:
        return EvalRows(
            y=np.array([p.truth["flagged"] for p in posts], dtype=np.int64),
            lex=flags["strong" if cfg.stacked else "lex"][idx],
            plain=np.array([p.fine == "ordinary" for p in posts]),
            cand=~flags["speech"][idx],
            term=flags["term"][idx],
        )

    tr, dv = data["train_flags"], data["dev_flags"]
    idx = np.flatnonzero(keep)
    dev_matrix = matrix(dev, dv["spans"])
    model = fit_one(
        matrix(train, [tr["spans"][i] for i in idx]), rows(train, tr, idx), c=c,
        min_precision=min_precision, seed=SEED, grid_start=grid_start, solo=True,
        dev=(dev_matrix, rows(dev, dv, slice(None))), clears=cfg.stacked,
    )  # fmt: skip
    p = model.probability(dev_matrix)
    labelled = np.array([q.fine != "ordinary" for q in dev])
    base = dv["strong"] if cfg.stacked else dv["lex"]
    posts = [q for q, k in zip(dev, labelled, strict=True) if k]

    def at(t: float) -> dict[str, float]:
        return _figures(posts, (base | ((p >= t) & ~dv["speech"]))[labelled])

    # the trade-off the threshold makes (dev): recall against anti-bias posts flagged
    sweep = {f"{t:.2f}": at(t) for t in SWEEP} if cfg == Config() else {}
    return {"review": model.review, **at(model.review), "sweep": sweep}


def main(argv: list[str] | None = None) -> int:
    args, data = start("moderation_ablation", __doc__, argv)
    dev = data["dev"]
    results = {name: run_config(cfg, data) for name, cfg in CONFIGS.items()}
    dev_lex = data["dev_flags"]["lex"]
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
    lines += [
        "",
        "Packaged configuration at other review thresholds (dev):",
        "",
        "| review ≥ | P | R | F1 | anti-bias flagged | safe flagged |",
        "|---|---|---|---|---|---|",
    ]
    for t, r in next(r["sweep"] for r in results.values() if r["sweep"]).items():
        lines.append(
            f"| {t} | {r['precision']} | {r['recall']} | {r['f1']} | "
            f"{r['anti_bias_flagged']:.1%} | {r['safe_flagged']:.1%} |"
        )
    finish(args, "moderation_ablation", "Chinese scorer ablation (dev part only; lexicon + scorer)",
           data, lines, {"lexicon": lexicon, "configs": results})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
