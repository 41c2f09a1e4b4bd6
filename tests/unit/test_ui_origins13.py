"""No other site may read the chat app's answers with a signed-in person's cookie (ui13).
``ui/.chainlit/config.toml`` had Chainlit's ``allow_origins = ["*"]``, and Chainlit's CORS
allows credentials, so a credentialed request from any origin was answered with that origin:
a page on another port of the same host (same-site, so the ``lax`` sign-in cookie goes with
it) could read ``/user`` or the threads. Now no origin but the page's own is allowed. Through
Chainlit's server, signed in with ``POST /login``."""

from __future__ import annotations

from pathlib import Path

from test_ui_sign_in11 import run_ui_script

_SCRIPT = """
import asyncio
import httpx
import app
async def main():
    transport = httpx.ASGITransport(app=app.chainlit_app, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        login = await client.post("/login", data={"username": "ann", "password": "right"})
        other = {"Origin": "http://127.0.0.1:9999"}
        user = await client.get("/user", headers=other)
        ask = {**other, "Access-Control-Request-Method": "PUT"}
        preflight = await client.options("/project/thread", headers=ask)
        print("login", login.status_code)
        allowed = "access-control-allow-origin"
        print("user", user.status_code, user.headers.get(allowed))
        print("preflight", preflight.status_code, preflight.headers.get(allowed))
        print("own", (await client.get("/user")).status_code)
asyncio.run(main())
"""


def test_another_origin_cannot_read_with_the_sign_in_cookie(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT)
    assert got["login"] == "200" and got["own"] == "200", got
    assert got["user"] == "200 None", got  # answered, but no browser lets the page read it
    assert got["preflight"] == "400 None", got
