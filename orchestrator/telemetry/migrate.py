"""Schema migrations of the telemetry database: Alembic, run from code.

The revisions ship inside the package (``orchestrator/telemetry/migrations/versions``):

* ``0001``: the schema as the code made it before migrations (``routing_source`` column).
* ``0002``: ``routing_source`` renamed ``expert_routing_source`` (model_calls, expert_rollups).

:func:`upgrade` brings any telemetry database to :func:`head_revision`: a new one gets every
table at once (``create_all``, then stamped at head), one at an older revision is upgraded in
place, and one made before migrations (telemetry tables but no ``alembic_version``, like a
``runs/telemetry.db`` of November 2026) is adopted at 0001 (its missing tables created,
nothing else touched) and upgraded; rows always survive.
:func:`require_head` only reads, for commands that must not write.

From a shell: ``python -m orchestrator.telemetry upgrade URL``; developers can also use the
``alembic`` command with the repository's ``alembic.ini`` (``alembic -x url=URL upgrade head``,
``alembic revision --autogenerate -m "..."`` for a new revision).
"""

from __future__ import annotations

from functools import lru_cache

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect

from orchestrator.exceptions import UserError
from orchestrator.telemetry.schema import Base

#: Where the revisions live, as a ``package:folder`` resource (works from a wheel too).
SCRIPT_LOCATION = "orchestrator.telemetry:migrations"
#: Tables of every revision; a database with none of them is not a telemetry database.
TABLES = ("requests", "model_calls", "expert_rollups")


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config for the packaged revisions, running on ``connection`` when given."""
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@lru_cache(maxsize=1)
def scripts() -> ScriptDirectory:
    """The packaged revisions (parsed once per process)."""
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    """The newest revision id shipped with this code (``"0002"``)."""
    head = scripts().get_current_head()
    assert head is not None  # the package ships revisions
    return head


def current_revision(connection: Connection) -> str | None:
    """The database's revision; None when it has no ``alembic_version`` row (new, or made
    before migrations)."""
    return MigrationContext.configure(connection).get_current_revision()


def _check_legacy(connection: Connection) -> None:
    """Refuse to adopt tables named like ours that are not ours (before any change)."""
    tables = set(inspect(connection).get_table_names())
    if "model_calls" in tables:
        columns = {c["name"] for c in inspect(connection).get_columns("model_calls")}
        if not {"routing_source", "expert_counts", "moe_layers"} <= columns:
            raise UserError(
                "the database has a model_calls table that the telemetry store did not make "
                f"(columns: {', '.join(sorted(columns))}); use another database URL"
            )


def upgrade(connection: Connection) -> tuple[str | None, str]:
    """Upgrade the database on ``connection`` to :func:`head_revision`, in its transaction.

    Returns:
        ``(revision before, revision after)``; before is None for a new database or one made
        before migrations.

    Raises:
        UserError: A ``model_calls`` table exists that this project did not make.
        sqlalchemy.exc.SQLAlchemyError: The database rejected a migration step.
    """
    before = current_revision(connection)
    if before is None and not set(TABLES) & set(inspect(connection).get_table_names()):
        # A new database: create the head schema at once and record it (Alembic's advice for
        # fresh databases); tests/unit/test_storage_conformance.py checks that the revisions
        # build the same schema.
        Base.metadata.create_all(connection)
        MigrationContext.configure(connection).stamp(scripts(), "head")
    elif before != head_revision():
        if before is not None and before not in {s.revision for s in scripts().walk_revisions()}:
            raise UserError(
                f"telemetry database {connection.engine.url.render_as_string(hide_password=True)}"
                f" is at schema revision {before}, written by a newer release (newest known "
                f"here: {head_revision()}); upgrade the orchestrator package, or pass "
                "--database-url (ORCH_DATABASE_URL) of another database"
            )
        if before is None:
            _check_legacy(connection)
        command.upgrade(alembic_config(connection), "head")
    return before, head_revision()


def require_head(connection: Connection, shown: str) -> None:
    """Raise unless the database is a telemetry database at :func:`head_revision`. Reads only.

    Args:
        connection: A connection to the database.
        shown: The database URL as shown in messages (password hidden).

    Raises:
        UserError: The database has no telemetry tables, was made before migrations, is at an
            older revision (the message gives the upgrade command), or at a newer one (the
            code is older than the database).
    """
    tables = set(inspect(connection).get_table_names())
    if "model_calls" not in tables:
        raise UserError(
            f"{shown} holds no telemetry tables; run `orchestrator run` first, or pass "
            "--database-url (or --db) pointing at the telemetry database it wrote"
        )
    revision = current_revision(connection)
    head = head_revision()
    if revision == head:
        return
    fix = (
        f"upgrade it in place (rows are kept) with `python -m orchestrator.telemetry upgrade "
        f"'{shown}'`, or by running any command that writes to it (`orchestrator run`)"
    )
    known = {script.revision for script in scripts().walk_revisions()}
    if revision is None:
        raise UserError(f"telemetry database {shown} predates schema migrations; {fix}")
    if revision not in known:
        raise UserError(
            f"telemetry database {shown} is at schema revision {revision}, which this version "
            f"does not know (newest known: {head}); upgrade the orchestrator package"
        )
    raise UserError(
        f"telemetry database {shown} is at schema revision {revision}, this version reads "
        f"{head}; {fix}"
    )
