"""The model family of each call, so that analyses never pool two MoE families.

* ``model_calls.model_family`` and ``expert_rollups.model_family``: the family of the served
  model (``MoEArchitecture.family``: ``ernie45``, ``qwen3_moe``, ``deepseek_v2``, ``mixtral``,
  ``olmoe``, ``gpt_oss``; ``dense``; ``unsupported``), ``''`` when the call names none (a test
  double). Part of a rollup row's group (the unique constraint), so calls of two families are
  never summed into one row, even at the same shape.
* Rows written before this revision: until now only ERNIE-4.5 MoE had a description
  (``serving/architecture.py`` recognised ``Ernie4_5_MoeForCausalLM`` alone and read every other
  model as dense), so every call recorded with MoE layers from the engine, a replay, a deferred
  replay or as unavailable was an ERNIE-4.5 MoE call: those get ``ernie45``. Calls of a test
  double (``scripted``) and calls without MoE layers keep ``''`` (not known).
"""

import sqlalchemy as sa
from alembic import op

from orchestrator.telemetry.migrations.ops import GROUP_0002, regroup_rollups

revision: str = "0007"
down_revision: str | None = "0006"

_GROUP = [*GROUP_0002, "capture_sampling_rate"]
#: The sources whose MoE calls could only have been ERNIE-4.5 before this revision.
_ERNIE_SOURCES = ("engine", "replay", "pending", "unavailable")


def _family_column() -> sa.Column[str]:
    return sa.Column("model_family", sa.String(length=32), nullable=False, server_default="")


def upgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(_family_column())
    regroup_rollups([*_GROUP, "model_family"], add=_family_column())
    for name in ("model_calls", "expert_rollups"):
        rows = sa.table(
            name,
            sa.column("model_family"),
            sa.column("num_experts"),
            sa.column("expert_routing_source"),
        )
        op.execute(
            rows.update()
            .where(rows.c.num_experts > 0, rows.c.expert_routing_source.in_(_ERNIE_SOURCES))
            .values(model_family="ernie45")
        )


def downgrade() -> None:
    # rollup rows that differ only by family cannot share the old unique group: refuse rather
    # than sum two families into one row
    bind = op.get_bind()
    rollups = sa.table("expert_rollups", *(sa.column(c) for c in _GROUP))
    groups = [rollups.c[c] for c in _GROUP]
    clashing = (
        sa.select(sa.literal(1))
        .select_from(rollups)
        .group_by(*groups)
        .having(sa.func.count() > 1)
        .subquery()
    )
    clashes = bind.execute(sa.select(sa.func.count()).select_from(clashing)).scalar()
    if clashes:
        raise RuntimeError(
            f"{clashes} expert_rollups groups hold calls of more than one model family; "
            "downgrading would sum them together. Delete the rows of all but one family "
            "(and their model_calls) or keep revision 0007"
        )
    regroup_rollups(_GROUP, drop="model_family")
    with op.batch_alter_table("model_calls") as batch:
        batch.drop_column("model_family")
