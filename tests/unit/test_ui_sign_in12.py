"""Sign-in throttling (ui/throttle.py; ui12, tester12 J), through Chainlit's own ``POST /login``
with the client address of each request. Until ui12 five wrong passwords from anywhere refused
a user name for five minutes, so anyone could keep an operator out. Now:

* five failures of a name from one address refuse that name there, right password or not;
  the name's owner at another address still signs in;
* a name takes 20 attempts in 5 minutes from addresses it never signed in from, counted when
  they start: guesses sent all at once from many addresses are held too (tester12 J), and the
  refused ones cost no bcrypt; the owner still signs in where they did before;
* one address failing on many names is refused for all of them, and no one else is."""

from __future__ import annotations

from pathlib import Path

from test_ui_sign_in11 import run_ui_script

_SCRIPT = """
import asyncio
import httpx
import app
import throttle
checked = []
def counted(password, hashed, check=app._password_ok):
    checked.append(password)
    return check(password, hashed)
app._password_ok = counted
async def login(address, name, password):
    transport = httpx.ASGITransport(app=app.chainlit_app, client=(address, 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
        data = {"username": name, "password": password}
        return (await client.post("/login", data=data)).status_code
def one(*args):
    return asyncio.run(login(*args))
async def burst():  # 30 at once, each from its own address; the right password is the last
    tries = [("right" if i == 29 else f"guess{i}") for i in range(30)]
    return await asyncio.gather(*(login(f"10.0.1.{i}", "ann", p) for i, p in enumerate(tries)))
print("guesser", [one("10.0.0.1", "ann", f"wrong{n}") for n in range(5)])
print("guesser_right", one("10.0.0.1", "ann", "right"), one("10.0.0.1", "bob", "pw-bob"))
print("owner_elsewhere", one("10.0.0.2", "ann", "right"))
before = len(checked)
codes = asyncio.run(burst())
print("burst", sorted(set(codes)), codes[29], len(checked) - before)
print("after_burst", one("10.0.0.3", "ann", "right"), one("10.0.0.2", "ann", "right"))
print("sprayer", sorted({one("10.0.9.9", f"user{n}", "password1") for n in range(30)}))
print("sprayer_right", one("10.0.9.9", "bob", "pw-bob"), one("10.0.0.4", "bob", "pw-bob"))
throttle.forget()
print("forgotten", one("10.0.0.1", "ann", "right"))
"""


def test_a_guesser_is_held_and_the_owner_still_signs_in(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT)
    assert got["guesser"] == "[401, 401, 401, 401, 401]"
    assert got["guesser_right"] == "401 200"  # that name from that address only
    assert got["owner_elsewhere"] == "200", got  # not locked out by someone else's guesses
    # 20 attempts of ann from new addresses: 5 + 1 above, so 14 of the burst are checked
    # (bcrypt), 16 refused at once, whatever they say: the right one (the last) among them
    assert got["burst"] == "[401] 401 14", got
    # a new address is refused for ann now; where ann signed in before, she still does
    assert got["after_burst"] == "401 200"
    assert got["sprayer"] == "[401]"
    assert got["sprayer_right"] == "401 200"  # the spraying address only
    assert got["forgotten"] == "200"
