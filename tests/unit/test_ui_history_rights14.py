"""The chat history shows a thread only while its author may read it *now* (ui/app.py
``HistoryLayer``, ui/history_guard.py ``may_read``; app14, closing12 "noticed, left alone").

A removed or demoted operator's console thread, with other customers' cases in it, stayed
readable on reload until the sign-in cookie expired, though their actions were refused. Now
every read (a thread opened again, the thread list) checks the user file as it is, against
who made the thread (the ``owner`` record kept in its metadata; a thread without one by its
chat profile), and a later session's metadata never rewrites that record. Through Chainlit's
own routes, signed in with ``POST /login``, on a SQLite history.
"""

from __future__ import annotations

from pathlib import Path

from test_ui_sign_in11 import run_ui_script

_SCRIPT = """
import asyncio, json, os, uuid
os.environ["ORCH_UI_DATABASE_URL"] = "sqlite+aiosqlite:///{db}"
import httpx
import service_client as sc
users = json.loads(sc.USERS.read_text())["users"]
def save(name, role, customer):
    if role is None:
        users.pop(name, None)
    else:
        users[name].update(role=role, customer_id=customer)
    sc.USERS.write_text(json.dumps({{"users": users}}))
save("bob", "operator", None)
import app
from chainlit.context import init_http_context
from chainlit.data import get_data_layer

async def signed_in(name, password):
    client = httpx.AsyncClient(base_url="http://ui", transport=httpx.ASGITransport(
        app=app.chainlit_app, client=("10.0.0.2", 40000)))
    assert (await client.post("/login", data={{"username": name, "password": password}})).is_success
    return client

async def thread_of(layer, name, meta):
    user = await layer.get_user(name)
    thread = str(uuid.uuid4())
    await layer.update_thread(thread, name="case", user_id=user.id, metadata=meta)
    await layer.create_step({{"id": str(uuid.uuid4()), "threadId": thread,
        "name": "Harbor Assistant", "type": "assistant_message",
        "output": "handoff waiting: customer C00007", "streaming": False,
        "createdAt": "2026-12-06T00:00:00Z"}})
    return thread

async def seen(client, threads):
    codes = [(await client.get(f"/project/thread/{{t}}")).status_code for t in threads]
    page = await client.post("/project/threads",
                             json={{"pagination": {{"first": 20}}, "filter": {{}}}})
    listed = {{t["id"] for t in page.json().get("data", [])}} if page.status_code == 200 else set()
    return codes + [sum(t in listed for t in threads)]

async def main():
    bob, ann = await signed_in("bob", "pw-bob"), await signed_in("ann", "right")
    init_http_context()
    layer = get_data_layer()
    console = await thread_of(layer, "bob", {{"chat_profile": "Operator console",
                              "owner": {{"role": "operator", "customer_id": None}}}})
    legacy = await thread_of(layer, "bob", {{"chat_profile": "Operator console"}})
    chat = await thread_of(layer, "ann", {{"chat_profile": "Customer chat",
                           "owner": {{"role": "customer", "customer_id": "C00001"}}}})
    print("operator", await seen(bob, [console, legacy]))
    save("bob", "customer", "C00009")
    print("demoted", await seen(bob, [console, legacy]))
    # a later session of the demoted operator writes its metadata: the thread stays the console's
    await layer.update_thread(console, metadata={{"chat_profile": "Customer chat",
                              "owner": {{"role": "customer", "customer_id": "C00009"}}}})
    await layer.update_thread(legacy, metadata={{"chat_profile": "Customer chat"}})
    print("rewritten", await seen(bob, [console, legacy]))
    save("bob", "operator", None)
    print("again", await seen(bob, [console, legacy]))
    save("bob", None, None)
    print("removed", await seen(bob, [console, legacy]))
    print("customer", await seen(ann, [chat]))
    save("ann", "customer", "C00009")
    print("moved", await seen(ann, [chat]))
asyncio.run(main())
"""


def test_a_thread_is_shown_only_to_its_author_as_the_user_file_has_them_now(
    tmp_path: Path,
) -> None:
    got = run_ui_script(tmp_path, _SCRIPT.format(db=tmp_path / "history.db"))
    assert got["operator"] == "[200, 200, 2]", got
    assert got["demoted"] == "[404, 404, 0]", got
    assert got["rewritten"] == "[404, 404, 0]", got
    assert got["again"] == "[200, 200, 2]", got  # the same file, read again: no state kept
    assert got["removed"] == "[404, 404, 0]", got
    assert got["customer"] == "[200, 1]", got
    assert got["moved"] == "[404, 0]", got
