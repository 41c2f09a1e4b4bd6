"""How long the chat UI's other requests wait while people sign in (ui12).

Runs in the UI's environment (``.venv-ui/bin/python``): ``N`` wrong-password sign-ins go to
Chainlit's ``POST /login`` at once (bcrypt hashes of ``--rounds`` rounds, 12 like
``orchestrator ui-user`` writes), each from its own client address, while a cheap request
(``GET /auth/config``) is sent every 20 ms on the same event loop, and the gaps between its
answers are timed. Before ui12 the password
callback ran bcrypt on the event loop, so every other request of the page waited for it.

    .venv-ui/bin/python benchmarks/ui_sign_in_stall.py --ui ui --logins 4

Prints one JSON line: the sign-ins' wall time and the median and worst gap between answers.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _users_file(rounds: int) -> Path:
    import bcrypt

    hashed = bcrypt.hashpw(b"right", bcrypt.gensalt(rounds)).decode()
    user = {"password_hash": hashed, "role": "operator", "customer_id": None}
    path = Path(tempfile.mkdtemp()) / "users.json"
    path.write_text(json.dumps({"users": {"olga": user}}))
    return path


async def _measure(app: object, logins: int) -> dict[str, float]:
    import httpx

    def client(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))  # type: ignore[arg-type]
        return httpx.AsyncClient(transport=transport, base_url="http://ui")

    ends: list[float] = []  # when each probe answered
    done = asyncio.Event()

    async def probe() -> None:
        async with client("10.1.0.1") as c:
            while not done.is_set():
                await c.get("/auth/config")
                ends.append(time.perf_counter())
                await asyncio.sleep(0.02)

    async def sign_in(n: int) -> int:
        async with client(f"10.2.0.{n}") as c:
            data = {"username": "olga", "password": f"wrong{n}"}
            return (await c.post("/login", data=data)).status_code

    prober = asyncio.create_task(probe())
    await asyncio.sleep(0.1)
    start = time.perf_counter()
    codes = await asyncio.gather(*(sign_in(n) for n in range(logins)))
    wall = time.perf_counter() - start
    done.set()
    await prober
    assert set(codes) == {401}, codes
    # the page's view: how long between two answers to a request sent every 20 ms
    gaps = [b - a for a, b in itertools.pairwise(ends)]
    return {
        "logins": logins,
        "sign_in_wall_s": round(wall, 3),
        "probe_gap_median_ms": round(statistics.median(gaps) * 1000, 1),
        "probe_gap_worst_ms": round(max(gaps) * 1000, 1),
        "probes": len(ends),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ui", type=Path, default=Path("ui"), help="the Chainlit app's folder")
    parser.add_argument("--logins", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    os.environ["ORCH_UI_USERS"] = str(_users_file(args.rounds))
    os.environ.setdefault("CHAINLIT_AUTH_SECRET", "bench-secret-0123456789abcdef0123")
    os.chdir(args.ui)
    sys.path.insert(0, str(Path.cwd()))
    import app  # noqa: F401  (registers the password callback)
    from chainlit.server import app as server

    print(json.dumps(asyncio.run(_measure(server, args.logins))))


if __name__ == "__main__":
    main()
