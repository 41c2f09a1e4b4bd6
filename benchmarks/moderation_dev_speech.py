"""Speech about harm and Chinese precision (issue 47): the packaged lexicon + scorer on the
DEV part only, with an ablation of the cue groups added for it.

For each configuration, the dev posts are judged by ``moderate_lexicon_only`` (lexicon +
scorer, no model) and reported per language: flagged precision, recall, F1, macro F1, and the
share of COLD anti-bias and other safe posts flagged, and the ordinary dev sentences sent to
review or blocked. The ablation removes one group of ``mention.toml`` cues at a time (by the
``# group:`` comment that starts it) and reloads. Test and the held-out topic are never read.

Usage, from the repository root::

    python -m benchmarks.moderation_dev_speech            # packaged cues, then the ablation
    python -m benchmarks.moderation_dev_speech --show 40  # also print dev anti-bias posts flagged

Writes ``benchmarks/results/moderation_dev_speech.{json,md}`` (``--out``).
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks.harness import BenchParser, host_info, write_results
from orchestrator.config import Settings
from workflows.content_moderation import findings, matcher
from workflows.content_moderation.dataset import (
    LabelledPost,
    load_moderation_set,
    load_ordinary_set,
)
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.judgement import lexicon_state
from workflows.content_moderation.mention import DEFAULT_MENTION_PATH, load_mention_rules
from workflows.content_moderation.policy import Policy, load_policy
from workflows.content_moderation.service import moderate_lexicon_only

#: A cue group starts at a comment line ``# group: NAME`` inside a list of ``mention.toml``.
GROUP = re.compile(r"^\s*# group: (\S+)")


def dev_posts() -> list[LabelledPost]:
    """The labelled dev posts, then the ordinary dev sentences."""
    root = Settings().data_dir
    return [*load_moderation_set(root, "dev"), *load_ordinary_set(root, "dev")]


def figures(posts: list[LabelledPost], flagged: list[bool]) -> dict[str, Any]:
    """Flagged P/R/F1/macro F1 of the labelled posts, anti-bias and safe flag rates, and the
    ordinary sentences flagged."""
    lab = [(p, f) for p, f in zip(posts, flagged, strict=True) if p.fine != "ordinary"]
    tp = sum(f and p.truth["flagged"] for p, f in lab)
    fp = sum(f and not p.truth["flagged"] for p, f in lab)
    fn = sum(not f and p.truth["flagged"] for p, f in lab)
    tn = len(lab) - tp - fp - fn
    prec, rec = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    neg = 2 * tn / max(2 * tn + fp + fn, 1)

    def rate(keep: Any) -> list[int]:
        rows = [f for p, f in lab if keep(p)]
        return [sum(rows), len(rows)]

    ordinary = [f for p, f in zip(posts, flagged, strict=True) if p.fine == "ordinary"]
    return {
        "n": len(lab), "precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4),
        "macro_f1": round((f1 + neg) / 2, 4),
        "anti_bias": rate(lambda p: p.fine == "anti-bias"),
        "safe": rate(lambda p: p.topic is not None and not p.truth["flagged"]
                     and p.fine != "anti-bias"),
        "ordinary_flagged": [sum(ordinary), len(ordinary)],
    }  # fmt: skip


#: Probabilities tried for the scorer's solo threshold (policy ``scorer.solo_review_from``).
SOLO_GRID = tuple(round(0.40 + 0.05 * i, 2) for i in range(12))


def solo_table(posts: list[LabelledPost], verdicts: list[Any], floor: float) -> dict[str, Any]:
    """Chinese labelled posts where the scorer alone would review (its own state ``medium``,
    the lexicon nothing above low, no speech about harm): per threshold of :data:`SOLO_GRID`,
    how many reach it and their precision; ``from`` is the lowest threshold whose precision is
    at least ``floor`` (what ``policy.toml`` ``scorer.solo_review_from.zh`` should hold)."""
    alone = [(v.scorer.flagged, p.truth["flagged"]) for p, v in zip(posts, verdicts, strict=True)
             if p.lang == "zh" and p.fine != "ordinary" and v.scorer is not None
             and v.scorer.state == "medium" and not v.lexicon.speech_about_harm
             and lexicon_state(v.lexicon) in ("none", "mention", "low")]  # fmt: skip
    rows = {}
    for t in SOLO_GRID:
        hits = [y for q, y in alone if q >= t]
        rows[f"{t:.2f}"] = [len(hits), round(sum(hits) / len(hits), 4) if hits else None]
    start = next((float(t) for t, (_n, prec) in rows.items() if prec and prec >= floor), None)
    return {"floor": floor, "from": start, "by_threshold": rows}


def judge(
    posts: list[LabelledPost],
    *,
    cues: Path = DEFAULT_MENTION_PATH,
    policy: Policy | None = None,
    generalise: bool = True,
) -> dict[str, Any]:
    """Per language: the figures of the lexicon + scorer on ``posts`` with the cue file
    ``cues`` and ``policy`` (the packaged ones by default), and without the matcher's
    generalisation hits unless ``generalise``; ``solo``: the scorer-alone precision table
    (:func:`solo_table`)."""
    policy = policy or load_policy()
    workflow = ContentModerationWorkflow(policy=policy)
    found = matcher.generalisations if generalise else lambda _text, _rules: []
    with (
        mock.patch.object(findings, "load_mention_rules", lambda: load_mention_rules(cues)),
        mock.patch.object(matcher, "generalisations", found),
    ):
        verdicts = [moderate_lexicon_only(p.text, workflow) for p in posts]
    flagged = [v.decision.value != "allow" for v in verdicts]
    out: dict[str, Any] = {"solo": solo_table(posts, verdicts, policy.scorer_min_precision)}
    for lang in ("zh", "en"):
        keep = [i for i, p in enumerate(posts) if p.lang == lang]
        out[lang] = figures([posts[i] for i in keep], [flagged[i] for i in keep])
    out["_flagged"] = flagged
    return out


def without_group(text: str, name: str) -> str:
    """``mention.toml`` with the patterns of cue group ``name`` commented out (a group ends
    at the next group comment or the list's closing bracket)."""
    lines, inside = [], False
    for line in text.splitlines():
        m = GROUP.match(line)
        if m:
            inside = m.group(1) == name
        elif line.strip() == "]":
            inside = False
        lines.append("# " + line if inside and line.strip().startswith('"') else line)
    return "\n".join(lines) + "\n"


def groups(text: str) -> list[str]:
    """The cue group names of ``mention.toml``, in file order."""
    return list(dict.fromkeys(m.group(1) for line in text.splitlines() if (m := GROUP.match(line))))


def _row(name: str, fig: dict[str, Any]) -> str:
    def pct(pair: list[int]) -> str:
        return f"{pair[0]}/{pair[1]} ({pair[0] / max(pair[1], 1):.1%})"

    zh, en = fig["zh"], fig["en"]
    return (f"| {name} | {zh['precision']} | {zh['recall']} | {zh['f1']} | {zh['macro_f1']} | "
            f"{pct(zh['anti_bias'])} | {pct(zh['safe'])} | {pct(zh['ordinary_flagged'])} | "
            f"{en['f1']} | {pct(en['ordinary_flagged'])} |")  # fmt: skip


HEAD = (
    "| configuration | zh P | zh R | zh F1 | zh macro F1 | anti-bias flagged | safe flagged | "
    "zh ordinary flagged | en F1 | en ordinary flagged |\n" + "|---" * 10 + "|"
)


def main(argv: list[str] | None = None) -> int:
    parser = BenchParser("moderation_dev_speech", __doc__, repeat=None, quick=False)
    parser.add_argument("--show", type=int, default=0, help="print N flagged anti-bias posts")
    parser.add_argument("--no-ablation", action="store_true", help="packaged cues only")
    args = parser.parse_args(argv)
    posts = dev_posts()
    results = {"packaged": judge(posts)}
    shown = [p.text for p, f in zip(posts, results["packaged"]["_flagged"], strict=True)
             if f and p.fine == "anti-bias" and p.lang == "zh"]  # fmt: skip
    for text in shown[: args.show]:
        print("FLAGGED anti-bias:", text[:160].replace("\n", " "))
    if not args.no_ablation:
        packaged = load_policy()
        no_floor = dataclasses.replace(packaged, scorer_solo_from={})
        results["without the scorer's solo floor"] = judge(posts, policy=no_floor)
        text = DEFAULT_MENTION_PATH.read_text(encoding="utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "mention.toml"
            for name in groups(text):
                path.write_text(without_group(text, name), encoding="utf-8")
                results[f"without cue group {name}"] = judge(posts, cues=path)
            everything = text  # every new group out at once
            for name in groups(text):
                everything = without_group(everything, name)
            path.write_text(everything, encoding="utf-8")
            results["without generalisations (generalised.py)"] = judge(posts, generalise=False)
            results["without all three (new cue groups, solo floor, generalisations)"] = judge(
                posts, cues=path, policy=no_floor, generalise=False
            )
    lines = [HEAD, *(_row(k, v) for k, v in results.items())]
    solo = results["packaged"]["solo"]
    lines += ["", f"Scorer alone (Chinese dev, packaged cues): posts it would review with no term "
              f"above low, and their precision, per threshold; floor {solo['floor']}, "
              f"lowest threshold reaching it: **{solo['from']}**.", "",
              "| from | posts | precision |", "|---|---|---|",
              *(f"| {t} | {n} | {p} |" for t, (n, p) in solo["by_threshold"].items())]  # fmt: skip
    figs = {k: {key: v[key] for key in ("zh", "en", "solo")} for k, v in results.items()}
    md = ("# Speech about harm and Chinese precision: dev only (lexicon + scorer)\n\n"
          + "\n".join(lines) + "\n")  # fmt: skip
    write_results(args.out, "moderation_dev_speech", {**figs, "host": host_info()}, md,
                  command=args.command)  # fmt: skip
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
