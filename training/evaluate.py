"""Evaluation of a trained checkpoint on the held-out (``test``) split, and its specialisation.

* :func:`score_outputs`: given the model's answers to the held-out prompts
  (:func:`~training.data.held_out_examples`; greedy, **no grammar**;
  :mod:`serving.training.generate` writes them), the triage
  issue-type accuracy, the share of valid JSON per JSON task, the model-alone moderation F1 per
  language next to the lexicon's F1 on the same posts, and the share of replies whose facts equal
  the tool results (every placeholder known and filled, no figure written by the model).
* :func:`expert_fingerprints`: replay prompts through a checkpoint in transformers
  (``output_router_logits``; ERNIE's choice: top-k of ``softmax + e_score_correction_bias``),
  count each MoE layer's expert activations per call, and give the Jensen-Shannon divergence
  (bits, :func:`orchestrator.analysis.skew.fingerprint.jsd`, mean over MoE layers) of each
  workflow's and each language's load shares against all calls', plus the mean pairwise JSD
  between workflows.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from orchestrator.analysis.skew.fingerprint import jsd
from skills.assess_risk import parse_risk
from skills.interpret_data import parse_interpretation
from skills.reply import PLACEHOLDER, FactGuard
from skills.triage import parse_triage
from skills.write_report import parse_report
from training.data import WORKFLOW_OF, Example
from workflows.content_moderation.dataset import load_moderation_set, predicted
from workflows.content_moderation.judgement import MODEL_CATEGORIES


def _f1(pairs: Sequence[tuple[bool, bool]]) -> dict[str, float | int]:
    """Precision, recall and F1 of ``(truth, predicted)`` pairs."""
    tp = sum(t and p for t, p in pairs)
    fp = sum(p and not t for t, p in pairs)
    fn = sum(t and not p for t, p in pairs)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"n": len(pairs), "precision": round(precision, 3), "recall": round(recall, 3),
            "f1": round(f1, 3)}  # fmt: skip


def reply_facts_ok(text: str, facts: Mapping[str, str]) -> bool:
    """True when the reply names at least one fact, every placeholder it writes is a known fact,
    and it writes no figure itself (:class:`skills.reply.FactGuard` drops nothing).

    Example:
        >>> reply_facts_ok("Order {order_id} is on its way.", {"order_id": "ORD-1"})
        True
        >>> reply_facts_ok("Order ORD-9 ships on 12 May.", {"order_id": "ORD-1"})
        False
    """
    guard = FactGuard(facts)
    guard.feed(text)
    guard.flush()
    named = {m.group(1) for m in PLACEHOLDER.finditer(text)}
    return bool(named) and not guard.dropped


def plain_reply_ok(text: str) -> bool:
    """True when a reply offered no placeholder (``none``) is non-empty, writes no
    placeholder and no figure (the fact guard drops nothing) — the main job's replies.

    Example:
        >>> plain_reply_ok("A colleague will look into it."), plain_reply_ok("Ticket {ticket_id}.")
        (True, False)
    """
    guard = FactGuard({})
    guard.feed(text)
    guard.flush()
    return bool(text.strip()) and not PLACEHOLDER.search(text) and not guard.dropped


def _json_object(text: str) -> dict[str, str] | None:
    """``text`` as a JSON object of strings, or None."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


_FIGURE_LINE = re.compile(r"^(F\d+) ", re.M)


def _figure_ids(example: Example) -> list[str]:
    """The figure ids in an interpret prompt's encoding."""
    return _FIGURE_LINE.findall(example.messages[-1]["content"])


def score_outputs(
    examples: Mapping[str, Example], outputs: Mapping[str, str], data_dir: Path
) -> dict[str, object]:
    """Scores of the answers ``outputs`` (id → text) to the test examples (id → example).

    Args:
        examples: ``task:i`` → held-out example (``split == "test"``).
        outputs: ``task:i`` → the model's answer (ids without an answer are skipped).
        data_dir: The data folder (the lexicon is scored on the same moderation posts).

    Raises:
        ValueError: An example is not from the test split.
    """
    if any(e.split != "test" for e in examples.values()):
        raise ValueError("score_outputs takes test-split examples only")
    by_task: dict[str, list[tuple[Example, str]]] = defaultdict(list)
    for key, example in examples.items():
        if key in outputs:
            by_task[example.task].append((example, outputs[key]))
    result: dict[str, object] = {}
    triage = by_task.get("triage", [])
    parsed = [(e, parse_triage(o)) for e, o in triage]
    result["triage"] = {
        "n": len(parsed),
        "valid_json": _share(t.parsed for _, t in parsed),
        "issue_type_accuracy": _share(t.issue_type == e.label for e, t in parsed),
        "issue_type_accuracy_by_lang": {
            lang: _share(t.issue_type == e.label for e, t in parsed if e.lang == lang)
            for lang in ("en", "zh")
        },
    }
    risk = [(e, parse_risk(o, MODEL_CATEGORIES)) for e, o in by_task.get("risk", [])]
    posts = {p.id: p for p in load_moderation_set(data_dir, "test")}
    moderation: dict[str, object] = {
        "n": len(risk),
        "valid_json": _share(a.status == "ok" for _, a in risk),
    }
    from workflows.content_moderation.service import (
        ContentModerationWorkflow,
        moderate_lexicon_only,
    )

    workflow = ContentModerationWorkflow()
    for lang in ("en", "zh"):
        rows = [(e, a) for e, a in risk if e.lang == lang and e.source in posts]
        model_pairs = [
            (bool(posts[e.source].truth["flagged"]), a.decision in ("review", "block"))
            for e, a in rows
        ]
        lexicon_pairs = [
            (
                bool(posts[e.source].truth["flagged"]),
                predicted(moderate_lexicon_only(posts[e.source].text, workflow, scorer=False))[
                    "flagged"
                ],
            )
            for e, _ in rows
        ]
        moderation[lang] = {"model_alone": _f1(model_pairs), "lexicon": _f1(lexicon_pairs)}
    result["moderation"] = moderation
    replies = by_task.get("reply", [])
    result["reply"] = {
        "n": len(replies),
        "facts_equal_tool_results": _share(reply_facts_ok(o, e.facts) for e, o in replies),
    }
    plain = by_task.get("reply_plain", [])
    result["reply_plain"] = {
        "n": len(plain),
        "no_placeholder_no_figure": _share(plain_reply_ok(o) for _, o in plain),
    }
    tools = [(e, _json_object(o)) for e, o in by_task.get("tool", [])]
    result["tool"] = {
        "n": len(tools),
        "valid_json": _share(a is not None for _, a in tools),
        "arguments_equal": _share(a == e.facts for e, a in tools),
    }
    interpreted = [
        (e, parse_interpretation(o, _figure_ids(e))) for e, o in by_task.get("interpret", [])
    ]
    result["interpret"] = {
        "n": len(interpreted),
        "valid_json": _share(i.parsed for _, i in interpreted),
        "findings_kept": _share(bool(i.findings) and not i.dropped for _, i in interpreted),
    }
    reports = [(e, parse_report(o)) for e, o in by_task.get("report", [])]
    result["report"] = {"n": len(reports), "valid_json": _share(r.parsed for _, r in reports)}
    json_rows = [t.parsed for _, t in parsed] + [a.status == "ok" for _, a in risk]
    json_rows += [r.parsed for _, r in reports] + [i.parsed for _, i in interpreted]
    json_rows += [a is not None for _, a in tools]
    result["valid_json_without_grammar"] = _share(json_rows)
    return result


def _share(values) -> float | None:  # values: Iterable[bool]
    values = list(values)
    return round(sum(values) / len(values), 3) if values else None


def expert_counts(checkpoint: Path, prompts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
    """``(calls, L, E)`` expert activation counts of each prompt's tokens (transformers replay
    on the CPU, float32), and the MoE layers' model-layer indices."""
    import torch
    from transformers import AutoTokenizer, Ernie4_5_MoeForCausalLM

    from serving.checkpoint import correction_bias

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = Ernie4_5_MoeForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    moe = [i for i, layer in enumerate(model.model.layers) if hasattr(layer.mlp, "gate")]
    biases = [correction_bias(model.model.layers[i].mlp).detach().reshape(-1) for i in moe]
    k = model.config.moe_k
    experts = model.config.moe_num_experts
    out = np.zeros((len(prompts), len(moe), experts), dtype=np.int64)
    with torch.inference_mode():
        for n, prompt in enumerate(prompts):
            ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"]
            result = model(input_ids=ids[:, :1024], output_router_logits=True, use_cache=False)
            for j, (logits, bias) in enumerate(zip(result.router_logits, biases, strict=True)):
                probs = torch.softmax(logits.float(), dim=-1)
                chosen = torch.topk(probs + bias, k, dim=-1).indices.reshape(-1)
                out[n, j] = np.bincount(chosen.numpy(), minlength=experts)
    return out, moe


def specialisation(counts: np.ndarray, examples: Sequence[Example]) -> dict[str, object]:
    """JSD (bits, mean over MoE layers) of each workflow's and language's expert load against
    all calls', and the mean and minimum pairwise JSD between workflows.

    Args:
        counts: ``(calls, L, E)`` from :func:`expert_counts`.
        examples: The calls' examples, in the same order.
    """
    total = counts.sum(axis=0)
    groups: dict[str, dict[str, np.ndarray]] = {"workflow": {}, "language": {}}
    for key, pick in (("workflow", lambda e: WORKFLOW_OF[e.task]), ("language", lambda e: e.lang)):
        names = sorted({pick(e) for e in examples})
        for name in names:
            idx = [i for i, e in enumerate(examples) if pick(e) == name]
            groups[key][name] = counts[idx].sum(axis=0)
    vs_all = {
        key: {name: round(float(jsd(c, total).mean()), 4) for name, c in part.items()}
        for key, part in groups.items()
    }
    pairs = {
        f"{a}|{b}": round(float(jsd(groups["workflow"][a], groups["workflow"][b]).mean()), 4)
        for a, b in itertools.combinations(sorted(groups["workflow"]), 2)
    }
    return {
        "vs_all": vs_all,
        "workflow_pairs": pairs,
        "min_workflow_pair_jsd": min(pairs.values()) if pairs else None,
        "mean_workflow_pair_jsd": round(float(np.mean(list(pairs.values()))), 4) if pairs else None,
    }
