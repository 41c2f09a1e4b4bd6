"""Training data for the trained offline ERNIE-MoE (issue 20), built from the project's own
labelled sets (training split only), and the evaluation rows (test split only).

The training loop itself is :mod:`serving.training.train` (torch and transformers only, so it
runs on the GPU machine as a plain script); this package sits above the workflows and skills,
outside the core, because the prompts it builds are the skills' own and its data sets the
workflows'. Its commands (:mod:`training.cli`, ``orchestrator train``) are mounted through the
``moe_orchestrator.commands`` entry points, as a workflow's own commands are.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from orchestrator._lazy import lazy_getattr as _lazy_getattr

if _TYPE_CHECKING:
    from training.data import (
        TASKS,
        WORKFLOW_OF,
        DataSpec,
        Example,
        build_examples,
        customer_service_rows,
        data_hashes,
        held_out_examples,
        issue_type_of,
        read_jsonl,
        write_jsonl,
    )

__all__ = [
    "TASKS",
    "WORKFLOW_OF",
    "DataSpec",
    "Example",
    "build_examples",
    "customer_service_rows",
    "data_hashes",
    "held_out_examples",
    "issue_type_of",
    "read_jsonl",
    "write_jsonl",
]

#: Where each public name lives; imported on first use (PEP 562), so that mounting the
#: ``train`` commands (:mod:`training.cli`) does not load the workflows and skills that
#: :mod:`training.data` reads (about 3 s of CPU here) before a command needs them.
_HOMES = dict.fromkeys(__all__, "training.data")

__getattr__ = _lazy_getattr(__name__, _HOMES, globals())
