"""Small neural models trained from scratch on the Chinese train part + the COLD pool, for the
DEV part only (issue 47, session 11): does a char-CNN or a tiny transformer read the stance of a
post (anti-bias against offensive) better than the character n-grams?

Two steps, so the training can run on any machine with torch (a GPU makes it seconds):

1. ``export``: the train part (Chinese rows of ``moderation_ablation``'s train) plus the pool of
   :func:`benchmarks.moderation_dev_coldtrain.pool`, and the dev part, as JSON lines of
   normalised text and label (``train.jsonl``, ``dev.jsonl``) in ``DIR``;
2. ``train``: per model and seed (1, 2, 3), a character embedding (characters seen twice in
   train; 160 characters at most) and either a CNN (widths 1-5, 192 filters each, max-pooled,
   dropout 0.5; 8 epochs, AdamW 1e-3) or a 3-layer transformer encoder (width 192, 4 heads,
   mean-pooled; 10 epochs, AdamW 3e-4), batch 64, positives weighted to balance the classes;
   the dev logits after the last epoch go to ``OUT`` (``{"ids": [...], "logits": {model:
   [per seed]}}``), which ``moderation_dev_coldtrain --neural OUT`` calibrates and judges.
   No early stopping on dev: the epochs were fixed before the judged run.

Usage, from the repository root::

    python -m benchmarks.moderation_dev_charnn export PATH_TO_COLDataset_CHECKOUT DIR
    python benchmarks/moderation_dev_charnn.py train DIR OUT.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

LENGTH = 160
SEEDS = (1, 2, 3)
#: model -> (epochs, learning rate)
MODELS = {"char-CNN": (8, 1e-3), "tiny transformer": (10, 3e-4)}


def export(cold_dir: Path, out: Path) -> None:
    """Step 1 of the module docstring."""
    from benchmarks.moderation_ablation import zh_posts
    from benchmarks.moderation_dev_coldtrain import pool
    from workflows.content_moderation.normalize import normalize

    out.mkdir(parents=True, exist_ok=True)
    parts = {"train.jsonl": zh_posts("train") + pool(cold_dir), "dev.jsonl": zh_posts("dev")}
    for name, posts in parts.items():
        with (out / name).open("w", encoding="utf-8") as f:
            for p in posts:
                row = {"id": p.id, "t": normalize(p.text).text, "y": int(p.truth["flagged"])}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _network(kind: str, vocab: int) -> Any:
    import torch
    from torch import nn

    class CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(vocab, 128, padding_idx=0)
            self.convs = nn.ModuleList(nn.Conv1d(128, 192, w, padding=w // 2) for w in range(1, 6))
            self.drop, self.out = nn.Dropout(0.5), nn.Linear(192 * 5, 1)

        def forward(self, x: Any) -> Any:
            mask = (x > 0).unsqueeze(1).float()
            e = self.emb(x).transpose(1, 2)
            hs = [(torch.relu(c(e))[:, :, : x.shape[1]] - (1 - mask) * 1e4).max(2).values
                  for c in self.convs]  # fmt: skip
            return self.out(self.drop(torch.cat(hs, 1))).squeeze(1)

    class Transformer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb, self.pos = nn.Embedding(vocab, 192, padding_idx=0), nn.Embedding(LENGTH, 192)
            layer = nn.TransformerEncoderLayer(192, 4, 768, 0.1, batch_first=True, norm_first=True)
            self.enc = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
            self.out = nn.Linear(192, 1)

        def forward(self, x: Any) -> Any:
            pad = x == 0
            h = self.emb(x) + self.pos(torch.arange(x.shape[1], device=x.device))
            h = self.enc(h, src_key_padding_mask=pad).masked_fill(pad.unsqueeze(2), 0)
            return self.out(h.sum(1) / (~pad).sum(1, keepdim=True).clamp(min=1)).squeeze(1)

    return CNN() if kind == "char-CNN" else Transformer()


def _fit(kind: str, seed: int, data: dict[str, Any], device: str) -> list[float]:
    """Dev logits of one model and seed after its last epoch."""
    import torch
    from torch.nn import functional

    torch.manual_seed(seed)
    epochs, lr = MODELS[kind]
    model = _network(kind, data["vocab"]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    x, y = data["x"], data["y"]
    pos_weight = ((1 - y.mean()) / y.mean()).to(device)
    for _ in range(epochs):
        model.train()
        order = torch.randperm(len(y))
        for i in range(0, len(order), 64):
            b = order[i : i + 64]
            loss = functional.binary_cross_entropy_with_logits(
                model(x[b].to(device)), y[b].to(device), pos_weight=pos_weight
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        dev = data["dev"]
        z = [model(dev[i : i + 512].to(device)) for i in range(0, len(dev), 512)]
    return [float(v) for v in torch.cat(z).cpu()]


def train(folder: Path, out: Path) -> None:
    """Step 2 of the module docstring."""
    import torch

    def load(name: str) -> list[dict[str, Any]]:
        lines = (folder / name).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]

    rows, dev = load("train.jsonl"), load("dev.jsonl")
    counts = Counter(c for r in rows for c in r["t"])
    vocab = {c: i + 2 for i, (c, k) in enumerate(counts.most_common()) if k >= 2}

    def encode(part: list[dict[str, Any]]) -> Any:
        x = torch.zeros((len(part), LENGTH), dtype=torch.long)
        for i, r in enumerate(part):
            ids = [vocab.get(c, 1) for c in r["t"][:LENGTH]]
            x[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        return x

    data = {"x": encode(rows), "dev": encode(dev), "vocab": len(vocab) + 2,
            "y": torch.tensor([r["y"] for r in rows], dtype=torch.float32)}  # fmt: skip
    device = "cuda" if torch.cuda.is_available() else "cpu"
    logits = {kind: [_fit(kind, s, data, device) for s in SEEDS] for kind in MODELS}
    out.write_text(json.dumps({"ids": [r["id"] for r in dev], "logits": logits}), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[0] == "export":
        export(Path(args[1]), Path(args[2]))
    elif len(args) == 3 and args[0] == "train":
        train(Path(args[1]), Path(args[2]))
    else:
        print(__doc__.split("Usage")[1].strip() if __doc__ else "see the module docstring")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
