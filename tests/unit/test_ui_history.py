"""The chat history's tables (ui/chat_history.py) under Chainlit's own SQLAlchemy data layer,
run in .venv-ui, on SQLite and on a real PostgreSQL (Debian's, ``postgres_server``): a user, a
thread with a message, a thumbs feedback, the thread list and the thread read back, as the app
and ``orchestrator ui-feedback`` use them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from postgres_server import PostgresServer

from orchestrator.config import Settings

UI = Path(__file__).resolve().parents[2] / "ui"
PYTHON = Settings().ui_chainlit.parent / "python"

PROBE = r"""
import asyncio, json, sys, uuid
import chat_history
import element_store
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.element import File
from chainlit.types import Feedback, Pagination, ThreadFilter
from chainlit.user import User

async def main(url):
    from chainlit.context import init_http_context
    init_http_context()  # the data layer reads Chainlit's context, as in a request
    chat_history.ensure_tables(url)
    chat_history.ensure_tables(url)  # twice: tables already there are kept
    kept = element_store.LocalStorageClient(sys.argv[2])
    layer = SQLAlchemyDataLayer(conninfo=url, storage_provider=kept)
    user = await layer.create_user(User(identifier="ann", metadata={"role": "customer"}))
    thread = str(uuid.uuid4())
    await layer.update_thread(thread, name="Where is my order?", user_id=user.id,
                              metadata={"chat_profile": "Customer chat"})
    step = {"id": str(uuid.uuid4()), "threadId": thread, "name": "Harbor Assistant",
            "type": "assistant_message", "output": "Order ORD-1 shipped", "streaming": False,
            "createdAt": "2026-12-05T00:00:00Z", "metadata": {"decision": "t:1:approved"}}
    await layer.create_step(step)
    chart = File(name="../chart <1>.json", content='{"data": [1]}', mime="application/json",
                 for_id=step["id"], thread_id=thread, display="inline")
    await layer.create_element(chart)
    await layer.upsert_feedback(Feedback(forId=step["id"], threadId=thread, value=1, comment="ok"))
    listed = await layer.list_threads(Pagination(first=10), ThreadFilter(userId=user.id))
    got = await layer.get_thread(thread)
    element = got["elements"][0]
    name = element["url"].rsplit("/", 1)[-1]
    path, mime = kept.read(name, user.id)
    refused = []
    for who in ("someone-else", None, "unknown"):
        try:
            kept.read(name, who)
        except FileNotFoundError:
            refused.append(who)
    print(json.dumps({
        "author": await layer.get_thread_author(thread),
        "listed": [t["id"] for t in listed.data],
        "outputs": [s["output"] for s in got["steps"]],
        "metadata": [s.get("metadata") for s in got["steps"]],
        "feedback": [s.get("feedback") for s in got["steps"]],
        "element": [element["url"], element["name"], element["forId"], mime, path.read_text()],
        "refused": refused,
        "files": sorted(p.name for p in kept.root.iterdir()),
        "digest": element_store.digest(element["objectKey"]),
    }, default=str))
    await layer.close() if hasattr(layer, "close") else None

asyncio.run(main(sys.argv[1]))
"""


def _probe(tmp_path: Path, url: str) -> dict:
    if not PYTHON.is_file():
        pytest.skip(f"no .venv-ui python at {PYTHON}: scripts/install.sh builds it")
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": str(UI)}
    done = subprocess.run(
        [str(PYTHON), str(script), url, str(tmp_path / "kept")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _check(seen: dict) -> None:
    assert seen["author"] == "ann"
    assert len(seen["listed"]) == 1
    assert seen["outputs"] == ["Order ORD-1 shipped"]
    meta = seen["metadata"][0]
    meta = json.loads(meta) if isinstance(meta, str) else meta
    assert meta["decision"] == "t:1:approved"  # what a reload reads back (ui/app.py)
    assert seen["feedback"][0]["value"] == 1
    # a chart kept with the thread: read back through its URL, by its owner only
    url, name, for_id, mime, content = seen["element"]
    assert url == f"/history/files/{seen['digest']}" and name == "../chart <1>.json"
    assert for_id and mime == "application/json" and content == '{"data": [1]}'
    assert seen["refused"] == ["someone-else", None, "unknown"]
    # stored under the key's digest: no name the person chose reaches the disk
    assert seen["files"] == [seen["digest"], seen["digest"] + ".json"]


def test_the_history_on_sqlite(tmp_path: Path) -> None:
    _check(_probe(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'history.db'}"))


def test_the_history_on_postgresql(tmp_path: Path, postgres: PostgresServer) -> None:
    url = postgres.create_database("ui_history").replace("postgresql://", "postgresql+psycopg://")
    url = url.replace("postgresql+psycopg+psycopg://", "postgresql+psycopg://")
    _check(_probe(tmp_path, url))


def test_ui_feedback_tells_a_damaged_database_from_one_the_ui_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from orchestrator.cli import app

    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"not a database at all" * 100)
    for db, said in (
        (damaged, f"chat history database {damaged} is damaged"),
        (tmp_path / "new.db", "the chat UI has not run on it yet"),
    ):
        monkeypatch.setenv("ORCH_UI_DATABASE_URL", f"sqlite:///{db}")
        result = CliRunner().invoke(app, ["ui-feedback"])
        text = " ".join(result.output.split())
        assert result.exit_code == 2 and said in text, text
        assert "Error)" not in text  # no exception class names
