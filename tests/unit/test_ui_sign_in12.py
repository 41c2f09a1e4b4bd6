"""Sign-in throttling (ui/throttle.py; ui12), through Chainlit's own ``POST /login`` with the
client address of each request. Until ui12 five wrong passwords from anywhere refused a user
name for five minutes, so anyone could keep an operator out. Now:

* five failures of a name from one address refuse that name there, right password or not;
  the name's owner at another address still signs in (held back by the name's delay);
* many addresses guessing one name: each is held after five, and the delay before each
  answer for that name grows with its failures, up to a cap;
* one address failing on many names is refused for all of them, and no one else is."""

from __future__ import annotations

from pathlib import Path

from test_ui_sign_in11 import run_ui_script

_SCRIPT = """
import json
import app
import throttle
from starlette.testclient import TestClient
throttle.DELAY_BASE_S, throttle.DELAY_CAP_S = 0.001, 0.004  # the doubling, not the waiting
def login(address, name, password):  # no lifespan: Chainlit's ends the process (os._exit)
    client = TestClient(app.chainlit_app, client=(address, 40000))
    return client.post("/login", data={"username": name, "password": password}).status_code
print("guesser", [login("10.0.0.1", "ann", f"wrong{n}") for n in range(5)])
print("guesser_right", login("10.0.0.1", "ann", "right"), login("10.0.0.1", "bob", "pw-bob"))
print("delay_after_5", throttle.delay_s("ann"))
print("owner_elsewhere", login("10.0.0.2", "ann", "right"))
spread = [login(f"10.0.1.{i}", "ann", "nope") for i in range(3) for _ in range(5)]
print("spread", sorted(set(spread)), [login(f"10.0.1.{i}", "ann", "right") for i in range(3)])
print("delay_after_20", throttle.delay_s("ann"))
print("sprayer", sorted({login("10.0.9.9", f"user{n}", "password1") for n in range(30)}))
print("sprayer_right", login("10.0.9.9", "bob", "pw-bob"), login("10.0.0.3", "bob", "pw-bob"))
throttle.forget()
print("forgotten", login("10.0.0.1", "ann", "right"))
"""


def test_a_guesser_is_held_at_their_address_and_the_owner_still_signs_in(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT)
    assert got["guesser"] == "[401, 401, 401, 401, 401]"
    assert got["guesser_right"] == "401 200"  # that name from that address only
    assert float(got["delay_after_5"]) == 0.001  # past five failures of the name: a wait
    assert got["owner_elsewhere"] == "200", got  # not locked out by someone else's guesses
    assert got["spread"] == "[401] [401, 401, 401]"  # each address held after five
    assert float(got["delay_after_20"]) == 0.004  # doubled per failure, up to the cap
    assert got["sprayer"] == "[401]"
    assert got["sprayer_right"] == "401 200"  # the spraying address only
    assert got["forgotten"] == "200"
