"""Cross-topic features of the Chinese scorer, judged on the DEV part only (issue 47, session 10).

The ``zh/flagged`` model is refitted on train (the rows of ``moderation_ablation``) with one
change at a time, calibrated (Platt) on dev, and read two ways:

1. **By the packaged rules.** ``review`` (a medium term stays unless the scorer clears it) is
   chosen on dev by :func:`~workflows.content_moderation.fitting.choose_thresholds`; the
   scorer's solo floor (policy ``scorer.solo_review_from``) is the lowest probability from
   which the posts it alone sends to review have dev precision >= the policy's 0.75
   (``solo_review_min_precision``): the scorer is weighed in the policy by its dev precision.
2. **At equal anti-bias flags.** Over a grid of (review, solo floor), the best dev F1 whose
   anti-bias posts flagged stay at or under the packaged workflow's dev count (27 of 85),
   24 of 85, and 20% (issue 47's target), with the scorer-alone precision >= 0.75 and at most
   two ordinary dev sentences flagged. A variant is only better when its F1 is higher at the
   same anti-bias rate: a lower threshold buys F1 with anti-bias flags on every variant.

The flags follow the policy table: a high or critical term flags; a medium term flags unless
the scorer is below ``review`` (``clear``); a post with no term above low and no speech about
harm flags when the scorer reaches the solo floor (``lexicon_state``, ``speech_about_harm`` of
the packaged lexicon, read once).

Changes tried (``VARIANTS``): idf column weights; C; anti-bias train rows weighted 3 times;
group names masked in extra n-grams (``河南人都是`` -> ``<G>都是``, so a generalisation learned
on one topic reads on another); an average of the binary and idf models; and the cue features
of :data:`CUES`, written for this study from general knowledge of the language and a reading
of COLD's anti-bias TRAIN posts (never dev, test or the held-out topic): a group followed by a
generalisation (``X都是``), a demonstrative before a group (``这些X``), second-person address,
a denied generalisation, the writer's own membership (``作为一个X人``), praise, defending a
group against slander, a disclaimer before a claim (``我不是歧视，但…``), a report of what
others say. Each cue adds ``y:<cue>`` and ``y:<a>&<b>`` for cues in one sentence, like
:mod:`~workflows.content_moderation.zh_cues`.

Usage, from the repository root::

    python -m benchmarks.moderation_dev_generalise

Writes ``benchmarks/results/moderation_dev_generalise.{json,md}`` (``--out``).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from benchmarks.moderation_ablation import _figures, finish, start
from benchmarks.moderation_dev_recall import _scaled, _weighted, _weights
from workflows.content_moderation.dataset import LabelledPost
from workflows.content_moderation.fitting import FIT_SETTINGS, EvalRows, choose_thresholds, platt
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.policy import load_policy
from workflows.content_moderation.scorer import SEED, features, hashed_matrix, lexicon_features
from workflows.content_moderation.zh_cues import SENTENCE, load_zh_cues

_G = load_zh_cues().patterns["target"].pattern
_CLAUSE = r"[^，,。！？!?；;\s]"
#: The study's cues (name -> pattern over the normalised Simplified text; see the docstring).
CUES: dict[str, str] = {
    "group_general": rf"(?:{_G}){_CLAUSE}{{0,2}}(?:都|全|就|总|一个个|个个|基本|大多|大部分|普遍|"
    r"天生|永远|从来|没一个)",
    "these_group": rf"(?:这些|那些|这帮|那帮|这群|那群|这种|那种|这类|此类|一群|一帮)"
    rf"[\u4e00-\u9fff]{{0,3}}(?:{_G}|人|东西|货|玩意)",
    "you": r"(?<!迷)[你妳您](?!好)|楼主|楼上|楼下|层主|博主|up主|题主",
    "denied_general": r"(?:不是|并非|并不是|不全是|未必|不一定|不见得|不能说)"
    r"(?:所有|都|全|每个|个个)|一概而论|一刀切|以偏概全|不只有|不只是|少之又少|个别|个例|部分",
    "member": r"作为(?:一[个名位])?[\u4e00-\u9fff]{1,4}人|"
    r"我(?:就|也|本人)?是[\u4e00-\u9fff]{1,4}人|我们[\u4e00-\u9fff]{1,3}人|"
    r"[\u4e00-\u9fff]{1,3}人表示|身为",
    "praise": r"善良|热情|友好|友善|优秀|厉害|天才|勤劳|朴实|淳朴|真诚|好客|努力|"
    r"聪明|漂亮|可爱|靠谱|尊重|尊敬|心疼|佩服|喜欢|温柔|礼貌|好人",
    "defend": r"喷子|为了黑而黑|黑子|乱骂|看不下去|贴.{0,6}标签|被黑|黑得|洗地|"
    r"地域黑|地图炮|歧视|偏见|刻板",
    "disclaimer": r"(?:不是|并非|我不|没有|无意|不想)(?:要)?(?:歧视|地域黑|黑|针对|地图炮)"
    r"[^。！？!?]{0,8}(?:但|可是|不过|就是|真的|确实|实在)",
    "report_of": r"(?:说|觉得|认为|以为|骂|叫)[^。！？!?]{0,10}(?:都是|就是|全是)",
}
_COMPILED = {name: re.compile(pattern) for name, pattern in CUES.items()}
_HAN = re.compile(r"[\u3400-\u9fff]")
_MASK = "\u3400"  # a rare Han character standing for any group name


def cue_features(text: str, use: tuple[str, ...]) -> list[str]:
    """``y:<cue>`` for each cue of ``use`` in the post and ``y:<a>&<b>`` for cues that share a
    sentence (Chinese posts only).

    Example:
        >>> cue_features("河南人都是骗子", ("group_general", "you"))
        ['y:group_general']
    """
    s = normalize(text).text
    if not _HAN.search(s):
        return []
    seen: set[str] = set()
    pairs: set[str] = set()
    for sentence in SENTENCE.findall(s) or [s]:
        here = sorted(n for n in use if _COMPILED[n].search(sentence))
        seen.update(here)
        pairs.update(f"y:{a}&{b}" for a, b in itertools.combinations(here, 2))
    return [f"y:{n}" for n in sorted(seen)] + sorted(pairs)


def masked_ngrams(text: str) -> list[str]:
    """Character 2- to 4-grams that hold a group name, with every group name masked
    (``k:`` features: ``河南人都是`` and ``女人都是`` give the same ``k:<G>都是``)."""
    s = load_zh_cues().patterns["target"].sub(_MASK, normalize(text).text)
    out = []
    for run in re.findall(r"[\u3400-\u9fff]+", s):
        for n in (2, 3, 4):
            out += [
                f"k:{run[i : i + n]}" for i in range(len(run) - n + 1) if _MASK in run[i : i + n]
            ]
    return out


def four_grams(text: str) -> list[str]:
    """Character 4-grams of the runs of Chinese characters (``q:`` features; the packaged
    features stop at 3-grams)."""
    out = []
    for run in re.findall(r"[\u3400-\u9fff]+", normalize(text).text):
        out += [f"q:{run[i : i + 4]}" for i in range(len(run) - 3)]
    return out


#: name -> settings: ``idf`` (column weights), ``c``, ``anti`` (anti-bias row weight), ``cues``
#: (names of :data:`CUES` added), ``mask`` (masked n-grams added), ``four`` (char 4-grams
#: added), ``row_weight`` (an array of per-train-row weight factors), ``mean`` (average of the
#: binary and the idf model's probabilities).
VARIANTS: dict[str, dict[str, Any]] = {
    "packaged features, binary (refit)": {"idf": False},
    "idf weights": {},
    "idf, C 0.5": {"c": 0.5},
    "idf, C 2": {"c": 2.0},
    "idf, anti-bias rows x3": {"anti": 3.0},
    "idf + masked group n-grams": {"mask": True},
    "binary + masked group n-grams": {"idf": False, "mask": True},
    "mean of binary and idf models": {"mean": True},
    "idf + all study cues": {"cues": tuple(CUES)},
    "binary + all study cues": {"idf": False, "cues": tuple(CUES)},
    **{f"idf + cue {name}": {"cues": (name,)} for name in CUES},
    **{f"idf + all study cues but {name}": {"cues": tuple(c for c in CUES if c != name)}
       for name in CUES},
}  # fmt: skip


def _probabilities(data: dict[str, Any], cfg: dict[str, Any]) -> np.ndarray:
    """Calibrated dev probabilities of one variant (fit on train, Platt on dev)."""
    if cfg.get("mean"):
        return (_probabilities(data, {"idf": False}) + _probabilities(data, {})) / 2.0
    from sklearn.linear_model import LogisticRegression

    use, mask = cfg.get("cues", ()), cfg.get("mask", False)

    def matrix(posts: list[LabelledPost], spans: list[Any]) -> Any:
        rows = []
        for p, s in zip(posts, spans, strict=True):
            extra = cue_features(p.text, use) + (masked_ngrams(p.text) if mask else [])
            extra += four_grams(p.text) if cfg.get("four") else []
            rows.append(features(p.text) + lexicon_features(s) + extra)
        return hashed_matrix(rows)

    train, dev = data["train"], data["dev"]
    y = np.array([p.truth["flagged"] for p in train], dtype=np.int64)
    x, x_dev = matrix(train, data["train_flags"]["spans"]), matrix(dev, data["dev_flags"]["spans"])
    if cfg.get("idf", True):
        scale = _scaled(x, y, "idf")
        x, x_dev = _weighted(x, scale), _weighted(x_dev, scale)
    model = LogisticRegression(C=cfg.get("c", FIT_SETTINGS["zh/flagged"][0]), solver="liblinear",
                               random_state=SEED, max_iter=1000)  # fmt: skip
    weight = _weights(train, cfg.get("anti", 1.0)) * cfg.get("row_weight", 1.0)
    model.fit(x, y, sample_weight=weight)
    z = model.decision_function(x_dev)
    a, b = platt(z, np.array([p.truth["flagged"] for p in dev], dtype=np.int64))
    return np.asarray(1.0 / (1.0 + np.exp(-(a * z + b))))


class DevFlags:
    """The packaged lexicon's reading of the dev posts, and the policy's combination with a
    scorer at (review, solo floor)."""

    def __init__(self, data: dict[str, Any]) -> None:
        dev, dv = data["dev"], data["dev_flags"]
        self.labelled = np.array([p.fine != "ordinary" for p in dev])
        self.posts = [p for p, k in zip(dev, self.labelled, strict=True) if k]
        self.truth = np.array([p.truth["flagged"] for p in self.posts])
        self.strong = dv["strong"]
        self.medium = dv["term"] & ~dv["strong"]
        self.clean = ~dv["term"] & ~dv["speech"]
        self.rows = EvalRows(y=np.array([p.truth["flagged"] for p in dev], dtype=np.int64),
                             lex=dv["strong"], plain=~self.labelled, cand=~dv["speech"],
                             term=dv["term"])  # fmt: skip

    def at(self, p: np.ndarray, review: float, floor: float) -> dict[str, Any]:
        """Dev figures of lexicon + scorer; ``solo_precision`` of the scorer's own flags."""
        alone = self.clean & (p >= max(review, floor))
        flagged = self.strong | (self.medium & (p >= review)) | alone
        solo = alone[self.labelled]
        return {**_figures(self.posts, flagged[self.labelled]),
                "solo_precision": round(float((solo & self.truth).sum() / max(solo.sum(), 1)), 4),
                "ordinary_flagged": int(flagged[~self.labelled].sum()),
                "review": float(review), "floor": float(floor)}  # fmt: skip


REVIEWS = tuple(float(t) for t in np.round(np.arange(0.30, 0.80, 0.02), 2))
FLOORS = tuple(float(t) for t in np.round(np.arange(0.40, 0.90, 0.025), 3))
#: Anti-bias caps of part 2: the packaged workflow's dev count (27 of 85), 24 of 85, 20%.
CAPS = (27 / 85, 24 / 85, 0.20)


def judge(p: np.ndarray, flags: DevFlags, solo_floor: float) -> dict[str, Any]:
    """Part 1 (the packaged rules) and part 2 (best F1 under each of :data:`CAPS`)."""
    review = choose_thresholds(p, flags.rows, min_precision=FIT_SETTINGS["zh/flagged"][1],
                               grid_start=FIT_SETTINGS["zh/flagged"][2], solo=True)[0]  # fmt: skip
    floor = next((f for f in FLOORS if flags.at(p, review, f)["solo_precision"] >= solo_floor),
                 1.0)  # fmt: skip
    grid = [flags.at(p, r, f) for r in REVIEWS for f in FLOORS]
    grid = [g for g in grid if g["solo_precision"] >= solo_floor and g["ordinary_flagged"] <= 2]
    best = {}
    for cap in CAPS:
        ok = [g for g in grid if g["anti_bias_flagged"] <= cap + 1e-9]
        best[f"{cap:.4f}"] = max(ok, key=lambda g: g["f1"], default=None)
    return {"packaged_rules": flags.at(p, review, floor), "best_at_anti_bias": best}


def _cell(g: dict[str, Any] | None) -> str:
    if g is None:
        return "none"
    return (f"{g['f1']:.3f} (P {g['precision']:.3f}, R {g['recall']:.3f}, anti-bias "
            f"{round(g['anti_bias_flagged'] * 85)}/85, safe {g['safe_flagged']:.1%})")  # fmt: skip


def _lines(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["## By the packaged rules (review by best dev F1, solo floor by dev precision)", "",
             "| variant | review / solo floor | P | R | F1 | anti-bias | safe | scorer-alone P |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in results.items():
        g = r["packaged_rules"]
        lines.append(f"| {name} | {g['review']:.2f} / {g['floor']:.3f} | {g['precision']} | "
                     f"{g['recall']} | {g['f1']} | {round(g['anti_bias_flagged'] * 85)}/85 "
                     f"({g['anti_bias_flagged']:.1%}) | {g['safe_flagged']:.1%} | "
                     f"{g['solo_precision']} |")  # fmt: skip
    lines += ["", "## Best dev F1 at equal anti-bias flags (grid of review x solo floor; "
              "scorer-alone P >= 0.75, <= 2 ordinary flagged)", "",
              "| variant | anti-bias <= 27/85 (packaged) | <= 24/85 | <= 20% |",
              "|---|---|---|---|"]  # fmt: skip
    for name, r in results.items():
        cells = [_cell(g) for g in r["best_at_anti_bias"].values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    args, data = start("moderation_dev_generalise", __doc__, argv)
    flags = DevFlags(data)
    solo_floor = load_policy().scorer_min_precision
    results = {name: judge(_probabilities(data, cfg), flags, solo_floor)
               for name, cfg in VARIANTS.items()}  # fmt: skip
    finish(args, "moderation_dev_generalise",
           "Cross-topic features of the Chinese scorer (dev part only)", data,
           _lines(results), {"variants": results, "cues": CUES})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
