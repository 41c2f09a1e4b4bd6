"""Sampled expert capture and the classifier tier that decided each route.

* ``model_calls.capture_sampling_rate``: the fraction of calls whose experts were captured
  when this call was made (``1.0``: every call; ``0.25``: one call in four, drawn per call
  independently of its content). A captured call stands for ``1 / rate`` calls in every
  aggregate (:mod:`orchestrator.analysis`). Existing rows: ``1.0``.
* ``expert_rollups.capture_sampling_rate``: the rate of the calls a rollup row sums; part of
  the row's group (the unique constraint), so calls captured at different rates are never
  summed unweighted together. Existing rows: ``1.0``.
* ``requests.decided_by`` and ``model_calls.decided_by``: the classifier tier whose scores
  decided the route (``fast``, ``rules``, ``learned``, ``semantic``;
  ``Classification.decided_by``), NULL when unknown (rows written before this revision).
"""

import sqlalchemy as sa
from alembic import op

from orchestrator.telemetry.migrations.ops import GROUP_0002, regroup_rollups

revision: str = "0005"
down_revision: str | None = "0004"

_GROUP = list(GROUP_0002)


def upgrade() -> None:
    with op.batch_alter_table("model_calls") as batch:
        batch.add_column(
            sa.Column(
                "capture_sampling_rate", sa.Float(), nullable=False, server_default=sa.text("1.0")
            )
        )
        batch.add_column(sa.Column("decided_by", sa.String(length=16), nullable=True))
    with op.batch_alter_table("requests") as batch:
        batch.add_column(sa.Column("decided_by", sa.String(length=16), nullable=True))
    regroup_rollups(
        [*_GROUP, "capture_sampling_rate"],
        add=sa.Column(
            "capture_sampling_rate", sa.Float(), nullable=False, server_default=sa.text("1.0")
        ),
    )


def downgrade() -> None:
    # rollup rows of the same group at different rates cannot share the old unique group:
    # refuse rather than sum sampled and unsampled counts unweighted
    bind = op.get_bind()
    mixed = bind.execute(
        sa.text("SELECT COUNT(*) FROM expert_rollups WHERE capture_sampling_rate <> 1.0")
    ).scalar()
    if mixed:
        raise RuntimeError(
            f"{mixed} expert_rollups rows sum sampled calls (capture_sampling_rate < 1); "
            "downgrading would drop their weights. Delete those rows (and their model_calls) "
            "or keep revision 0005"
        )
    regroup_rollups(_GROUP, drop="capture_sampling_rate")
    with op.batch_alter_table("requests") as batch:
        batch.drop_column("decided_by")
    with op.batch_alter_table("model_calls") as batch:
        batch.drop_column("decided_by")
        batch.drop_column("capture_sampling_rate")
