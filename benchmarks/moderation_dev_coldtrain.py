"""More Chinese training posts: COLD's own train and dev files, judged on the DEV part only
(issue 47, session 11).

The packaged ``zh/flagged`` model is fitted on about 2,800 Chinese rows (the train part of the
shared sample and of COLD's fine-labelled file, and ordinary sentences). COLD's ``train.csv`` and
``dev.csv`` hold 32,157 labelled posts, most of which no part of the protocol reads. This study
adds a *pool* of them to the train part, by a rule fixed before any fit (:func:`pool`):

1. every row of ``train.csv`` and ``dev.csv`` of a local copy of ``thu-coai/COLDataset@a0c55a9``,
   anonymised like the shared sample (:func:`benchmarks.moderation_fresh_split.anonymise`);
2. no row of the held-out topic (gender): the transfer measure stays a transfer measure;
3. no row whose text (raw or anonymised, or normalised) is in the shared sample, in COLD's
   fine-labelled ``test.csv`` or in the fresh file (so no dev, test, held-out-topic or fresh
   post is fitted on), and no repeated text.

COLD's safe posts hold its anti-bias posts (labelled 0, with no fine label in these files), so
the pool brings the model thousands of posts that speak about discrimination without being
offensive, where the train part has 164.

Each variant is fitted on train (+ pool), calibrated (Platt) on dev and read by the packaged
rules and at equal anti-bias flags, exactly as :mod:`benchmarks.moderation_dev_generalise`
reads its variants (:func:`~benchmarks.moderation_dev_generalise.judge`).

Usage, from the repository root::

    python -m benchmarks.moderation_dev_coldtrain PATH_TO_COLDataset_CHECKOUT [--neural JSON]
    python -m benchmarks.moderation_dev_coldtrain PATH_TO_COLDataset_CHECKOUT --rates

``--neural`` adds the dev logits of :mod:`benchmarks.moderation_dev_charnn` (alone, and averaged
with the pool's binary C 4 model); ``--rates`` prints only :func:`cue_rates`. The fits write
``benchmarks/results/moderation_dev_coldtrain.{json,md}`` (``--out``).
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.moderation_ablation import finish, start
from benchmarks.moderation_dev_generalise import (
    _COMPILED,
    CUES,
    DevFlags,
    _lines,
    _probabilities,
    judge,
)
from benchmarks.moderation_fresh_split import SHARED_SAMPLE, anonymise
from orchestrator.config import Settings
from workflows.content_moderation.dataset import (
    FINE_FILE,
    FRESH_FILE,
    HELDOUT_TOPIC,
    LabelledPost,
)
from workflows.content_moderation.fitting import platt
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.policy import load_policy
from workflows.content_moderation.scorer import SEED, lexicon_spans
from workflows.content_moderation.zh_cues import load_zh_cues


def _texts(path: Path) -> set[str]:
    with path.open(encoding="utf-8", newline="") as f:
        return {row["TEXT"] for row in csv.DictReader(f)}


def pool(cold_dir: Path) -> list[LabelledPost]:
    """The pool of the module docstring, as train-part posts (source ``cold_pool``)."""
    seen = set()
    for path in (Settings().data_dir / SHARED_SAMPLE, FINE_FILE, FRESH_FILE):
        for t in _texts(path):
            seen |= {t, anonymise(t), normalize(t).text}
    out: list[LabelledPost] = []
    for name in ("train.csv", "dev.csv"):
        with (cold_dir / "COLDataset" / name).open(encoding="utf-8", newline="") as f:
            for i, row in enumerate(csv.DictReader(f)):
                raw, topic = row["TEXT"], row["topic"].strip()
                text = anonymise(raw)
                keys = {raw, text, normalize(text).text}
                if topic == HELDOUT_TOPIC or keys & seen:
                    continue
                seen |= keys
                out.append(LabelledPost(
                    id=f"{name}:{i + 2}", text=text, lang="zh", source="cold_pool", split="tune",
                    truth={"flagged": row["label"].strip() == "1"}, fine=f"{topic}/pool",
                    topic=topic, part="train"))  # fmt: skip
    return out


#: name -> (pool share used, settings of
#: :func:`~benchmarks.moderation_dev_generalise._probabilities` plus ``hard``: the pool's
#: safe rows naming a group weighted by it, ``drop``: pool rows naming discrimination left out).
VARIANTS: dict[str, tuple[float, dict[str, Any]]] = {
    "train only, binary C 1 (packaged features; reference)": (0.0, {"idf": False}),
    "train + half the pool, binary C 1": (0.5, {"idf": False}),
    "train + pool, binary C 1": (1.0, {"idf": False}),
    "train + pool, binary C 2": (1.0, {"idf": False, "c": 2.0}),
    "train + pool, binary C 4": (1.0, {"idf": False, "c": 4.0}),
    "train + pool, binary C 8": (1.0, {"idf": False, "c": 8.0}),
    "train + pool, idf C 4": (1.0, {"c": 4.0}),
    "train + pool, binary C 4 + char 4-grams": (1.0, {"idf": False, "c": 4.0, "four": True}),
    "train + pool, binary C 4 + masked group n-grams": (
        1.0, {"idf": False, "c": 4.0, "mask": True}),
    "train + pool, binary C 4 + study cues": (1.0, {"idf": False, "c": 4.0, "cues": tuple(CUES)}),
    "train + pool, binary C 4, safe pool rows naming a group x2, anti-bias x3": (
        1.0, {"idf": False, "c": 4.0, "hard": 2.0, "anti": 3.0}),
    "train + pool less rows naming discrimination, binary C 4": (
        1.0, {"idf": False, "c": 4.0, "drop": True}),
}  # fmt: skip
#: Words that name discrimination (the ``drop`` variant).
DISCRIMINATION = re.compile(r"歧视|偏见|刻板印象|地域黑|地图炮|种族主义")


def _aucs(data: dict[str, Any], p: np.ndarray) -> dict[str, float]:
    """ROC AUC of the dev COLD posts (flagged or not) and of offensive over anti-bias."""
    from sklearn.metrics import roc_auc_score

    dev = data["dev"]
    fine = np.array([q.fine or "" for q in dev])
    lab, pair = fine != "ordinary", np.isin(fine, ["individual", "group", "anti-bias"])
    y = np.array([q.truth["flagged"] for q in dev])
    return {"auc": round(float(roc_auc_score(y[lab], p[lab])), 4),
            "auc_offensive_vs_anti_bias": round(float(roc_auc_score(fine[pair] != "anti-bias",
                                                                    p[pair])), 4)}  # fmt: skip


def _variant(data: dict[str, Any], extra: list[LabelledPost], spans: list[Any], order: np.ndarray,
             share: float, cfg: dict[str, Any]) -> np.ndarray:  # fmt: skip
    """Calibrated dev probabilities of one variant."""
    keep = sorted(order[: int(share * len(extra))])
    if cfg.get("drop"):
        keep = [i for i in keep if not DISCRIMINATION.search(normalize(extra[i].text).text)]
    group = load_zh_cues().patterns["target"]
    weight = np.ones(len(data["train"]) + len(keep))
    for j, i in enumerate(keep):
        p = extra[i]
        if not p.truth["flagged"] and group.search(normalize(p.text).text):
            weight[len(data["train"]) + j] = cfg.get("hard", 1.0)
    more = {
        "train": data["train"] + [extra[i] for i in keep],
        "train_flags": {"spans": list(data["train_flags"]["spans"]) + [spans[i] for i in keep]},
    }
    return _probabilities({**data, **more}, {**cfg, "row_weight": weight})  # fmt: skip


def _neural(data: dict[str, Any], path: Path) -> dict[str, np.ndarray]:
    """Calibrated dev probabilities of each model of ``benchmarks.moderation_dev_charnn``'s
    output (the mean logit of its seeds, per model and epoch)."""
    out = json.loads(path.read_text(encoding="utf-8"))
    if out["ids"] != [p.id for p in data["dev"]]:
        raise SystemExit(f"{path}: its dev rows are not this checkout's dev part")
    y = np.array([p.truth["flagged"] for p in data["dev"]], dtype=np.int64)
    probs = {}
    for name, runs in out["logits"].items():
        z = np.mean(np.asarray(runs, dtype=float), axis=0)
        a, b = platt(z, y)
        probs[name] = 1.0 / (1.0 + np.exp(-(a * z + b)))
    return probs


def cue_rates(cold_dir: Path) -> list[str]:
    """How often the posts that hold each cue of the generalise study (and :data:`DISCRIMINATION`)
    are offensive, in the pool, the train part and the dev part (and how many are anti-bias):
    a table of markdown lines. No model is fitted."""
    from benchmarks.moderation_ablation import zh_posts

    parts = {"pool": pool(cold_dir), "train": zh_posts("train"), "dev": zh_posts("dev")}
    lines = ["| cue | " + " | ".join(f"{k}: posts / offensive / anti-bias" for k in parts) + " |",
             "|---|---|---|---|"]  # fmt: skip
    for name, rx in {**_COMPILED, "names discrimination": DISCRIMINATION}.items():
        cells = []
        for posts in parts.values():
            hit = [p for p in posts if rx.search(normalize(p.text).text)]
            off = sum(p.truth["flagged"] for p in hit) / max(len(hit), 1)
            cells.append(f"{len(hit)} / {off:.0%} / {sum(p.fine == 'anti-bias' for p in hit)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) == 2 and argv[1] == "--rates":
        print("\n".join(cue_rates(Path(argv[0]))))
        return 0
    neural = None
    if "--neural" in argv:
        at = argv.index("--neural")
        neural = Path(argv[at + 1])
        del argv[at : at + 2]
    if not argv or not (Path(argv[0]) / "COLDataset" / "train.csv").is_file():
        print("usage: python -m benchmarks.moderation_dev_coldtrain PATH_TO_COLDataset_CHECKOUT "
              "[--neural DEV_LOGITS_JSON] [--out DIR]")  # fmt: skip
        return 2
    extra = pool(Path(argv[0]))
    args, data = start("moderation_dev_coldtrain", __doc__, argv[1:])
    spans = lexicon_spans([p.text for p in extra])
    flags, solo_floor = DevFlags(data), load_policy().scorer_min_precision
    order = np.random.default_rng(SEED).permutation(len(extra))
    probs = {name: _variant(data, extra, spans, order, share, cfg)
             for name, (share, cfg) in VARIANTS.items()}  # fmt: skip
    if neural is not None:
        best = probs["train + pool, binary C 4"]
        for name, p in _neural(data, neural).items():
            probs[name] = p
            probs[f"mean of {name} and pool C 4"] = (p + best) / 2.0
    results = {name: {**judge(p, flags, solo_floor), **_aucs(data, p)} for name, p in probs.items()}
    counts = {"pool": len(extra), "pool_offensive": sum(p.truth["flagged"] for p in extra)}
    aucs = ["| variant | AUC (dev COLD) | AUC offensive over anti-bias |", "|---|---|---|"]
    aucs += [f"| {n} | {r['auc']} | {r['auc_offensive_vs_anti_bias']} |"
             for n, r in results.items()]  # fmt: skip
    finish(args, "moderation_dev_coldtrain", "COLD train/dev pool for the Chinese scorer (dev)",
           data, [f"Pool: {counts}", "", *_lines(results), "", *aucs],
           {"variants": results, "pool": counts})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
