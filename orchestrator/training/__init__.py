"""Training data for the trained offline ERNIE-MoE (issue 20), built from the project's own
labelled sets (training split only), and the evaluation rows (test split only).

The training loop itself is :mod:`serving.training.train` (torch and transformers only, so it
runs on the GPU machine as a plain script); this package sits above the workflows because the
prompts it builds are the skills' own.
"""

from orchestrator.training.data import (
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
