"""Who may do what in the UI service (orchestrator/ui/service.py), checked on the server with
signed caller tokens and no browser (ScriptedModel: a test double of the model).

401 without a valid token; 403 for a customer deciding or listing handoffs; 404 for a customer
on another customer's thread, word for word as for reading an unused id (tester11 G); 404 for
a decision on a thread with no handoff; 409 for a second decision of the same handoff; the
customer comes from the token, never from the body."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

import jwt
import pytest
from case_tables import cases
from starlette.testclient import TestClient

from orchestrator import Request
from orchestrator.config import Settings
from orchestrator.testing import ScriptedModel
from orchestrator.ui import build_app
from orchestrator.ui.auth import Caller, sign_caller
from orchestrator.ui.service import NOT_YOURS, public_event, scrub

SECRET = "ui-auth-test-secret-0123456789abcdef"
HUMAN = "I want to talk to a human agent, not a bot"


def _auth(role: str, customer: str | None = None, *, secret: str = SECRET) -> dict[str, str]:
    caller = Caller(name=f"{role}-{customer or 'op'}", role=role, customer_id=customer)  # type: ignore[arg-type]
    # signed when the module is collected, so valid for a day: a full suite runs for minutes
    # before these tests do (expiry itself has its own test)
    return {"Authorization": f"Bearer {sign_caller(secret, caller, ttl_s=86_400)}"}


ANN, BOB, OPS = _auth("customer", "C00001"), _auth("customer", "C00002"), _auth("operator")


def tid(label: str) -> str:
    """A fresh-looking thread id (a version-4 UUID, as Chainlit makes) named after ``label``:
    a customer starts a conversation only on such an id (``orchestrator.ui.owners``)."""
    return str(uuid.UUID(bytes=hashlib.md5(label.encode()).digest(), version=4))


OWN, DEC, ANNS, CLAIM = tid("t-own"), tid("t-dec"), tid("t-ann"), tid("t-claim")


@pytest.fixture
def client(ui_settings: Settings) -> Any:
    model = ScriptedModel(replies=["Thanks for waiting."])
    with TestClient(build_app(ui_settings, client=model, secret=SECRET)) as c:
        yield c


def _turn(client: TestClient, headers: dict[str, str], text: str, thread: str) -> list[dict]:
    response = client.post("/api/turn", json={"text": text, "thread_id": thread}, headers=headers)
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def _handed_off(client: TestClient, thread: str) -> None:
    events = _turn(client, ANN, HUMAN, thread)
    done = next(e for e in events if e["kind"] == "done")
    assert done["status"] == "needs_human", done
    # the customer reads words for them, never the operator's command or a thread id
    assert "orchestrator handoff" not in json.dumps(events)
    assert "person from our team" in done["headline"]


#: Who may call each endpoint of the service. Every route of the app is in one of these
#: (ui13): an endpoint added later fails :func:`test_every_endpoint_says_who_may_call_it`
#: until it is given a role and the tests below reach it. Operators only: a customer gets 403.
OPERATOR_ONLY = {("GET", "/api/handoffs"), ("POST", "/api/handoffs/{thread}/decide")}
#: A customer only on what is theirs (404 otherwise: the tests further down).
OWNER_ONLY = {
    ("POST", "/api/turn"),
    ("GET", "/api/threads/{thread}"),
    ("GET", "/api/files/{name:path}"),
}
#: Anyone signed in.
SIGNED_IN = {("GET", "/api/health"), ("GET", "/api/routes")}
ENDPOINTS = OPERATOR_ONLY | OWNER_ONLY | SIGNED_IN


def _called(path: str) -> str:
    """An endpoint's path with its parameters filled in."""
    return path.replace("{thread}", tid("t-1")).replace("{name:path}", "x.md")


def test_every_endpoint_says_who_may_call_it(client: TestClient) -> None:
    routes = {(m, r.path) for r in client.app.routes for m in r.methods if m != "HEAD"}
    assert routes == ENDPOINTS
    assert len(ENDPOINTS) == len(OPERATOR_ONLY) + len(OWNER_ONLY) + len(SIGNED_IN)  # one role each


def test_a_customer_gets_a_403_from_every_operator_endpoint(client: TestClient) -> None:
    for method, path in OPERATOR_ONLY:
        answer = client.request(method, _called(path), json={"approve": True}, headers=ANN)
        assert answer.status_code == 403, (method, path, answer.text)
        assert "only an operator" in answer.json()["error"]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Basic YWRtaW46YWRtaW4="},
        _auth("operator", secret="another-secret-of-enough-length-0123"),  # forged
    ],
)
def test_without_a_valid_token_every_endpoint_is_a_401(
    client: TestClient, headers: dict[str, str]
) -> None:
    for method, path in ENDPOINTS:
        answer = client.request(method, _called(path), json={"approve": True}, headers=headers)
        assert answer.status_code == 401, (method, path, answer.text)
        assert "sign in" in answer.json()["error"] or "token" in answer.json()["error"]


def test_an_expired_token_is_a_401(client: TestClient) -> None:
    now = int(time.time())
    claims = {"sub": "ann", "role": "operator", "iat": now - 305, "exp": now - 5}
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    answer = client.get("/api/handoffs", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401 and "expired" in answer.json()["error"]


@pytest.mark.parametrize(
    ("iat", "exp"),
    [
        (0, 30 * 365 * 86_400),  # signed to last thirty years
        (0, 86_401),  # a second over the longest life
        (3_600, 7_200),  # issued an hour from now
        (None, 300),  # no issue time
    ],
)
def test_a_token_that_claims_too_long_a_life_is_a_401(
    client: TestClient, iat: int | None, exp: int
) -> None:
    now = int(time.time())
    claims: dict[str, Any] = {"sub": "ann", "role": "operator", "exp": now + exp}
    if iat is not None:
        claims["iat"] = now + iat
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    answer = client.get("/api/handoffs", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401, answer.text
    assert "sign in" in answer.json()["error"]
    claims.update(iat=now, exp=now + 300)  # the same claims with a normal life are let in
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    answer = client.get("/api/handoffs", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text


def test_a_customer_token_must_name_its_customer(client: TestClient) -> None:
    now = int(time.time())
    claims = {"sub": "x", "role": "customer", "iat": now, "exp": now + 60}
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    answer = client.get("/api/health", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401


def test_a_customer_cannot_decide_even_their_own_handoff(client: TestClient) -> None:
    _handed_off(client, OWN)
    for approve in (True, False):
        answer = client.post(
            f"/api/handoffs/{OWN}/decide",
            json={"approve": approve, "note": "ok"},
            headers=ANN,
        )
        assert answer.status_code == 403, answer.text
        assert "only an operator" in answer.json()["error"]
    assert client.get("/api/handoffs", headers=ANN).status_code == 403
    # still waiting: the refused attempts changed nothing
    waiting = client.get("/api/handoffs", headers=OPS).json()
    assert [h["thread_id"] for h in waiting] == [OWN]


def test_an_operator_decides_once_the_second_is_a_409(client: TestClient) -> None:
    _handed_off(client, DEC)
    first = client.post(
        f"/api/handoffs/{DEC}/decide",
        json={"approve": False, "note": "not eligible"},
        headers=OPS,
    )
    assert first.status_code == 200, first.text
    again = client.post(f"/api/handoffs/{DEC}/decide", json={"approve": True}, headers=OPS)
    assert again.status_code == 409 and "decided already" in again.json()["error"]
    assert client.get("/api/handoffs", headers=OPS).json() == []
    # the decision reaches the customer's thread, for its owner
    seen = client.get(f"/api/threads/{DEC}", headers=ANN)
    assert seen.status_code == 200
    decisions = seen.json()["decisions"]
    assert [d["status"] for d in decisions] == ["rejected"]
    assert decisions[0]["note"] == "not eligible"


def test_a_decision_on_a_thread_without_a_handoff_is_a_404(client: TestClient) -> None:
    answer = client.post("/api/handoffs/t-none/decide", json={"approve": True}, headers=OPS)
    assert answer.status_code == 404 and "no handoff" in answer.json()["error"]
    bad = client.post("/api/handoffs/bad%20id!/decide", json={"approve": True}, headers=OPS)
    assert bad.status_code == 400


@pytest.mark.parametrize("body", [{}, {"approve": "maybe"}, {"approve": True, "note": "x" * 2001}])
def test_a_bad_decision_is_a_400_naming_the_field(client: TestClient, body: dict) -> None:
    answer = client.post("/api/handoffs/t-x/decide", json=body, headers=OPS)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error.startswith("bad decision: ") and "http" not in error


def test_another_customers_thread_is_refused(client: TestClient) -> None:
    _turn(client, ANN, "Where is my order? It has not arrived", ANNS)
    answer = client.post(
        "/api/turn", json={"text": "and my refund?", "thread_id": ANNS}, headers=BOB
    )
    assert answer.status_code == 404 and answer.json()["error"] == NOT_YOURS
    theirs, unused = (client.get(f"/api/threads/{t}", headers=BOB) for t in (ANNS, tid("t-none")))
    assert (theirs.status_code, theirs.json()) == (unused.status_code, unused.json())
    assert theirs.status_code == 404 and theirs.json() == {"error": NOT_YOURS}
    assert client.get(f"/api/threads/{ANNS}", headers=ANN).json()["customer_id"] == "C00001"
    # an operator may read it, not write to it
    assert client.get(f"/api/threads/{ANNS}", headers=OPS).status_code == 200
    answer = client.post("/api/turn", json={"text": "hello", "thread_id": ANNS}, headers=OPS)
    assert answer.status_code == 403


def test_the_customer_is_the_tokens_not_the_bodys(client: TestClient) -> None:
    body = {"text": "Where is my order?", "thread_id": CLAIM, "customer_id": "C00002"}
    assert client.post("/api/turn", json=body, headers=ANN).status_code == 200
    assert client.get(f"/api/threads/{CLAIM}", headers=ANN).json()["customer_id"] == "C00001"
    assert client.get(f"/api/threads/{CLAIM}", headers=BOB).status_code == 404


def test_a_report_file_is_only_its_owners(client: TestClient) -> None:
    answer = client.get("/api/files/../../etc/passwd", headers=ANN)
    assert answer.status_code == 404 and "/etc" not in answer.text


@pytest.mark.parametrize(("text", "want"), cases("ui_service_auth.toml", "scrub_paths"))
def test_scrub_cuts_paths_to_file_names(text: str, want: str) -> None:
    assert scrub(text) == want
    assert scrub({"a": [text]}) == {"a": [want]}


def test_a_customer_reads_no_headline_meant_for_the_team() -> None:
    done = {
        "kind": "done",
        "status": "needs_human",
        "headline": "conversation t waits; orchestrator handoff resume t --approve|--reject",
        "error": "Traceback: /srv/x/y.py",
        "result": {"xlsx": "/srv/reports/r.xlsx"},
    }
    customer = Caller(name="a", role="customer", customer_id="C1")
    shown = public_event(dict(done), customer)
    assert "orchestrator" not in shown["headline"] and shown["error"] is None
    assert shown["result"]["xlsx"] == "r.xlsx"
    operator = public_event(dict(done), Caller(name="o", role="operator"))
    assert "orchestrator handoff" in operator["headline"]


def test_a_turn_cannot_tell_which_guessable_thread_ids_are_taken(client: TestClient) -> None:
    """ui12: a turn on an unused id started a conversation there, and one on another's id was
    a 404, so a turn told taken ids from free ones, and a customer could take an id ahead of
    the person who would use it (``orchestrator chat --thread t-cli``). A conversation now
    starts only on a fresh random id (a version-4 UUID); on any other id a customer only
    continues their own, and a taken id and a free one read the same."""
    service = next(r.endpoint.__self__ for r in client.app.routes if r.path == "/api/turn")

    async def cli_turn(thread: str, customer: str) -> list[str]:  # as orchestrator chat runs
        request = Request(text="Where is my order?", thread_id=thread, customer_id=customer)
        return [e.kind async for e in service.orchestrator("balanced").stream(request)]

    assert "error" not in client.portal.call(cli_turn, "t-cli", "C00001")  # ann's, guessable
    for thread in ("t-cli", "t-free", "1", "00000000-0000-1000-8000-000000000000"):
        for how in ("turn", "read"):
            answers = {
                who: (
                    client.post("/api/turn", json={"text": "hi", "thread_id": thread}, headers=h)
                    if how == "turn"
                    else client.get(f"/api/threads/{thread}", headers=h)
                )
                for who, h in (("bob", BOB), ("ann", ANN))
            }
            bob = answers["bob"]
            assert (bob.status_code, bob.json()) == (404, {"error": NOT_YOURS}), (thread, how)
            ann = answers["ann"]
            assert ann.status_code == (200 if thread == "t-cli" else 404), (thread, how)
    # refused, so still free: the CLI's customer starts it as theirs
    assert "error" not in client.portal.call(cli_turn, "t-free", "C00002")
    assert client.get("/api/threads/t-free", headers=BOB).json()["customer_id"] == "C00002"
    # a fresh random id starts a conversation, and is its starter's from then on
    fresh = str(uuid.uuid4())
    assert _turn(client, BOB, "Where is my order?", fresh)[-1]["kind"] == "expert_grid"
    assert client.post(
        "/api/turn", json={"text": "hi", "thread_id": fresh}, headers=ANN
    ).json() == {"error": NOT_YOURS}
