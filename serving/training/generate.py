"""Greedy answers of a checkpoint to prepared test prompts (torch + transformers only).

``python serving/training/generate.py CHECKPOINT TEST_JSONL OUT_JSONL``: for each row
``{"id", "prompt", ...}`` writes ``{"id", "output", "finish"}`` (``stop`` at
``<|end_of_sentence|>``, else ``length``). No grammar: this measures how often the model alone
writes valid JSON. Prompts run in length-sorted batches, left-padded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MAX_NEW = {"triage": 48, "risk": 160, "reply": 96, "reply_plain": 96, "draft": 96, "tool": 64,
           "interpret": 256, "report": 256}  # fmt: skip


def main(checkpoint: str, test_jsonl: str, out_jsonl: str, batch: int = 64) -> None:
    import torch
    from transformers import AutoTokenizer, Ernie4_5_MoeForCausalLM

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok = AutoTokenizer.from_pretrained(checkpoint)
    tok.padding_side = "left"
    model = Ernie4_5_MoeForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).to(device)  # type: ignore[arg-type]  # transformers wraps .to with functools.wraps: mypy loses self
    model.eval()
    eos = tok.convert_tokens_to_ids("<|end_of_sentence|>")
    raw = Path(test_jsonl).read_bytes()
    if test_jsonl.endswith(".gz"):
        import gzip

        raw = gzip.decompress(raw)
    rows = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
    rows.sort(key=lambda r: (MAX_NEW[r["task"]], r["task"], len(r["prompt"])))  # short first
    with Path(out_jsonl).open("w", encoding="utf-8") as handle:
        for i in range(0, len(rows), batch):
            part = rows[i : i + batch]
            enc = tok([r["prompt"] for r in part], return_tensors="pt", padding=True,
                      add_special_tokens=False).to(device)  # fmt: skip
            with torch.no_grad():
                new = max(MAX_NEW[r["task"]] for r in part)
                gen = model.generate(
                    **enc, max_new_tokens=new, do_sample=False, eos_token_id=eos,
                    pad_token_id=tok.pad_token_id,
                )  # fmt: skip
            for r, seq in zip(part, gen[:, enc["input_ids"].shape[1] :].tolist(), strict=True):
                limit = MAX_NEW[r["task"]]
                seq = seq[:limit]
                finish = "stop" if eos in seq else "length"
                seq = seq[: seq.index(eos)] if eos in seq else seq
                text = tok.decode(seq, skip_special_tokens=True)
                handle.write(json.dumps({"id": r["id"], "output": text, "finish": finish},
                                        ensure_ascii=False) + "\n")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
