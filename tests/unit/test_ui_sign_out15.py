"""A sign-out ends the session on the server (ui/signed_out.py; tester15 T15-9). Chainlit's
session token is a stateless JWT and its ``POST /logout`` only clears the browser's cookie, so
a copy of the cookie kept from before went on reading the customer's account and history, and
chatting as her, for the token's 15 days. Through Chainlit's own routes (``/login``,
``/logout``, ``/user``): a kept copy is refused after the sign-out, by cookie and as a bearer
token; a new sign-in works; another user's session is untouched."""

from __future__ import annotations

from pathlib import Path

from test_ui_sign_in11 import run_ui_script

_SCRIPT = """
import asyncio
import httpx
import app
async def main():
    transport = httpx.ASGITransport(app=app.chainlit_app, client=("10.0.0.1", 40000))
    def client():
        return httpx.AsyncClient(transport=transport, base_url="http://ui")
    async with client() as ann, client() as bob:
        for c, name, pw in ((ann, "ann", "right"), (bob, "bob", "pw-bob")):
            assert (await c.post("/login", data={"username": name, "password": pw})).is_success
        kept = dict(ann.cookies)
        token = ann.cookies["access_token"]
        print("before", (await ann.get("/user")).status_code)
        print("logout", (await ann.post("/logout")).status_code)
        async with client() as thief:
            thief.cookies.update(kept)
            print("kept_cookie", (await thief.get("/user")).status_code)
            query = {"pagination": {"first": 5}, "filter": {}}
            got = await thief.post("/project/threads", json=query)
            print("kept_threads", got.status_code)
        async with client() as thief:
            bearer = {"Authorization": f"Bearer {token}"}
            print("kept_bearer", (await thief.get("/user", headers=bearer)).status_code)
        print("bob", (await bob.get("/user")).status_code)
        await asyncio.sleep(1.1)  # a JWT of the same second is the same token: still signed out
        assert (await ann.post("/login", data={"username": "ann", "password": "right"})).is_success
        print("again", (await ann.get("/user")).status_code, ann.cookies["access_token"] != token)
asyncio.run(main())
"""


def test_a_kept_cookie_is_refused_after_the_sign_out(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT)
    assert got["before"] == "200" and got["logout"] == "200"
    assert got["kept_cookie"] == "401", got  # was 200: the customer's account
    assert got["kept_threads"] == "401", got  # was 200: her thread list
    assert got["kept_bearer"] == "401", got
    assert got["bob"] == "200", got  # another user's session is untouched
    assert got["again"] == "200 True", got  # signing in again works, with a new token
    assert (tmp_path / "ui_signed_out.db").exists()
