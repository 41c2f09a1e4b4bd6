"""Rename ``routing_source`` to ``expert_routing_source`` in model_calls and expert_rollups.

The project says "expert routing" for token -> expert (the MoE router) and "route" for
request -> workflow; the column holds who filled a call's expert routing (``engine``,
``replay``, ``dense``, ``unavailable``, ``scripted``). The index on ``model_calls`` follows
the column's name; the unique constraint ``uq_expert_rollup_group`` keeps its name. Batch
mode: SQLite copies each table (rows kept), PostgreSQL renames in place.
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"


def _rename(old: str, new: str) -> None:
    # the index is dropped before and made after the batch: inside it, SQLite's table copy
    # would look for the new column name in the old table
    op.drop_index(f"ix_model_calls_{old}", table_name="model_calls")
    with op.batch_alter_table("model_calls") as batch:
        batch.alter_column(
            old, new_column_name=new, existing_type=sa.String(16), existing_nullable=False
        )
    op.create_index(f"ix_model_calls_{new}", "model_calls", [new])
    with op.batch_alter_table("expert_rollups") as batch:
        batch.alter_column(
            old, new_column_name=new, existing_type=sa.String(16), existing_nullable=False
        )


def upgrade() -> None:
    _rename("routing_source", "expert_routing_source")


def downgrade() -> None:
    _rename("expert_routing_source", "routing_source")
