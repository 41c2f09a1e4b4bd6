"""Thread sharing is refused on the server while Chainlit's ``allow_thread_sharing`` is off
(ui/element_store.py ``refuse_sharing``; ui13). Chainlit 2.12 only hides its Share button then:
its server still shared a thread for its author and served a shared thread to anyone signed
in, so an operator could hand the console's thread (other customers' cases) to anyone. Through
Chainlit's own routes, signed in with ``POST /login``, on a SQLite history."""

from __future__ import annotations

from pathlib import Path

from test_ui_sign_in11 import run_ui_script

_SCRIPT = """
import asyncio, json, os, uuid
os.environ["ORCH_UI_DATABASE_URL"] = "sqlite+aiosqlite:///{db}"
import httpx
import app
from chainlit.context import init_http_context
from chainlit.data import get_data_layer
async def main():
    transport = httpx.ASGITransport(app=app.chainlit_app, client=("10.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
        login = await client.post("/login", data={{"username": "ann", "password": "right"}})
        print("login", login.status_code)
        init_http_context()
        layer = get_data_layer()
        user = await layer.get_user("ann")
        thread = str(uuid.uuid4())
        await layer.update_thread(thread, name="my order", user_id=user.id)
        own = await client.get(f"/project/thread/{{thread}}")
        body = {{"threadId": thread, "isShared": True}}
        share = await client.put("/project/thread/share", json=body)
        meta = (await layer.get_thread(thread)).get("metadata") or {{}}
        meta = json.loads(meta) if isinstance(meta, str) else meta
        print("own", own.status_code)
        print("share", share.status_code, share.json().get("detail"))
        print("marked", bool(meta.get("is_shared")))
        await layer.update_thread(thread, metadata={{"is_shared": True}})  # shared before ui13
        print("read", (await client.get(f"/project/share/{{thread}}")).status_code)
asyncio.run(main())
"""


def test_a_thread_cannot_be_shared_while_sharing_is_off(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT.format(db=tmp_path / "history.db"))
    assert got["login"] == "200" and got["own"] == "200", got  # the author reads their thread
    assert got["share"] == "403 sharing conversations is turned off", got
    assert got["marked"] == "False"
    assert got["read"] == "404", got
