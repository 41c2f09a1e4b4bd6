"""Chainlit's own history routes, checked on the chat app's server (ui/history_guard.py; ui13),
through Chainlit's routes, signed in with ``POST /login``, on a SQLite history.

* Sharing, while ``allow_thread_sharing`` is off: Chainlit 2.12 only hid its button; its server
  still shared a thread for its author and served a shared one to anyone signed in.
* Feedback: Chainlit wrote the thumbs any signed-in person sent, on whatever step and thread
  they named, and deleted any feedback by id; ``ui-feedback`` reported it as the thread owner's.
  Now a person rates only steps of their own threads and changes or deletes only feedback there;
  anything else is a 404."""

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

async def signed_in(name, password):
    transport = httpx.ASGITransport(app=app.chainlit_app, client=("10.0.0.1", 40000))
    client = httpx.AsyncClient(transport=transport, base_url="http://ui")
    login = await client.post("/login", data={{"username": name, "password": password}})
    assert login.status_code == 200
    return client

async def thread_of(layer, name):
    user = await layer.get_user(name)
    thread, step = str(uuid.uuid4()), str(uuid.uuid4())
    await layer.update_thread(thread, name="my order", user_id=user.id)
    await layer.create_step({{"id": step, "threadId": thread, "name": "Harbor Assistant",
        "type": "assistant_message", "output": "shipped", "streaming": False,
        "createdAt": "2026-12-06T00:00:00Z"}})
    return thread, step

def rating(step, thread, value, fid=None):
    return {{"feedback": {{"forId": step, "threadId": thread, "value": value, "id": fid}},
            "sessionId": "s"}}

async def main():
    ann, bob = await signed_in("ann", "right"), await signed_in("bob", "pw-bob")
    init_http_context()
    layer = get_data_layer()
    (at, astep), (bt, bstep) = await thread_of(layer, "ann"), await thread_of(layer, "bob")
    share = await ann.put("/project/thread/share", json={{"threadId": at, "isShared": True}})
    print("share", share.status_code, share.json().get("detail"))
    meta = (await layer.get_thread(at)).get("metadata") or {{}}
    meta = json.loads(meta) if isinstance(meta, str) else meta
    print("marked", bool(meta.get("is_shared")))
    await layer.update_thread(at, metadata={{"is_shared": True}})  # shared before ui13
    print("read", (await bob.get(f"/project/share/{{at}}")).status_code)
    own = await ann.put("/feedback", json=rating(astep, at, 1))
    fid = own.json().get("feedbackId")
    print("own", own.status_code)
    tries = [
        await bob.put("/feedback", json=rating(astep, at, 0)),  # on ann's step and thread
        await bob.put("/feedback", json=rating(astep, bt, 0)),  # ann's step, his thread named
        await bob.put("/feedback", json=rating(bstep, bt, 0, fid)),  # ann's feedback id
        await bob.request("DELETE", "/feedback", json={{"feedbackId": fid}}),
    ]
    print("others", [r.status_code for r in tries])
    rows = await layer.execute_sql('SELECT "forId", "value" FROM feedbacks', {{}})
    print("stored", sorted((r["forId"] == astep, r["value"]) for r in rows))
    print("bob_own", (await bob.put("/feedback", json=rating(bstep, bt, 0))).status_code)
    gone = await ann.request("DELETE", "/feedback", json={{"feedbackId": fid}})
    print("unrated", gone.status_code)
asyncio.run(main())
"""


def test_history_routes_answer_only_for_what_is_the_callers(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT.format(db=tmp_path / "history.db"))
    assert got["share"] == "403 sharing conversations is turned off", got
    assert got["marked"] == "False"
    assert got["read"] == "404", got
    assert got["own"] == "200", got
    assert got["others"] == "[404, 404, 404, 404]", got
    assert got["stored"] == "[(True, 1)]", got  # ann's thumbs up, as she left it
    assert got["bob_own"] == "200" and got["unrated"] == "200", got
