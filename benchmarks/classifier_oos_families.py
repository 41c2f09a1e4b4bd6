"""Issue 46 item 9: out-of-scope questions that hold a service word, on families nothing was
tuned on.

Usage, from the repository root::

    python -m benchmarks.classifier_oos_families --part train_dev   # as often as wanted
    python -m benchmarks.classifier_oos_families --part dev_13      # round N's dev part, any time
    python -m benchmarks.classifier_oos_families --part test_15 --look 1   # round N's one look
    python -m benchmarks.classifier_oos_families --part looked   # rounds 1-4's test parts, dev-like

The parts are :data:`PARTS`: ``train_dev`` and ``test`` (rounds 1-3's file), ``test_2`` ...
``test_15`` (a test part for each round from 2 on, 5 aside; rounds 7-13 have a ``dev_N`` too)
and ``looked``.

The families are data (JSON, ``{"about", "parts": {TABLE: {family: {"lang", "route",
"texts"}}}}``), in ``tests/data/classifier_oos_families*.json`` (:data:`PARTS`). Rounds 1-3's
file, ``tests/data/classifier_oos_families.json`` (written before any rule was
changed for item 9; round 2's ``TRAIN_DEV_2`` and ``TEST_2`` before any round-2 rule change;
round 3's ``TRAIN_DEV_3`` before any round-3 rule change; round 4's ``TEST_4``, in
``tests/data/classifier_oos_families_test4.json``, before any round-4 change to the learned tier's
training data, the model, the rules or the thresholds). ``looked`` is the test parts of rounds
1-4 together: each was looked at once already, so they are dev-like figures (round 4's from
round 6 on), run as often as wanted and never recorded as a look.
``train_dev`` (the train/dev families of rounds 1-3) may be run as often as wanted; ``test`` and
``test_2`` are held-out parts: every run of it is a *look* and is written to
``benchmarks/results/classifier_oos_families_<date>_test_look<N>.{json,md}`` (``--look`` numbers
it; an existing look is never overwritten), so the record shows how many times it was seen.

Figures: fallback recall by language (of the out-of-scope questions, the share that fell back),
customer-service precision (of the requests sent to customer service, the share that belong
there: the in-scope controls of the same domains), and every miss.

Precision depends on the mix: a part with three out-of-scope requests to one in-scope one (round
7's test part) gives a lower precision than the same classifier on real traffic. So it is given
twice: ``cs_precision`` as counted on the part's own mix, and ``cs_precision_at_eval_mix`` with
the in-scope and out-of-scope rows weighted to the held-out split's share of customer-service to
fallback requests (:data:`EVAL_MIX`), from the part's own per-class rates
(recall of customer service, share of out-of-scope requests sent there).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.core import default_model_path
from orchestrator.routes import Route

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TARGET_FALLBACK_RECALL_EN = 0.9
TARGET_CS_PRECISION = 0.97
#: The dev and test parts of each round. Rounds 1 and 2 (``test``, ``test_2``) are tables of
#: ``tests/data/classifier_oos_families.json``; each later part has a file of its own
#: (``..._test3.json``, ``..._dev8.json``), its table named as the part (``TEST_3``, ``DEV_8``;
#: round 7's dev part ``TRAIN_DEV_7``).
PARTS = (
    *("test", "test_2", "test_3", "test_4", "test_6", "dev_7", "test_7", "dev_8", "test_8"),
    *("dev_9", "test_9", "dev_10", "test_10", "dev_11", "test_11", "dev_12", "test_12"),
    *("dev_13", "test_13", "test_14", "test_15"),
)
#: Customer-service and fallback rows of the labelled set's held-out split (``orchestrator
#: classifier eval``, n=5,651: support 2,593 and 1,064), the mix ``cs_precision_at_eval_mix``
#: weights a part's rows to.
EVAL_MIX = (2593, 1064)
Families = dict[str, tuple[str, Route, tuple[str, ...]]]


def data_file(part: str) -> Path:
    """The JSON file that holds ``part`` (``train_dev`` and ``looked``: the rounds 1-3 file)."""
    suffix = (
        "" if part in ("test", "test_2", "train_dev", "looked") else "_" + part.replace("_", "")
    )
    return ROOT / "tests" / "data" / f"classifier_oos_families{suffix}.json"


def load_families(path: Path, table: str) -> Families:
    """One table of a families file: ``{"parts": {table: {family: {"lang", "route", "texts"}}}}``
    as family -> (lang, route, texts).

    Raises:
        SystemExit: The file or the table is missing, or a family lacks a key.
    """
    try:
        parts = json.loads(path.read_text(encoding="utf-8"))["parts"]
        return {
            name: (f["lang"], Route(f["route"]), tuple(f["texts"]))
            for name, f in parts[table].items()
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(
            f"{path}: cannot read table {table!r} of phrasing families: {exc!r}"
        ) from None


def families(part: str) -> Families:
    """One part's phrasing families: a round's dev or test part (:data:`PARTS`), ``looked``
    (rounds 1-4's test parts, each looked at once already) or ``train_dev`` (the train/dev
    families of rounds 1-3)."""
    if part == "looked":
        return {
            f"{k} ({n})": v
            for n, p in ((1, "test"), (2, "test_2"), (3, "test_3"), (4, "test_4"))
            for k, v in families(p).items()
        }
    if part in PARTS:
        return load_families(data_file(part), "TRAIN_DEV_7" if part == "dev_7" else part.upper())
    path = data_file(part)
    return {
        **load_families(path, "TRAIN_DEV"),
        **{f"{k} (2)": v for k, v in load_families(path, "TRAIN_DEV_2").items()},
        **{f"{k} (3)": v for k, v in load_families(path, "TRAIN_DEV_3").items()},
    }


def measure(part: str) -> dict[str, object]:
    """Classify every family's texts with the shipped classifier; the figures and the misses."""
    clf = RuleClassifier(reload_interval=None)
    rows = []
    for family, (lang, want, texts) in families(part).items():
        for text in texts:
            c = clf.classify_text(text)
            rows.append(
                {
                    "family": family,
                    "lang": lang,
                    "text": text,
                    "want": want,
                    "got": c.route,
                    "confidence": c.confidence,
                    "reason": c.reason,
                }
            )
    out: dict[str, object] = {
        "part": part,
        "n": len(rows),
        "rules_version": clf.version,
        "provenance": provenance(part),
    }
    for lang in ("en", "zh"):
        oos = [r for r in rows if r["want"] == "fallback" and r["lang"] == lang]
        hit = sum(r["got"] == "fallback" for r in oos)
        out[f"fallback_recall_{lang}"] = round(hit / len(oos), 3) if oos else None
        out[f"n_out_of_scope_{lang}"] = len(oos)
    said_cs = [r for r in rows if r["got"] == "customer_service"]
    right = sum(r["want"] == "customer_service" for r in said_cs)
    out["cs_precision"] = round(right / len(said_cs), 3) if said_cs else None
    out["n_said_cs"] = len(said_cs)
    out["cs_precision_at_eval_mix"] = precision_at_mix(rows)
    out["misses"] = [r for r in rows if r["got"] != r["want"]]
    return out


def precision_at_mix(
    rows: list[dict[str, object]], mix: tuple[int, int] = EVAL_MIX
) -> float | None:
    """Customer-service precision with the in-scope rows weighted to ``mix[0]`` and the
    out-of-scope rows (want fallback) to ``mix[1]``: ``r * a / (r * a + f * b)``, where ``r`` is
    the share of in-scope rows sent to customer service and ``f`` that of out-of-scope rows.
    None when the part has no rows of either class or none is sent to customer service."""
    cs = [r["got"] == "customer_service" for r in rows if r["want"] == "customer_service"]
    fb = [r["got"] == "customer_service" for r in rows if r["want"] == "fallback"]
    if not cs or not fb:
        return None
    hit, false = mix[0] * sum(cs) / len(cs), mix[1] * sum(fb) / len(fb)
    return round(hit / (hit + false), 3) if hit + false else None


def _last_commit(path: Path) -> str:
    """The last commit that touched ``path`` (and ``+dirty`` when it differs from it)."""
    rel = str(path.relative_to(ROOT))
    git = ["git", "-C", str(ROOT)]
    done = subprocess.run([*git, "log", "-1", "--format=%H", "--", rel], capture_output=True)
    dirty = subprocess.run([*git, "diff", "--quiet", "HEAD", "--", rel]).returncode != 0
    return (done.stdout.decode().strip() or "uncommitted") + ("+dirty" if dirty else "")


def provenance(part: str) -> dict[str, str]:
    """What was measured: the data file's and the shipped model's last commits, and the model
    file's SHA-256 (first 12 hex digits)."""
    data = data_file(part)
    model = default_model_path()
    digest = hashlib.sha256(model.read_bytes()).hexdigest()[:12] if model.exists() else "none"
    return {
        "data_file": str(data.relative_to(ROOT)),
        "data_commit": _last_commit(data),
        "model_file": str(model.relative_to(ROOT)),
        "model_commit": _last_commit(model),
        "model_sha256": digest,
    }


def write(result: dict[str, object], look: int | None) -> Path:
    """The JSON and Markdown record of a run (a test run: its look number, never overwritten)."""
    day = datetime.now(UTC).date().isoformat()
    stem = f"classifier_oos_families_{day}_{result['part']}" + (f"_look{look}" if look else "")
    path = RESULTS / f"{stem}.json"
    if look and path.exists():
        raise SystemExit(f"{path} exists: a look is recorded once; number the next one")
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    lines = [
        f"# Out-of-scope service questions, {result['part']} part ({day})",
        "",
        f"Rules {result['rules_version']}; {result['n']} requests. "
        + (f"Look {look} at the test part." if look else ""),
        "",
        *(f"- {k}: {v}" for k, v in dict(result["provenance"]).items()),  # type: ignore[call-overload]
        "",
        "| figure | value | target |",
        "|---|---|---|",
        f"| fallback recall, English | {result['fallback_recall_en']} "
        f"(n={result['n_out_of_scope_en']}) | {TARGET_FALLBACK_RECALL_EN} |",
        f"| fallback recall, Chinese | {result['fallback_recall_zh']} "
        f"(n={result['n_out_of_scope_zh']}) | - |",
        f"| customer-service precision | {result['cs_precision']} "
        f"(n={result['n_said_cs']}) | {TARGET_CS_PRECISION} |",
        f"| customer-service precision at the eval split's mix {EVAL_MIX} | "
        f"{result['cs_precision_at_eval_mix']} | - |",
        "",
        "Misses:",
        "",
    ]
    misses = result["misses"]
    assert isinstance(misses, list)
    lines += [f"- {m['want']} -> {m['got']} ({m['family']}): {m['text']}" for m in misses]
    if not misses:
        lines.append("- none")
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        choices=("train_dev", "looked", *PARTS),
        default="train_dev",
    )
    parser.add_argument("--look", type=int, default=None, help="Number of this look at test.")
    args = parser.parse_args()
    if args.part.startswith("test") and not args.look:
        parser.error("a run of the test part is a look: give --look N")
    logging.getLogger("orchestrator.classifier.core").setLevel(logging.ERROR)
    result = measure(args.part)
    path = write(result, args.look if args.part.startswith("test") else None)
    print(path.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
