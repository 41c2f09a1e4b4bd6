"""Training data, training loop, model card and the committed trained checkpoint (issue 20)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from case_tables import cases

from orchestrator.config import Settings
from serving.training import LIMITATIONS, is_trained, write_card
from skills.assess_risk import parse_risk
from skills.interpret_data import parse_interpretation
from skills.reply import PLACEHOLDER
from skills.triage import parse_triage
from skills.write_report import parse_report
from training.data import (
    TASKS,
    DataSpec,
    _counter,
    build_examples,
    customer_service_rows,
    data_hashes,
    held_out_examples,
    issue_type_of,
    urgency_of,
)
from training.evaluate import plain_reply_ok, reply_facts_ok, specialisation
from workflows.content_moderation.dataset import load_moderation_set
from workflows.content_moderation.judgement import MODEL_CATEGORIES

SMALL = DataSpec(
    seed=3, triage=120, risk=60, reply=40, reply_plain=30, draft=10, tool=20, workbooks=6
)
#: Tasks whose inputs are generated (workbooks of faker values), not dataset rows.
GENERATED = ("interpret", "report")


@pytest.fixture(scope="module")
def small(data_dir: Path):
    return build_examples(data_dir, SMALL)


def _user_text(example) -> str:
    body = example.messages[-1]["content"]
    return body.split("\n", 1)[1].rsplit("\n", 1)[0]


def test_training_examples_come_from_the_tune_split_only(data_dir: Path, small) -> None:
    held_out = {r.text for r in customer_service_rows(data_dir) if r.split == "test"}
    held_out |= {p.text for p in load_moderation_set(data_dir, "test")}
    assert {e.split for e in small} == {"tune"}
    leaked = [e.source for e in small if e.task not in GENERATED and _user_text(e) in held_out]
    # a tune row may repeat a test row's exact text (duplicates across the hash split are
    # possible); the source rows themselves must all be tune rows
    tune_sources = {r.source for r in customer_service_rows(data_dir) if r.split == "tune"}
    tune_sources |= {p.id for p in load_moderation_set(data_dir, "tune")}
    assert all(e.source in tune_sources for e in small if e.task not in GENERATED)
    assert len(leaked) <= len(small) // 50


def test_every_task_and_both_languages_are_built(small) -> None:
    kinds = {(e.task, e.lang) for e in small}
    assert set(TASKS) == {t for t, _ in kinds}
    for task in ("triage", "risk", "reply", "reply_plain", "tool"):
        assert (task, "zh") in kinds and (task, "en") in kinds, task


def test_targets_are_what_the_skills_parse(small) -> None:
    for e in small:
        if e.task == "triage":
            triage = parse_triage(e.target)
            assert triage.parsed and triage.issue_type == e.label
        elif e.task == "risk":
            risk = parse_risk(e.target, MODEL_CATEGORIES)
            assert risk.status == "ok"
            assert (risk.decision != "allow") == (e.label == "flagged")
        elif e.task == "report":
            assert parse_report(e.target).parsed
            assert not any(ch.isdigit() for ch in PLACEHOLDER.sub("", e.target))
        elif e.task == "interpret":
            ids = re.findall(r"^(F\d+) ", e.messages[-1]["content"], re.M)
            read = parse_interpretation(e.target, ids)
            assert read.parsed and read.findings and not read.dropped
            cited = re.sub(r'"F\d+"', "", PLACEHOLDER.sub("", e.target))
            assert not any(ch.isdigit() for ch in cited)
        elif e.task == "tool":
            args = json.loads(e.target)
            assert args["order_id"] in _user_text(e)
            assert args.get("new_address", "") in _user_text(e)
        elif e.task in ("reply_plain", "draft"):  # no tool ran: no placeholder, no figure
            assert plain_reply_ok(e.target)
            assert "{placeholders}" not in e.messages[0]["content"]
            if e.task == "reply_plain":
                assert "one of: none." in e.messages[0]["content"]
        else:  # reply: facts only as placeholders, all of them known tool facts
            assert reply_facts_ok(e.target, e.facts)
            assert not any(len(v) >= 5 and v in e.target for v in e.facts.values())


class _Recorder:
    """A gateway stand-in that records the chat turns a skill sends and answers nothing."""

    def __init__(self) -> None:
        self.sent: list[list[dict[str, str]]] = []

    def temperature(self, preset: str, value: float | None = None) -> float:
        return 0.0

    def _record(self, messages) -> None:
        self.sent.append([{"role": m.role, "content": m.content} for m in messages])

    async def stream(self, node, messages, **kwargs):
        self._record(messages)
        return
        yield

    async def chat(self, node, messages, **kwargs):
        from orchestrator.core.client import ModelCall

        self._record(messages)
        raise _SentError(ModelCall)


class _SentError(Exception):
    pass


def test_reply_and_tool_prompts_are_the_ones_the_skills_send(small) -> None:
    """The training prompts are what the skills' own code sends (no copy that can drift)."""
    from skills.reply import stream_reply
    from skills.tool_call import ToolRequest, request_tool_call
    from skills.triage import IssueTriage

    for e in [x for x in small if x.task in ("reply", "reply_plain")][:12]:
        triage = IssueTriage(**json.loads(_triage_json(e)))
        recorder = _Recorder()

        async def drain(example=e, rec=recorder, tri=triage) -> None:
            async for _ in stream_reply(rec, _user_text(example), tri, example.facts):  # type: ignore[arg-type]
                pass

        asyncio.run(drain())
        assert recorder.sent == [list(e.messages)]
    tool = next(x for x in small if x.task == "tool")
    recorder = _Recorder()
    spec = {"type": "function", "function": {"name": tool.label, "parameters": {}}}
    with pytest.raises(_SentError):
        asyncio.run(request_tool_call(recorder, ToolRequest(  # type: ignore[arg-type]
            tool=tool.label, spec=spec, message=_user_text(tool))))  # fmt: skip
    assert recorder.sent == [list(tool.messages)]


def _triage_json(example) -> str:
    found = re.search(
        r"Issue type: (\w+); urgency: (\w+); sentiment: (\w+)\.", example.messages[0]["content"]
    )
    assert found
    keys = ("issue_type", "urgency", "sentiment")
    return json.dumps(dict(zip(keys, found.groups(), strict=True)))


def test_reply_facts_are_what_the_real_tools_return(small) -> None:
    """Each reply's placeholders are the facts of a real tool result of the workflow's tools."""
    from workflows.customer_service.signals import INTENT_TOOL

    replies = [e for e in small if e.task == "reply"]
    assert {e.label for e in replies} - {*INTENT_TOOL.values(), "not_found", "refused",
                                          "no_shipment"} == set()  # fmt: skip
    assert any(e.label in INTENT_TOOL.values() for e in replies)
    for e in replies:
        assert "order_id" in e.facts
        assert re.fullmatch(r"ORD-\d{6}", e.facts["order_id"])


def test_building_is_deterministic_by_seed(data_dir: Path, small) -> None:
    again = build_examples(data_dir, SMALL)
    other = build_examples(data_dir, SMALL.model_copy(update={"seed": 4}))
    assert data_hashes(data_dir, again) == data_hashes(data_dir, small)
    assert data_hashes(data_dir, other)["examples"] != data_hashes(data_dir, small)["examples"]
    assert all(len(v) == 64 for v in data_hashes(data_dir, small).values())


def test_generated_workbooks_are_budgeted_in_the_committed_checkpoints_tokens() -> None:
    # The Excel workflow budgets its prompts in the served model's tokens; a wrong path to the
    # committed checkpoint falls back to byte counts silently and changes every workbook drawn.
    counter = _counter()
    assert counter.name == f"tokenizer:{Settings().checkpoint_dir.name}"
    text = "Revenue 收入 rose 12% in Q3"
    assert counter.count(text) < len(text.encode("utf-8"))


_RUN_TRAIN = """
import sys
from typer.testing import CliRunner
from orchestrator.cli.app import app
done = CliRunner().invoke(app, ["train", *sys.argv[1:]])
print(done.exit_code, sorted({m.split(".")[0] for m in sys.modules} & {"workflows", "skills"}))
print(done.output, end="")
"""


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["fit", "--data", "{tmp}/未准备"],
            "{tmp}/未准备 is not a prepared folder; run `orchestrator train prepare` first",
        ),
        (
            ["card", "{tmp}/ckpt"],
            "cannot read the training log, data.json, evaluation or shape JSON: ",
        ),
    ],
)
def test_the_train_commands_are_a_plugin_that_loads_no_workflow_before_it_needs_one(
    tmp_path: Path, args: list[str], said: str
) -> None:
    # Issue 49: `orchestrator train` comes from the moe_orchestrator.commands entry points (the
    # core never imports training/); a refused command is one line, exit 2, and mounting the
    # group imports neither the workflows nor the skills (training/__init__ exports lazily).
    train = [ep for ep in entry_points(group="moe_orchestrator.commands") if ep.name == "train"]
    assert [ep.value for ep in train] == ["training.cli:train_app"]
    argv = [a.format(tmp=tmp_path) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", _RUN_TRAIN, *argv], capture_output=True, text=True, timeout=120
    )
    status, output = done.stdout.split("\n", 1)
    assert status == "2 []", done.stdout + done.stderr
    assert output.startswith("error: " + said.format(tmp=tmp_path)), output
    assert len(output.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_evaluation_rows_are_test_split_only(data_dir: Path) -> None:
    rows = held_out_examples(data_dir, per_task=20, seed=0)
    assert all(e.split == "test" for part in rows.values() for e in part)
    assert {e.lang for e in rows["risk"]} == {"en", "zh"}


@pytest.mark.parametrize(
    ("label", "issue", "urgency"), cases("training.toml", "label_issue_urgency")
)
def test_issue_and_urgency_follow_the_label(label: str, issue: str, urgency: str) -> None:
    assert issue_type_of(label) == issue
    assert urgency_of(label) == urgency


def test_reply_facts_check() -> None:
    facts = {"order_id": "ORD-1", "status": "shipped"}
    assert reply_facts_ok("Your order {order_id} is {status}.", facts)
    assert not reply_facts_ok("Your order {order_id} ships on 2026-01-02.", facts)
    assert not reply_facts_ok("Refund {refund_id} is on its way.", facts)
    assert not reply_facts_ok("We will look into it.", facts)


def test_specialisation_is_zero_for_identical_groups_and_positive_otherwise(small) -> None:
    import numpy as np

    pick = [e for e in small if e.task in ("triage", "risk")][:40]
    same = np.ones((len(pick), 2, 8), dtype=np.int64)
    assert specialisation(same, pick)["min_workflow_pair_jsd"] == 0
    split = same.copy()
    for i, e in enumerate(pick):
        if e.task == "triage":
            split[i, :, :4] = 0
        else:
            split[i, :, 4:] = 0
    assert specialisation(split, pick)["min_workflow_pair_jsd"] > 0.9


def _tiny_prepared(folder: Path) -> Path:
    from serving.checkpoint import _train_tokenizer

    rows = [{"task": "triage", "prompt": f"User: q{i}\nAssistant: ", "target": f'{{"a":{i}}}'}
            for i in range(12)]  # fmt: skip
    tokenizer = _train_tokenizer([r["prompt"] + r["target"] for r in rows] * 4, 300)
    tokenizer.save_pretrained(folder / "tokenizer")
    (folder / "train.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return folder


def test_training_loop_runs_on_cpu_and_moves_the_balancing_bias(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    from serving.training import train

    data = _tiny_prepared(tmp_path / "prep")
    out = tmp_path / "ckpt"
    log = train.main(["--data", str(data), "--out", str(out), "--layers", "2", "--hidden", "64",
                      "--heads", "1", "--kv-heads", "1", "--intermediate", "64",
                      "--moe-intermediate", "32", "--experts", "8", "--top-k", "2", "--shared",
                      "1", "--steps", "3", "--batch", "4", "--device", "cpu", "--log-every", "1",
                      "--warmup", "1", "--bias-rate", "0.01"])  # fmt: skip
    assert log["steps"] == 3 and len(log["losses"]) == 3
    assert [r["layer"] for r in log["load_balance"]] == [1]
    weights = load_file(str(out / "model.safetensors"))
    bias = next(v for k, v in weights.items() if "e_score_correction_bias" in k)
    assert abs(bias).max() > 0  # three updates of +-0.01 (or 0 where a load equals the mean)
    assert (out / "tokenizer.json").is_file() and (out / "training_log.json").is_file()


def test_training_refuses_a_head_size_vllm_cpu_cannot_serve(tmp_path: Path) -> None:
    from serving.training import train

    with pytest.raises(SystemExit):
        train.main(["--data", str(tmp_path), "--out", str(tmp_path / "o"), "--hidden", "64",
                    "--heads", "4"])  # fmt: skip


def test_model_card_and_manifest(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({
        "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
        "moe_num_experts": 64, "moe_intermediate_size": 128, "moe_k": 6,
        "moe_num_shared_experts": 2, "vocab_size": 6144,
    }))  # fmt: skip
    log = {"steps": 10, "args": {"batch": 8, "lr": 0.001, "seed": 0, "bias_rate": 0.001},
           "losses": [{"step": 1, "loss": 8.0}, {"step": 10, "loss": 1.25}],
           "load_balance": [{"layer": 1, "max_over_mean": 2.5, "min_over_mean": 0.3, "cv": 0.4,
                             "unused_experts": 0}]}  # fmt: skip
    info = {"counts": {"triage/en": 5}, "hashes": {"examples": "ab" * 32}}
    assert not is_trained(tmp_path)
    card = write_card(tmp_path, log, info, {"scores": {"triage": {"issue_type_accuracy": 0.7}}})
    text = card.read_text()
    assert "not ERNIE's weights" in text and "template targets" in text
    assert "| 1 | 2.5 | 0.3 | 0.4 | 0 |" in text and "1.250" in text and "ab" * 32 in text
    assert '"issue_type_accuracy": 0.7' in text
    assert is_trained(tmp_path)
    assert "not ERNIE's weights" in LIMITATIONS


def test_the_committed_trained_checkpoint_is_the_cpu_default() -> None:
    folder = Settings().checkpoint_dir
    assert is_trained(folder)
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size <= 50_000_000
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["Ernie4_5_MoeForCausalLM"]
    assert config["hidden_size"] // config["num_attention_heads"] == 64
    card = (folder / "README.md").read_text()
    assert "not ERNIE's weights" in card and "Load balance" in card.replace(
        "load balance", "Load balance"
    )
