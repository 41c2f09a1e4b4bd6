"""The auxiliary-loss-free balancing rule (Wang et al. 2024, arXiv:2408.15664, Algorithm 1),
shared by ERNIE's correction bias (:mod:`serving.checkpoint`) and the other families' balancing
(:mod:`serving.families.planting`)."""

from __future__ import annotations

import numpy as np


def balanced_bias(
    probs: np.ndarray,
    bias: np.ndarray,
    free: np.ndarray,
    k: int,
    rounds: int = 400,
    step: float | None = None,
) -> np.ndarray:
    """400 rounds of ``b_e += u * sign(target - load_e)`` on the free experts.

    Args:
        probs: ``(tokens, E)`` float32 gate probabilities.
        bias: ``(E,)`` the layer's current correction bias (planted values included).
        free: ``(E,)`` bool, the experts whose bias may move (not planted).
        k: Experts per token (top-k).
        step: The first round's step ``u`` (it shrinks by 1.5% a round); ``0.5 / E`` when
            None, the scale of ERNIE's probabilities.

    Returns:
        ``(E,)`` float32 bias. An expert's load is the number of tokens whose top-k it is in:
        the scores at or above the row's k-th largest (``np.partition``, several times faster
        than a sorted top-k on 2 cores, and the same set barring exact ties of floats).
    """
    experts = probs.shape[1]
    b = bias.astype(np.float32, copy=True)
    capacity = probs.shape[0] * k
    step_ = np.float32(0.5 / experts if step is None else step)
    for _ in range(rounds):
        scores = probs + b
        kth = np.partition(scores, experts - k, axis=-1)[:, experts - k, None]
        load = (scores >= kth).sum(axis=0, dtype=np.int64).astype(np.float32)
        target = (capacity - load[~free].sum()) / free.sum()
        b[free] += step_ * np.sign(target - load[free])
        step_ *= np.float32(0.985)
    return b
