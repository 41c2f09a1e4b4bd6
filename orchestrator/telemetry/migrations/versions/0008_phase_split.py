"""Prefill and decode apart, where the source kept them apart (issue 51).

* ``model_calls.prefill_counts``: the prompt tokens' part of ``expert_counts`` (same codec),
  NULL where the source summed the phases. Every row written before this revision gets NULL:
  its phase is unknown ("combined"), and no split is made up for it.
* ``expert_phase_rollups``: the ``expert_rollups`` sums for ``phase`` ``prefill`` or
  ``decode`` of the calls that have ``prefill_counts``; ``phase`` is part of the group. It
  starts empty (no old call has a split).

Downgrade drops both: the split is lost, the combined counts and rollups stay whole.
"""

import sqlalchemy as sa
from alembic import op

from orchestrator.telemetry.migrations.ops import GROUP_0002, rollup_columns

revision: str = "0008"
down_revision: str | None = "0007"

# The group is 0007's and the table's columns are 0001's (migrations.ops), each plus what later
# revisions added: a revision is history and never reads the live schema
# (orchestrator.telemetry.schema), which later revisions change.
_GROUP = [*GROUP_0002, "capture_sampling_rate", "model_family"]


def upgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(sa.Column("prefill_counts", sa.LargeBinary(), nullable=True))
    op.create_table(
        "expert_phase_rollups",
        *rollup_columns(source="expert_routing_source"),
        sa.Column(
            "capture_sampling_rate", sa.Float(), server_default=sa.text("1.0"), nullable=False
        ),
        sa.Column("model_family", sa.String(32), server_default="", nullable=False),
        sa.Column("phase", sa.String(8), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(*_GROUP, "phase", name="uq_expert_phase_rollup_group"),
    )
    for column in ("workflow", "bucket_start"):
        op.create_index(f"ix_expert_phase_rollups_{column}", "expert_phase_rollups", [column])


def downgrade() -> None:
    op.drop_table("expert_phase_rollups")
    with op.batch_alter_table("model_calls") as batch:
        batch.drop_column("prefill_counts")
