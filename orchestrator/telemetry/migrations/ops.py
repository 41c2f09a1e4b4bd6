"""Operations and columns that more than one migration uses, written once.

Migrations are history: a change here changes every revision that calls it, so these only
ever take what differs between revisions as arguments (never the live schema of
:mod:`orchestrator.telemetry.schema`) and keep doing exactly what they do.
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

#: The unique constraint over the group columns of ``expert_rollups`` (revision 0001).
ROLLUP_GROUP = "uq_expert_rollup_group"
#: The group columns of ``expert_rollups`` as revision 0002 left them (it renamed
#: ``routing_source``). Each later revision that changes the group adds one column to it:
#: 0005 ``capture_sampling_rate``, 0007 ``model_family``.
GROUP_0002 = ("bucket_start", "workflow", "node", "expert_routing_source", "model", "shape_key")


def rollup_columns(source: str) -> list[sa.Column[Any]]:
    """The columns of a rollup table as revision 0001 made them for ``expert_rollups``: the
    ``id``, the group (hour, workflow, node, expert-routing source, model, shape key), the
    shape (``moe_layers``, ``num_experts``, ``top_k``) and the sums. Revision 0008's
    ``expert_phase_rollups`` holds the same, per phase.

    Args:
        source: The name of the expert-routing source column: ``routing_source`` in 0001,
            ``expert_routing_source`` since revision 0002 renamed it.
    """
    return [
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("bucket_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("workflow", sa.String(64), nullable=False),
        sa.Column("node", sa.String(64), nullable=False),
        sa.Column(source, sa.String(16), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("shape_key", sa.String(255), nullable=False),
        sa.Column("moe_layers", sa.JSON(), nullable=False),
        sa.Column("num_experts", sa.Integer(), nullable=False),
        sa.Column("top_k", sa.Integer(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("routed_tokens", sa.Integer(), nullable=False),
        sa.Column("counts", sa.LargeBinary(), nullable=False),
        sa.Column("sq_counts", sa.LargeBinary(), nullable=False),
        sa.Column("conf_calls", sa.Integer(), nullable=False),
        sa.Column("conf_tokens", sa.Integer(), nullable=False),
        sa.Column("conf_sum", sa.Float(), nullable=False),
        sa.Column("conf_hist", sa.LargeBinary(), nullable=False),
        sa.Column("layer_conf_sum", sa.LargeBinary(), nullable=False),
    ]


def regroup_rollups(
    group: list[str], *, add: sa.Column[Any] | None = None, drop: str | None = None
) -> None:
    """Rebuild ``expert_rollups`` (a batch copy, so SQLite can change a constraint) with the
    column ``add`` added or the column ``drop`` dropped, and its unique constraint
    :data:`ROLLUP_GROUP` over the columns ``group``.
    """
    with op.batch_alter_table("expert_rollups", recreate="always") as batch:
        if add is not None:
            batch.add_column(add)
        batch.drop_constraint(ROLLUP_GROUP, type_="unique")
        if drop is not None:
            batch.drop_column(drop)
        batch.create_unique_constraint(ROLLUP_GROUP, group)
