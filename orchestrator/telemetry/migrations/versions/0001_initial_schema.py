"""The telemetry schema as the code wrote it before migrations (``create_all`` of 2026-11).

Tables ``requests``, ``model_calls`` and ``expert_rollups`` with their indexes, exactly as
``Base.metadata.create_all`` made them, the expert-routing source column still named
``routing_source``.

A table that already exists is left as it is: a database made before migrations (no
``alembic_version`` table) is adopted at this revision without change, which is what stamping
it would do, and a database of a version older still (written before ``expert_rollups``
existed) gets the missing table.
"""

import sqlalchemy as sa
from alembic import op

from orchestrator.telemetry.migrations.ops import rollup_columns

revision: str = "0001"
down_revision: str | None = None


def _missing(table: str) -> bool:
    return not sa.inspect(op.get_bind()).has_table(table)


def upgrade() -> None:
    if _missing("requests"):
        op.create_table(
            "requests",
            sa.Column("id", sa.String(64), nullable=False),
            sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("text", sa.Text(), nullable=False),
            sa.Column("channel", sa.String(64), nullable=True),
            sa.Column("source", sa.String(255), nullable=True),
            sa.Column("route", sa.String(64), nullable=False),
            sa.Column("route_confidence", sa.Float(), nullable=False),
            sa.Column("classifier_signals", sa.JSON(), nullable=False),
            sa.Column("workflow", sa.String(64), nullable=True),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("error", sa.Text(), nullable=True),
            sa.Column("result", sa.JSON(), nullable=True),
            sa.PrimaryKeyConstraint("id"),
        )
        for column in ("route", "status", "workflow"):
            op.create_index(f"ix_requests_{column}", "requests", [column])
    if _missing("expert_rollups"):
        op.create_table(
            "expert_rollups",
            *rollup_columns(source="routing_source"),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint(
                "bucket_start",
                "workflow",
                "node",
                "routing_source",
                "model",
                "shape_key",
                name="uq_expert_rollup_group",
            ),
        )
        for column in ("workflow", "bucket_start"):
            op.create_index(f"ix_expert_rollups_{column}", "expert_rollups", [column])
    if _missing("model_calls"):
        op.create_table(
            "model_calls",
            sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("request_id", sa.String(64), nullable=False),
            sa.Column("route", sa.String(64), nullable=False),
            sa.Column("route_confidence", sa.Float(), nullable=False),
            sa.Column("classifier_signals", sa.JSON(), nullable=False),
            sa.Column("workflow", sa.String(64), nullable=False),
            sa.Column("node", sa.String(64), nullable=False),
            sa.Column("model", sa.String(255), nullable=False),
            sa.Column("prompt_tokens", sa.Integer(), nullable=False),
            sa.Column("completion_tokens", sa.Integer(), nullable=False),
            sa.Column("latency_ms", sa.Float(), nullable=False),
            sa.Column("finish_reason", sa.String(32), nullable=True),
            sa.Column("routing_source", sa.String(16), nullable=False),
            sa.Column("routing_note", sa.Text(), nullable=True),
            sa.Column("moe_layers", sa.JSON(), nullable=False),
            sa.Column("num_experts", sa.Integer(), nullable=False),
            sa.Column("top_k", sa.Integer(), nullable=False),
            sa.Column("routed_tokens", sa.Integer(), nullable=False),
            sa.Column("expert_counts", sa.LargeBinary(), nullable=True),
            sa.Column("layer_confidence", sa.LargeBinary(), nullable=True),
            sa.Column("mean_router_confidence", sa.Float(), nullable=True),
            sa.ForeignKeyConstraint(["request_id"], ["requests.id"]),
            sa.PrimaryKeyConstraint("id"),
        )
        for column in ("request_id", "route", "created_at", "routing_source", "node", "workflow"):
            op.create_index(f"ix_model_calls_{column}", "model_calls", [column])


def downgrade() -> None:
    op.drop_table("model_calls")
    op.drop_table("expert_rollups")
    op.drop_table("requests")
