"""Batch jobs: ``requests.batch_id``, and the ``batches`` / ``batch_rows`` progress tables.

``orchestrator batch`` tags each request it sends with its batch id (indexed, so
``orchestrator skew --batch ID`` reads one batch), and records every finished input row in
``batch_rows`` as the run goes; ``(batch_id, row_index)`` is unique, so a resumed run can
neither lose nor duplicate a row. Existing rows are kept (``batch_id`` NULL).
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"


def upgrade() -> None:
    with op.batch_alter_table("requests") as batch:
        batch.add_column(sa.Column("batch_id", sa.String(64), nullable=True))
    op.create_index("ix_requests_batch_id", "requests", ["batch_id"])
    op.create_table(
        "batches",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("mapping", sa.JSON(), nullable=False),
        sa.Column("total_rows", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "batch_rows",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(64), nullable=False),
        sa.Column("row_index", sa.Integer(), nullable=False),
        sa.Column("row_id", sa.String(255), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("output", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["batches.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("batch_id", "row_index", name="uq_batch_row"),
    )
    op.create_index("ix_batch_rows_batch_id", "batch_rows", ["batch_id"])
    op.create_index("ix_batch_rows_status", "batch_rows", ["status"])


def downgrade() -> None:
    op.drop_index("ix_batch_rows_status", table_name="batch_rows")
    op.drop_index("ix_batch_rows_batch_id", table_name="batch_rows")
    op.drop_table("batch_rows")
    op.drop_table("batches")
    op.drop_index("ix_requests_batch_id", table_name="requests")
    with op.batch_alter_table("requests") as batch:
        batch.drop_column("batch_id")
