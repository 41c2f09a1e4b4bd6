"""The labelled moderation set: real posts from ``moderation/*.csv`` with a common label.

Each CSV's labelling scheme is recognised by its columns, not its file name, so held-back
samples of the same kinds load the same way:

==============================  ==========================================================
columns                         labels (``flagged`` = should not be published as is)
==============================  ==========================================================
``class`` (Davidson et al.)     0 hate → flagged + hate; 1 offensive → flagged +
                                offensive; 2 neither → not flagged. Hate rows are not
                                scored for ``offensive``.
``toxic`` ... ``identity_hate``  any flag → flagged; ``identity_hate`` → hate; any flag
(Jigsaw)                        without ``identity_hate`` → offensive (identity-hate rows
                                not scored for ``offensive``).
``label`` + ``TEXT`` (COLD)     1 → flagged, 0 → not; COLD does not say which kind, so its
                                rows are scored for ``flagged`` only.
==============================  ==========================================================

A verdict predicts ``flagged`` when its decision is review or block, ``hate`` when it is
flagged with a hate or regional-discrimination category, and ``offensive`` when it is flagged
with any other category (harassment, profanity, threat, sexual ...).

**Split.** The same stable hash as the routing set
(:func:`orchestrator.classifier.labelled_set.split_of`: SHA-256 of ``file name|text``, 50/50):
``tune`` may be looked at and tuned on; ``test`` is held out — lexicon building and tuning never
read it, and reports quote it.

**Protocol parts (issue 47).** On top of that split every post gets a ``part``
(:func:`part_of`): a COLD post of :data:`HELDOUT_TOPIC` is ``heldout-topic`` (test half) or
``unused`` (tune half: the lexicon predates this protocol and its authors read that half); any
other ``test`` post is ``test``; a ``tune`` post is ``dev`` (one in three, by a second salted
hash) or ``train``. The scorer fits on ``train``, is calibrated and tuned on ``dev``; ``test``
and ``heldout-topic`` are looked at once per release (``benchmarks/results/moderation_looks.log``).
The protocol parts also read :data:`FINE_FILE`, COLD's own test file with its fine-grained
labels (anti-bias posts), split the same way; no model is fitted on it.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from orchestrator.classifier.labelled_set import split_of
from orchestrator.datasets import ModerationLabel, moderation_labels, text_column
from orchestrator.exceptions import UserError
from workflows.content_moderation.normalize import is_han
from workflows.content_moderation.verdict import Category, Decision, Verdict

Split = Literal["tune", "test"]
Part = Literal["train", "dev", "test", "heldout-topic", "unused", "fresh", "fresh-heldout-topic"]
#: The parts of :data:`FRESH_FILE`: drawn after the test part was burnt (four looks), by a
#: rule committed before the file was built (``benchmarks/moderation_fresh_split.py``); never
#: fitted or tuned on, evaluated once per release.
FRESH_PARTS: tuple[str, ...] = ("fresh", "fresh-heldout-topic")
#: The protocol parts a report may be asked for (``unused`` is never reported).
PARTS: tuple[str, ...] = ("train", "dev", "test", "heldout-topic", *FRESH_PARTS)
#: The COLD topic held out entirely from fitting and tuning, to measure transfer. Chosen before
#: any look at the data by a rule stated in advance: the smallest topic of the shared sample
#: (gender 512 rows, region 656, race 832), so the fit keeps the most rows.
HELDOUT_TOPIC = "gender"
#: COLD's test.csv (thu-coai/COLDataset@a0c55a9, Apache-2.0), the only COLD file with
#: ``fine-grained-label`` (0 other, 1 individual, 2 group, 3 anti-bias); read by the protocol
#: parts only, never fitted on.
FINE_FILE = Path(__file__).resolve().parent / "data" / "cold_finegrained_test.csv"
#: COLD train/dev rows that are in neither the shared sample nor :data:`FINE_FILE`, selected by
#: a fixed hash rule (``benchmarks/moderation_fresh_split.py``): the :data:`FRESH_PARTS`.
FRESH_FILE = FINE_FILE.parent / "cold_fresh_2026-12-05.csv"
Lang = Literal["en", "zh"]
EvalLabel = ModerationLabel
EVAL_LABELS: tuple[EvalLabel, ...] = ("flagged", "hate", "offensive")
HATE_CATEGORIES = frozenset({Category.HATE, Category.REGIONAL_DISCRIMINATION})


class LabelledPost(BaseModel):
    """One post and its labels.

    Attributes:
        id: ``file.csv:row`` (row 1 is the header).
        text: The post.
        lang: ``en`` or ``zh`` (a post with at least two Chinese characters making a quarter
            of its non-space characters is ``zh``).
        source: File name.
        split: ``tune`` or ``test`` (held out).
        truth: The labels this source annotates, and their values.
        fine: A finer label for the confusion table: COLD's ``fine-grained-label`` when the
            file has it (``individual``, ``group``, ``anti-bias``, ``other``), else COLD's
            ``topic/offensive|safe``; None for other sources.
        hate_share: Share of the annotators who called the post hate speech (Davidson's
            ``hate_speech / count``, 0..1), when the file has those columns; None otherwise.
            The scorer's hate model learns from it (a 2-of-3 vote is less sure than 3-of-3).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    lang: Lang
    source: str
    split: Split
    truth: dict[EvalLabel, bool]
    fine: str | None = None
    hate_share: float | None = None
    topic: str | None = None
    part: Part = "train"


def part_of(source: str, text: str, topic: str | None) -> Part:
    """The protocol part of a post (see the module docstring); stable across runs."""
    if source == FRESH_FILE.name:
        return "fresh-heldout-topic" if topic == HELDOUT_TOPIC else "fresh"
    old = split_of(source, text)
    if topic == HELDOUT_TOPIC:
        return "heldout-topic" if old == "test" else "unused"
    if old == "test":
        return "test"
    digest = hashlib.sha256(f"issue47-dev|{source}|{text}".encode()).digest()
    return "dev" if int.from_bytes(digest[:8], "big") % 3 == 0 else "train"


#: COLD's fine-grained labels (test.csv of thu-coai/COLDataset): 0 safe (other), 1 attack on an
#: individual, 2 attack on a group, 3 anti-bias (safe).
COLD_FINE = {"0": "other", "1": "individual", "2": "group", "3": "anti-bias"}


def _fine(row: dict[str, str], columns: set[str]) -> str | None:
    if "label" not in columns or "TEXT" not in columns:
        return None
    for col in ("fine-grained-label", "fine_grained_label"):
        if col in columns:
            return COLD_FINE.get((row.get(col) or "").strip())
    topic = (row.get("topic") or "").strip()
    label = "offensive" if (row.get("label") or "").strip() == "1" else "safe"
    return f"{topic}/{label}" if topic else None


def language(text: str) -> Lang:
    """``zh`` when Chinese characters make a quarter of the non-space text, else ``en``."""
    han = sum(map(is_han, text))
    return "zh" if han >= 2 and han * 4 >= len(text.replace(" ", "")) else "en"


def _hate_share(row: dict[str, str], columns: set[str]) -> float | None:
    """Davidson's ``hate_speech / count`` (share of annotators who said hate), or None."""
    if not {"hate_speech", "count"} <= columns:
        return None
    try:
        votes, count = int(row.get("hate_speech") or ""), int(row.get("count") or "")
    except ValueError:
        return None
    return min(1.0, votes / count) if count > 0 and votes >= 0 else None


def _post(path: Path, i: int, text: str, truth: dict[EvalLabel, bool], **more: Any) -> LabelledPost:
    """The post of row ``i`` (0-based, after the header) of ``path``: its id, language, split
    and protocol part from the file name and text (``topic`` in ``more`` feeds the part)."""
    topic = more.get("topic")
    return LabelledPost(
        id=f"{path.name}:{i + 2}",
        text=text,
        lang=language(text),
        source=path.name,
        split=split_of(path.name, text),
        truth=truth,
        part=part_of(path.name, text, topic if isinstance(topic, str) else None),
        **more,
    )


def read_posts(path: Path) -> list[LabelledPost]:
    """The labelled posts of one CSV.

    Raises:
        UserError: Unreadable, not UTF-8 CSV, no text column, or no known label columns.
    """
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = set(reader.fieldnames or [])
            text_col = text_column(path, reader.fieldnames)
            if not columns & {"class", "toxic", "label"}:
                raise UserError(
                    f"{path}: no label column; expected 'class' (Davidson), 'toxic' (Jigsaw) "
                    "or 'label' (COLD)"
                )
            posts = []
            for i, row in enumerate(reader):
                text = (row.get(text_col) or "").strip()
                truth = moderation_labels(row, columns)
                if not text or truth is None:
                    continue
                topic = ((row.get("topic") or "").strip() or None) if "TEXT" in columns else None
                posts.append(
                    _post(
                        path, i, text, truth, fine=_fine(row, columns), topic=topic,
                        hate_share=_hate_share(row, columns),
                    )
                )  # fmt: skip
            return posts
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: cannot read as UTF-8 CSV: {exc}") from exc


def load_moderation_set(data_dir: Path, split: str = "test") -> list[LabelledPost]:
    """Every labelled post of ``data_dir/moderation/*.csv`` in ``split``, in file order.

    ``split`` is ``tune``, ``test`` or ``all`` (the 50/50 hash), or a protocol part of
    :data:`PARTS`; a part also reads :data:`FINE_FILE` (COLD's fine-labelled file), after the
    data folder's files; a part of :data:`FRESH_PARTS` reads only :data:`FRESH_FILE`.

    Raises:
        UserError: The folder is missing or holds no CSV; a file cannot be read; ``split`` is
            none of those names.
    """
    if split not in ("tune", "test", "all", *PARTS):
        raise UserError(f"unknown split {split!r}; use tune, test, all or one of {PARTS}")
    folder = Path(data_dir) / "moderation"
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        raise UserError(
            f"no CSV files in {folder}; point --data-dir (ORCH_DATA_DIR) at the folder that "
            "holds moderation/"
        )
    if split in FRESH_PARTS:  # read alone: the fit and the other parts never read this file
        if not FRESH_FILE.is_file():
            raise UserError(
                f"{FRESH_FILE} is missing; build it with "
                "`python -m benchmarks.moderation_fresh_split PATH_TO_COLDataset`"
            )
        return [p for p in read_posts(FRESH_FILE) if p.part == split]
    posts = [p for path in files for p in read_posts(path)]
    if split in PARTS:
        fine = read_posts(FINE_FILE) if FINE_FILE.is_file() else []
        return [p for p in [*posts, *fine] if p.part == split]
    return posts if split == "all" else [p for p in posts if p.split == split]


#: Folder of ``data_dir`` whose CSVs hold ordinary (publishable) customer-service text.
ORDINARY_FOLDER = "customer_service"


def load_ordinary_set(data_dir: Path, split: str = "tune") -> list[LabelledPost]:
    """Ordinary sentences: every row of ``data_dir/customer_service/*.csv`` in ``split``, as
    posts labelled not flagged and not hate (``fine`` = ``"ordinary"``).

    These are questions, requests and reviews written to a company (ATEC, Banking77, Bitext,
    CLINC150, Waimai reviews, angry ones included), so none should be reviewed. ``split`` is
    ``tune``, ``test``, ``all`` or a protocol part (``train``, ``dev``, ``test``). Bitext rows
    whose ``flags`` column holds ``W`` (written with offensive language) are left out. The
    split is the same stable hash as the moderation set (``file name|text``), so the fit reads
    the tune half and the false-positive guard checks the test half.

    Raises:
        UserError: The folder is missing or holds no CSV; a file has no text column or cannot
            be read.
    """
    folder = Path(data_dir) / ORDINARY_FOLDER
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        raise UserError(
            f"no CSV files in {folder}; point --data-dir (ORCH_DATA_DIR) at the folder that "
            f"holds {ORDINARY_FOLDER}/"
        )
    posts: list[LabelledPost] = []
    for path in files:
        try:
            with path.open(encoding="utf-8-sig", newline="") as handle:
                reader = csv.DictReader(handle)
                text_col = text_column(path, reader.fieldnames)
                for i, row in enumerate(reader):
                    text = (row.get(text_col) or "").strip()
                    if not text or "W" in (row.get("flags") or ""):
                        continue
                    row_split = split_of(path.name, text)
                    row_part = part_of(path.name, text, None)
                    if split not in ("all", row_split, row_part):
                        continue
                    ordinary: dict[EvalLabel, bool] = {"flagged": False, "hate": False}
                    posts.append(_post(path, i, text, ordinary, fine="ordinary"))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise UserError(f"{path}: cannot read as UTF-8 CSV: {exc}") from exc
    return posts


def predicted(verdict: Verdict) -> dict[EvalLabel, bool]:
    """The labels a verdict predicts (see the module docstring)."""
    flagged = verdict.decision is not Decision.ALLOW
    cats = {c.category for c in verdict.categories}
    return {
        "flagged": flagged,
        "hate": flagged and bool(cats & HATE_CATEGORIES),
        "offensive": flagged and bool(cats - HATE_CATEGORIES),
    }
