"""Out-of-fold logits of the packaged learned tier on its own tune rows (:data:`FILE`).

``fit --examples`` adds a column per new route to the packaged model and lifts its bias as far
as a budget of the built-in rows' decisions allows (:func:`~.fit_routes._lift`). Checked
against the packaged model's logits on the very rows it was fitted on, that budget held while
the built-in test split moved over it: the model is sure of its own training rows (tune
accuracy 0.994 against 0.945 on test), so a new column could not tip them, where on unseen
requests it did (accessibility_support: 8 tune rows moved, 43 test rows;
benchmarks/results/classifier_fit_examples_2026-12-06c.md). The budget is checked against
these out-of-fold logits instead: each row scored by the model of the cross-fitting folds
that did not see it, as :func:`~.fitting.fit_all` computes them for the thresholds.
``orchestrator classifier fit`` writes the file beside the model it fits (minutes, once);
``fit --examples`` only reads it.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.exceptions import UserError
from orchestrator.routes import Route

#: The file beside ``learned.v2.npz``.
FILE = "learned.oof.npz"
#: Least probability kept before the log (a zero would be an infinite logit).
_FLOOR = 1e-9


def row_key(row: LabelledRequest) -> str:
    """16 hex digits naming a row by its id and text (a row edited since the fit is unknown)."""
    return hashlib.sha256(f"{row.id}|{row.text}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class OutOfFold:
    """Out-of-fold log-probabilities of a model's classes (its logits up to a constant per
    row), combined and text-only, ``(rows, classes)`` float32, by :func:`row_key`."""

    classes: tuple[Route, ...]
    keys: dict[str, int]
    combined: np.ndarray
    text: np.ndarray

    @classmethod
    def of(
        cls,
        rows: Sequence[LabelledRequest],
        probs: np.ndarray,
        fast: np.ndarray,
        classes: Sequence[Route],
    ) -> OutOfFold:
        """From :func:`~.fitting.cross_fit`'s probabilities of ``rows``."""

        def log(p: np.ndarray) -> np.ndarray:
            return np.log(np.maximum(np.asarray(p, dtype=np.float64), _FLOOR)).astype(np.float32)

        keys = {row_key(r): i for i, r in enumerate(rows)}
        return cls(tuple(classes), keys, log(probs), log(fast))

    def save(self, path: Path) -> None:
        """Write it to ``path`` (an ``.npz``; replaced whole)."""
        tmp = path.with_name(path.name + ".tmp.npz")
        with tmp.open("wb") as handle:
            np.savez_compressed(
                handle,
                classes=np.array(self.classes, dtype=np.str_),
                keys=np.array(sorted(self.keys, key=self.keys.__getitem__), dtype=np.str_),
                combined=self.combined,
                text=self.text,
            )
        tmp.replace(path)

    def lookup(
        self, rows: Sequence[LabelledRequest], classes: Sequence[Route]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(found, combined, text)``: which of ``rows`` it has (bool ``(rows,)``) and their
        logits ``(rows, classes)`` (zeros where not found).

        Raises:
            UserError: Its classes are not ``classes`` (it belongs to another model).
        """
        if tuple(classes) != self.classes:
            raise UserError(
                f"{FILE} is of the classes {', '.join(self.classes)}, the model's are "
                f"{', '.join(classes)}; refit with orchestrator classifier fit"
            )
        at = np.array([self.keys.get(row_key(r), -1) for r in rows], dtype=np.int64)
        found = at >= 0
        shape = (len(rows), len(self.classes))
        zc, zt = np.zeros(shape), np.zeros(shape)
        zc[found], zt[found] = self.combined[at[found]], self.text[at[found]]
        return found, zc, zt


def load_oof(path: Path) -> OutOfFold | None:
    """The file at ``path``, or None when there is none.

    Raises:
        UserError: It cannot be read as such a file.
    """
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            keys = {str(k): i for i, k in enumerate(z["keys"].tolist())}
            classes = tuple(Route(str(c)) for c in z["classes"].tolist())
            combined, text = np.asarray(z["combined"]), np.asarray(z["text"])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise UserError(f"{path}: not a file of out-of-fold logits ({exc}); refit") from None
    if combined.shape != (len(keys), len(classes)) or text.shape != combined.shape:
        raise UserError(f"{path}: its arrays do not match its rows and classes; refit")
    return OutOfFold(classes, keys, combined, text)
