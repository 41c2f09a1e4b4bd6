"""Engine capture vs transformers replay: agreement of routed expert ids, and gate margins.

Pure numpy comparison (:func:`compare`) plus a replay helper (:class:`GPUReplayer`) that runs a
checkpoint in transformers on any torch device and dtype (the project's
:class:`serving.replay.ExpertRoutingReplayer` loads float32 on the CPU, which the 21B shape does not
fit). The helper applies the same ERNIE rule as ``ExpertRoutingReplayer``::

    p = softmax(gate(h))             # float32
    s = p + e_score_correction_bias  # selection score
    chosen = topk(s, k)              # sorted, highest first

and also returns the **gate margin** of every (token, layer): ``s[k-1] - s[k]`` (6th minus 7th
score for top-6), and the replay rank of every expert, so that disagreements can be checked
against near-ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import median, percentile
from serving import MoEArchitecture
from serving.checkpoint import correction_bias


@dataclass
class ReplayResult:
    """Replay of one call.

    Attributes:
        ids: ``(tokens, moe layers, k)`` int16, top-k by selection score, highest first.
        margin: ``(tokens, moe layers)`` float32, k-th minus (k+1)-th selection score.
        ranks: ``(tokens, moe layers, experts)`` int16, 0 = highest selection score.
    """

    ids: np.ndarray
    margin: np.ndarray
    ranks: np.ndarray


class GPUReplayer:
    """Replays token ids through a checkpoint in transformers on ``device`` in ``dtype``.

    Args:
        checkpoint_dir: The folder the server served.
        device: torch device, ``"cuda"`` on the GPU machine.
        dtype: ``"bfloat16"`` (what vLLM serves) or ``"float32"``. The gate weight and the
            correction bias stay float32 either way (transformers keeps them so).
    """

    def __init__(
        self, checkpoint_dir: Path | str, *, device: str = "cuda", dtype: str = "bfloat16"
    ) -> None:
        import torch  # heavy: only the GPU replay needs it
        from transformers import AutoModelForCausalLM

        self.torch = torch
        self.device = device
        self.arch = MoEArchitecture.from_checkpoint(checkpoint_dir)
        model = AutoModelForCausalLM.from_pretrained(
            checkpoint_dir, dtype=getattr(torch, dtype), device_map=device
        )
        self.model = model.train(False)  # inference mode (torch Module.eval)
        self.bias = torch.stack(
            [
                correction_bias(self.model.model.layers[i].mlp).detach().float().reshape(-1)
                for i in self.arch.moe_layers
            ]
        ).to(device)  # (moe layers, experts)
        self.gate_dtype = str(
            self.model.model.layers[self.arch.moe_layers[0]].mlp.gate.weight.dtype
        )

    def replay(self, tokens: Sequence[int]) -> ReplayResult:
        """Routing of ``tokens`` (prompt, then completion without its last token)."""
        torch = self.torch
        k = self.arch.top_k
        with torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([list(tokens)], dtype=torch.long, device=self.device),
                output_router_logits=True,
                use_cache=False,
            )
            logits = torch.stack(
                [layer.float().reshape(len(tokens), -1) for layer in out.router_logits]
            )  # (layers, tokens, experts)
            scores = torch.softmax(logits, dim=-1) + self.bias[:, None, :]
            order = torch.argsort(scores, dim=-1, descending=True)
            sorted_scores = torch.gather(scores, -1, order)
            ranks = torch.empty_like(order)
            ranks.scatter_(
                -1, order, torch.arange(order.shape[-1], device=order.device).expand_as(order)
            )
            ids = order[..., :k]
            margin = sorted_scores[..., k - 1] - sorted_scores[..., k]
        return ReplayResult(
            ids=ids.permute(1, 0, 2).cpu().numpy().astype(np.int16),
            margin=margin.transpose(0, 1).cpu().numpy().astype(np.float32),
            ranks=ranks.permute(1, 0, 2).cpu().numpy().astype(np.int16),
        )


def _auc_lower(disagree: np.ndarray, agree: np.ndarray) -> float | None:
    """P(margin of a disagreeing pair < margin of an agreeing pair), ties counted half."""
    if not disagree.size or not agree.size:
        return None
    both = np.concatenate([disagree, agree])
    order = np.argsort(both, kind="mergesort")
    ranks = np.empty(both.size, dtype=np.float64)
    ranks[order] = np.arange(1, both.size + 1)
    # average ranks for ties
    _, inverse, counts = np.unique(both, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    ranks = (sums / counts)[inverse]
    r_dis = ranks[: disagree.size].sum()
    u = r_dis - disagree.size * (disagree.size + 1) / 2  # pairs where disagree > agree
    return float(1.0 - u / (disagree.size * agree.size))


def _layer_counts(ids: np.ndarray, experts: int) -> np.ndarray:
    """``(layers, experts)`` activation counts of ``(tokens, layers, k)`` expert ids."""
    return np.stack(
        [np.bincount(ids[:, li].ravel(), minlength=experts) for li in range(ids.shape[1])]
    )


def _load_share_tvd(
    engine: np.ndarray, replay: np.ndarray, call_tokens: Sequence[int], experts: int
) -> np.ndarray:
    """Per call (``call_tokens`` rows each, in order), the total variation distance between
    the engine's and the replay's load shares over all layers."""
    tvd = []
    offset = 0
    for n in call_tokens:
        ce = _layer_counts(engine[offset : offset + n], experts)
        cr = _layer_counts(replay[offset : offset + n], experts)
        se, sr = ce / max(ce.sum(), 1), cr / max(cr.sum(), 1)
        tvd.append(0.5 * float(np.abs(se - sr).sum()))
        offset += n
    return np.asarray(tvd)


def _margin_summary(margin: np.ndarray, set_equal: np.ndarray, k: int) -> dict[str, Any]:
    """The gate margins of the (token, layer) pairs whose top-k sets disagree, against those
    that agree: medians, how low the disagreeing ones lie, the disagreement rate by decile."""
    dis, agr = margin[~set_equal], margin[set_equal]
    q10 = percentile(margin.ravel(), 10, method="lower") or 0.0
    q01 = percentile(margin.ravel(), 1, method="lower") or 0.0
    return {
        "definition": f"replay selection score of rank {k} minus rank {k + 1} "
        "(softmax(gate) + e_score_correction_bias)",
        "median_disagreeing": median(dis),
        "median_agreeing": median(agr),
        "p90_disagreeing": percentile(dis, 90),
        "auc_disagreeing_lower": _auc_lower(dis, agr),
        "share_of_disagreements_in_lowest_10pct_margins": float((dis <= q10).mean())
        if dis.size
        else None,
        "share_of_disagreements_in_lowest_1pct_margins": float((dis <= q01).mean())
        if dis.size
        else None,
        "disagreement_rate_by_margin_decile": [
            float((~set_equal.ravel())[(margin.ravel() >= lo) & (margin.ravel() <= hi)].mean())
            for lo, hi in zip(
                np.quantile(margin, np.linspace(0, 0.9, 10)),
                np.quantile(margin, np.linspace(0.1, 1.0, 10)),
                strict=True,
            )
        ],
    }


def compare(
    engine: Sequence[np.ndarray],
    replay: Sequence[ReplayResult],
    prompt_lengths: Sequence[int],
    moe_layers: Sequence[int],
) -> dict:
    """Agreement of engine and replay expert ids over many calls.

    Args:
        engine: Per call, the engine's ``(tokens, moe layers, k)`` ids (dense layers dropped).
        replay: Per call, the replay of the same tokens.
        prompt_lengths: Per call, prompt tokens (to split prompt rows from completion rows).
        moe_layers: Model-layer index of each entry of the layer axis.

    Returns:
        A JSON-ready dict: slot agreement (ordered and order-free), top-k set agreement, both
        per layer, prompt vs completion rows, the gate-margin comparison of agreeing and
        disagreeing (token, layer) pairs, the replay ranks of the engine's experts that the
        replay did not choose, and per-call load-share total variation distances.
    """
    e = np.concatenate([np.asarray(x, dtype=np.int64) for x in engine])
    r = np.concatenate([x.ids.astype(np.int64) for x in replay])
    margin = np.concatenate([x.margin for x in replay]).astype(np.float64)
    ranks = np.concatenate([x.ranks for x in replay])
    is_prompt = np.concatenate(
        [np.arange(x.shape[0]) < p for x, p in zip(engine, prompt_lengths, strict=True)]
    )
    tokens, layers, k = e.shape
    experts = ranks.shape[-1]
    slot_ordered = e == r  # (T, L, K)
    # order-free: is the engine's expert in the replay's top-k set
    member = (e[..., :, None] == r[..., None, :]).any(-1)  # (T, L, K)
    set_equal = member.all(-1)  # (T, L)
    engine_rank = np.take_along_axis(ranks.astype(np.int64), e, axis=-1)  # (T, L, K)
    missed_rank = engine_rank[~member]  # replay rank of engine experts the replay did not pick
    rank_hist = {
        str(rk + 1): int((missed_rank == rk).sum()) for rk in range(k, min(k + 4, experts))
    }
    rank_hist[f">{min(k + 4, experts)}"] = int((missed_rank >= k + 4).sum())

    tvd_arr = _load_share_tvd(e, r, [x.shape[0] for x in engine], experts)

    return {
        "calls": len(engine),
        "token_layer_pairs": int(tokens * layers),
        "slots": int(tokens * layers * k),
        "slot_agreement_ordered": float(slot_ordered.mean()),
        "slot_agreement_order_free": float(member.mean()),
        "topk_set_agreement": float(set_equal.mean()),
        "topk_set_agreement_prompt_rows": float(set_equal[is_prompt].mean())
        if is_prompt.any()
        else None,
        "topk_set_agreement_completion_rows": float(set_equal[~is_prompt].mean())
        if (~is_prompt).any()
        else None,
        "per_layer": [
            {
                "layer": int(moe_layers[li]),
                "topk_set_agreement": float(set_equal[:, li].mean()),
                "slot_agreement_order_free": float(member[:, li].mean()),
                "slot_agreement_ordered": float(slot_ordered[:, li].mean()),
            }
            for li in range(layers)
        ],
        "experts_differing_per_disagreeing_pair": {
            str(n): int(((k - member.sum(-1))[~set_equal] == n).sum()) for n in range(1, k + 1)
        },
        "margin": _margin_summary(margin, set_equal, k),
        "replay_rank_of_engine_experts_not_chosen_by_replay": rank_hist,
        "load_share_tvd_per_call": {
            "median": median(tvd_arr),
            "max": float(tvd_arr.max()) if tvd_arr.size else None,
        },
    }
