"""Write the folder the training script reads: a tokenizer trained on the training texts,
``train.jsonl`` (chat-rendered prompt + target per example), ``test.jsonl`` (held-out prompts for
evaluation, never trained on) and ``data.json`` (spec, counts, hashes)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from serving.checkpoint import _BUILTIN_CORPUS, _train_tokenizer
from training.data import (
    DataSpec,
    Example,
    build_examples,
    data_hashes,
    held_out_examples,
)

#: Tokenizer vocabulary of the trained checkpoint.
VOCAB_SIZE = 6144


def render(tokenizer, example: Example) -> str:  # tokenizer: PreTrainedTokenizerFast
    """The prompt text the server builds for ``example``'s chat turns (ERNIE's template)."""
    return str(
        tokenizer.apply_chat_template(
            list(example.messages), tokenize=False, add_generation_prompt=True
        )
    )


def prepare(data_dir: Path, out: Path, spec: DataSpec | None = None, per_task: int = 200) -> dict:
    """Build the examples and write ``out`` (see module docstring); returns ``data.json``'s
    content.

    Raises:
        UserError: From :func:`build_examples` (missing data folders).
    """
    spec = spec or DataSpec()
    examples = build_examples(data_dir, spec)
    corpus = list(_BUILTIN_CORPUS)
    for e in examples:
        corpus.extend(m["content"] for m in e.messages)
        corpus.append(e.target)
    tokenizer = _train_tokenizer(corpus, VOCAB_SIZE)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out / "tokenizer")
    with (out / "train.jsonl").open("w", encoding="utf-8") as handle:
        row: dict[str, object]  # the test rows below hold an example too
        for e in examples:
            row = {"task": e.task, "prompt": render(tokenizer, e), "target": e.target}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    tests = held_out_examples(data_dir, per_task=per_task, seed=spec.seed)
    with (out / "test.jsonl").open("w", encoding="utf-8") as handle:
        for task, rows in tests.items():
            for i, e in enumerate(rows):
                row = {"id": f"{task}:{i}", "task": task, "prompt": render(tokenizer, e),
                       "example": e.model_dump(mode="json")}  # fmt: skip
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    info = {
        "spec": spec.model_dump(),
        "counts": dict(Counter(f"{e.task}/{e.lang}" for e in examples)),
        "test_counts": {task: len(rows) for task, rows in tests.items()},
        "hashes": data_hashes(data_dir, examples),
        "vocab_size": len(tokenizer),
    }
    (out / "data.json").write_text(json.dumps(info, indent=2))
    return info
