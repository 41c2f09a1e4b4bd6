"""Build the fresh COLD split of issue 47 (the ``fresh`` and ``fresh-heldout-topic`` parts).

The team's ``test`` part was looked at four times and is burnt for tuning. This draws posts that
nobody on the team has seen, by a rule fixed and committed before the file was built or read:

1. Pool: every row of COLD's ``train.csv`` and ``dev.csv`` (``thu-coai/COLDataset@a0c55a9``,
   32,157 rows, Apache-2.0), read from a local copy of that repository.
2. Anonymise the text as ``../shared/data/SOURCES.md`` says for the shared sample: e-mails
   ``<EMAIL>``, URLs ``<URL>``, @handles ``@USER``, Chinese mobile numbers ``<PHONE>``.
3. Drop a row whose text (raw or anonymised) is in the shared sample
   (``moderation/cold_zh_offensive_sample.csv``) or in COLD's fine-labelled ``test.csv``
   (:data:`~workflows.content_moderation.dataset.FINE_FILE`), and repeated texts.
4. Keep a row when the first 8 bytes of ``SHA-256("issue47-fresh-2026-12-05|" + text)``, read
   as a big-endian integer, are 0 modulo 12 (about 2,500 rows).

Rows of the held-out topic (gender) form ``fresh-heldout-topic``; the others ``fresh``. Nothing
is fitted or tuned on either: ``orchestrator moderation eval --split fresh`` is looked at once,
at the end, and the look is logged. These rows have no fine labels (COLD has them only in
``test.csv``), so the anti-bias rate cannot be measured on them.

Caveat: the project lead keeps a held-back sample of the same pool. Some of its rows may be
in this file. They are only evaluated on here, never fitted on.

Run: ``python -m benchmarks.moderation_fresh_split PATH_TO_COLDataset_CHECKOUT``.
"""

from __future__ import annotations

import csv
import hashlib
import re
import sys
from pathlib import Path

from workflows.content_moderation.dataset import FINE_FILE

SALT = "issue47-fresh-2026-12-05"
MODULUS = 12
OUT = FINE_FILE.parent / "cold_fresh_2026-12-05.csv"
SHARED_SAMPLE = "moderation/cold_zh_offensive_sample.csv"
_ANON = (
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z0-9.]+"), "<EMAIL>"),
    (re.compile(r"https?://\S+|www\.\S+"), "<URL>"),
    (re.compile(r"@[\w\u4e00-\u9fff-]+"), "@USER"),
    (re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)"), "<PHONE>"),
)


def anonymise(text: str) -> str:
    """``text`` with e-mails, URLs, @handles and Chinese mobile numbers replaced."""
    for pattern, token in _ANON:
        text = pattern.sub(token, text)
    return text


def keep(text: str) -> bool:
    """The fixed selection rule (step 4 of the module docstring)."""
    digest = hashlib.sha256(f"{SALT}|{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % MODULUS == 0


def _texts(path: Path) -> set[str]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return {(row.get("TEXT") or "").strip() for row in csv.DictReader(handle)}


def build(cold_repo: Path, shared_data: Path) -> list[dict[str, str]]:
    """The rows of the fresh split (see the module docstring), in pool order."""
    seen = _texts(shared_data / SHARED_SAMPLE) | _texts(FINE_FILE)
    rows = []
    for name in ("train.csv", "dev.csv"):
        with (cold_repo / "COLDataset" / name).open(encoding="utf-8-sig", newline="") as handle:
            for row in csv.DictReader(handle):
                raw = (row.get("TEXT") or "").strip()
                text = anonymise(raw)
                if not text or raw in seen or text in seen or not keep(text):
                    continue
                seen.add(text)
                rows.append(
                    {"id": row.get("", ""), "split": row["split"], "topic": row["topic"],
                     "label": row["label"], "TEXT": text}
                )  # fmt: skip
    return rows


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python -m benchmarks.moderation_fresh_split COLD_REPO [SHARED_DATA]")
        return 2
    beside = Path(__file__).resolve().parents[2] / "shared" / "data"
    shared = Path(argv[1]) if len(argv) == 2 else beside
    rows = build(Path(argv[0]), shared)
    with OUT.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "split", "topic", "label", "TEXT"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} rows written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
