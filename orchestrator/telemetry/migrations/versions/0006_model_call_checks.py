"""What code's checks dropped from a model call's output.

* ``model_calls.checks``: JSON list of ``{"reason": ..., "sentence": ...}`` (each sentence at
  most 200 characters), one per model sentence that a check dropped before anyone read it
  (the customer-service claim checker: ``workflows/customer_service/claims.py``); NULL when
  no check ran on the call (rows written before this revision, and most calls).
"""

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"


def upgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(sa.Column("checks", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.drop_column("checks")
