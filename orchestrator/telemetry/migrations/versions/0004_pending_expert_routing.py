"""Deferred expert routing: the ``pending_expert_routing`` table.

A batch job records its model calls with expert-routing source ``pending`` (no replay on the
request path) and keeps each call's token ids here; the replay worker
(``orchestrator telemetry fill-routing``) replays them, fills the call's counts, adds them to
its rollup and deletes the row, all in one transaction. Existing rows are kept.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"


def upgrade() -> None:
    op.create_table(
        "pending_expert_routing",
        sa.Column("call_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checkpoint", sa.Text(), nullable=False),
        sa.Column("prompt_ids", sa.LargeBinary(), nullable=False),
        sa.Column("completion_ids", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["call_id"], ["model_calls.id"]),
        sa.PrimaryKeyConstraint("call_id"),
    )


def downgrade() -> None:
    op.drop_table("pending_expert_routing")
