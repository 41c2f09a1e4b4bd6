"""Alembic environment of the telemetry tables (see :mod:`orchestrator.telemetry.migrate`).

Runs on the connection that :func:`orchestrator.telemetry.migrate.upgrade` hands over in
``config.attributes["connection"]``, or, from the ``alembic`` command line (``alembic.ini`` at
the repository root), on an engine made from ``-x url=URL`` or else ``sqlalchemy.url``. Batch
mode is on, so column changes work on SQLite (the table is copied) as well as on PostgreSQL
(``ALTER TABLE``).
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, engine_from_config, pool

from orchestrator.telemetry.schema import Base

config = context.config
target_metadata = Base.metadata
if config.config_file_name is not None and "connection" not in config.attributes:
    fileConfig(config.config_file_name, disable_existing_loggers=False)  # the alembic CLI


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate on the caller's connection, or on a new engine from ``sqlalchemy.url``."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    section = config.get_section(config.config_ini_section, {})
    url = context.get_x_argument(as_dictionary=True).get("url")
    if url:
        section["sqlalchemy.url"] = url
    engine = engine_from_config(
        section,
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as new_connection:
        _run(new_connection)
        new_connection.commit()


if context.is_offline_mode():
    raise SystemExit("telemetry migrations run online only: give a database URL")
run_migrations_online()
