"""Whose address the sign-in throttle counts (ui/throttle.py; ui13, closing11). uvicorn believes
``X-Forwarded-For`` from the proxies ``FORWARDED_ALLOW_IPS`` names, 127.0.0.1 and ::1 when it is
unset, so until ui13 anyone on the UI's host could send any address with each guess and escape
the per-address counts. Now no proxy is believed unless the operator names one: the app sets
the variable to "" when it is unset, and ``orchestrator ui`` passes its
``--forwarded-allow-ips`` (default none). Through uvicorn's own middleware, as ``chainlit run``
builds it, and Chainlit's ``POST /login``."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from test_ui_sign_in11 import run_ui_script
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.cli.ui import proxies, ui_env
from orchestrator.config import Settings

_SCRIPT = """
import asyncio, os
os.environ.pop("FORWARDED_ALLOW_IPS", None)  # as on a host where nobody set it
import httpx, uvicorn
import app, throttle
seen = []
def failed(name, address, count=throttle.failed):
    seen.append(address)
    count(name, address)
throttle.failed = failed
def served():  # the app as `chainlit run` serves it: uvicorn's config, its middleware
    config = uvicorn.Config(app.chainlit_app)
    config.load()
    return config.loaded_app
async def login(asgi, password, forged):
    transport = httpx.ASGITransport(app=asgi, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
        data = {"username": "ann", "password": password}
        headers = {"X-Forwarded-For": forged} if forged else {}
        return (await client.post("/login", data=data, headers=headers)).status_code
default = served()
print("variable", repr(os.environ.get("FORWARDED_ALLOW_IPS")))
print("forged", [asyncio.run(login(default, f"w{n}", f"10.7.0.{n}")) for n in range(5)])
print("counted", sorted(set(seen)))
print("held", asyncio.run(login(default, "right", "10.7.0.99")))
throttle.forget(); seen.clear()
os.environ["FORWARDED_ALLOW_IPS"] = "127.0.0.1"  # the operator names their proxy
print("proxied", asyncio.run(login(served(), "wrong", "10.7.1.1")), seen)
"""


def test_a_forged_forwarded_for_does_not_change_the_counted_address(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT)
    assert got["variable"] == "''"
    assert got["forged"] == "[401, 401, 401, 401, 401]"
    assert got["counted"] == "['127.0.0.1']", got  # the connection's, not the header's
    assert got["held"] == "401"  # five failures at 127.0.0.1, whatever the header says
    assert got["proxied"] == "401 ['10.7.1.1']", got  # a proxy the operator named is believed


def test_orchestrator_ui_trusts_no_proxy_unless_told() -> None:
    assert ui_env(Settings())["FORWARDED_ALLOW_IPS"] == ""
    assert ui_env(Settings(), "10.0.0.5,::1")["FORWARDED_ALLOW_IPS"] == "10.0.0.5,::1"


def test_a_proxy_address_is_checked_before_anything_starts() -> None:
    assert proxies(" 10.0.0.5, ::1 ,10.1.0.0/16,*") == "10.0.0.5,::1,10.1.0.0/16,*"
    assert proxies("") == ""
    for bad in ("10.0.0.256", "10.0.0.5/24", "proxy.local", "10.0.0.5;10.0.0.6"):
        with pytest.raises(typer.Exit):
            proxies(bad)
    done = CliRunner().invoke(app, ["ui", "--forwarded-allow-ips", "10.0.0.256"])
    assert done.exit_code == 2
    assert "'10.0.0.256' is not an IP address or network" in done.output
    assert "Traceback" not in done.output and len(done.output.strip().splitlines()) == 1
