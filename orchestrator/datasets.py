"""Real requests from the shared data folder (``../shared/data``, sources in its SOURCES.md).

Every CSV of a kind folder (``customer_service/`` by default) is read; its text column is
found by name, so other samples of the same kinds load the same way.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from orchestrator.exceptions import UserError
from orchestrator.request import Request

#: Column names that hold the request text, in order of preference.
TEXT_COLUMNS = ("text", "utterance", "review", "sentence1", "comment_text", "tweet", "TEXT")

#: What a labelled moderation post is, by its dataset's own labels.
ModerationLabel = Literal["flagged", "hate", "offensive"]
#: Jigsaw's label columns (``moderation/jigsaw_toxic_sample.csv``).
JIGSAW_FLAGS = ("toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate")


def moderation_labels(row: dict[str, str], columns: set[str]) -> dict[ModerationLabel, bool] | None:
    """A moderation dataset row's labels, from its own columns (``SOURCES.md`` of the data
    folder): Davidson ``class`` (0 hate, 1 offensive, 2 neither), Jigsaw's flags, COLD
    ``label`` (1 offensive). ``offensive`` is left out where the dataset cannot say it (a hate
    post); None when the row has no readable label.
    """
    if "class" in columns:
        cls = (row.get("class") or "").strip()
        if cls not in ("0", "1", "2"):
            return None
        labels: dict[ModerationLabel, bool] = {"flagged": cls != "2", "hate": cls == "0"}
        if cls != "0":
            labels["offensive"] = cls == "1"
        return labels
    if "toxic" in columns:
        flags = {name: (row.get(name) or "").strip() not in ("", "0") for name in JIGSAW_FLAGS}
        labels = {"flagged": any(flags.values()), "hate": flags["identity_hate"]}
        if not flags["identity_hate"]:
            labels["offensive"] = any(flags.values())
        return labels
    if "label" in columns:
        label = (row.get("label") or "").strip()
        if label not in ("0", "1"):
            return None
        return {"flagged": label == "1"}
    return None


def text_column(path: Path, fieldnames: Sequence[str] | None) -> str:
    """The first of :data:`TEXT_COLUMNS` among a CSV's ``fieldnames`` (its header).

    Raises:
        UserError: ``path: no text column; expected one of (...), found [...]``.
    """
    column = next((c for c in TEXT_COLUMNS if c in (fieldnames or [])), None)
    if column is None:
        raise UserError(
            f"{path}: no text column; expected one of {TEXT_COLUMNS}, found {fieldnames}"
        )
    return column


def read_texts(path: Path) -> list[tuple[int, str]]:
    """``(row number, text)`` of every non-empty text cell of one CSV (header = row 1).

    Raises:
        UserError: The file cannot be read as UTF-8 CSV or has no known text column.
    """
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            column = text_column(path, reader.fieldnames)
            return [
                (i + 2, row[column].strip())
                for i, row in enumerate(reader)
                if (row.get(column) or "").strip()
            ]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: cannot read as UTF-8 CSV: {exc}") from exc


def sample_requests(
    data_dir: Path, n: int, *, kind: str = "customer_service", seed: int = 0
) -> list[Request]:
    """``n`` requests drawn round-robin from every CSV of ``data_dir/kind``, shuffled per file.

    Each request's metadata records ``source`` (``file.csv:row``).

    Raises:
        UserError: The folder is missing, holds no CSV, or ``n`` is not positive.
    """
    if n < 1:
        raise UserError(f"the number of requests must be at least 1, got {n}")
    folder = Path(data_dir) / kind
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        root = Path(data_dir)
        found = root.iterdir() if root.is_dir() else ()
        kinds = sorted(d.name for d in found if d.is_dir() and any(d.glob("*.csv")))
        if kinds:  # the data folder is right: the kind is not one of it
            raise UserError(
                f"no requests of kind {kind!r} in {root}: the kinds there are "
                f"{', '.join(kinds)}; pass one of them with --kind"
            )
        raise UserError(
            f"no CSV files in {folder}; set ORCH_DATA_DIR (or --data-dir) to the "
            "folder that holds customer_service/, moderation/ and spreadsheets/"
        )
    rng = random.Random(seed)
    pools = []
    for path in files:
        rows = read_texts(path)
        rng.shuffle(rows)
        pools.append((path, rows))
    requests: list[Request] = []
    while len(requests) < n and any(rows for _, rows in pools):
        for path, rows in pools:
            if rows and len(requests) < n:
                row, text = rows.pop()
                requests.append(
                    Request(text=text, channel="dataset", metadata={"source": f"{path.name}:{row}"})
                )
    return requests
