"""Customer data scoped by customer, and SQL only through bound parameters (issue 18, part 6).

* Every customer-service tool, called for customer A with customer B's order id, answers
  ``not_found`` (the same answer as for an order that does not exist, so it does not even
  confirm that the id exists), and B's order is unchanged afterwards.
* No module builds SQL from strings: an AST scan of every project module finds no
  ``text()``/``execute()``/``exec_driver_sql()`` call whose statement is an f-string, a
  ``%``/``+`` concatenation or a ``.format()`` call.
* Injection strings through every text field that reaches SQL (tool arguments, ticket subject
  and body, a new address, handoff reason/context/note, thread and customer ids, a request's
  text, id, channel and metadata in telemetry) are stored and read back verbatim, and every
  table is intact afterwards.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from sqlalchemy import func, inspect, select

from orchestrator import Request, TelemetryStore
from orchestrator.classifier import Classification
from orchestrator.routes import Route
from workflows.customer_service.store import OrderStore, ToolError
from workflows.customer_service.store.schema import Order, Ticket
from workflows.customer_service.store.tools import WRITE_TOOLS, _mint_grant

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "workflows", "serving", "skills", "ui")

INJECTIONS = [
    "'; DROP TABLE cs_orders; --",
    '" OR 1=1 --',
    "x' UNION SELECT id, customer_id FROM cs_orders --",
    "1; DELETE FROM requests",
    "%s %(x)s {0} ?",
    "\\'; --",
    "Robert'); DROP TABLE requests;--",
]


@pytest.fixture
def store(tmp_path: Path) -> OrderStore:
    store = OrderStore(f"sqlite:///{tmp_path / 'cs.db'}")
    store.seed(12, seed=3)
    return store


def _customers_with_orders(store: OrderStore) -> tuple[str, str, str]:
    """``(customer A, customer B, one of B's order ids)``, A and B different, both with orders."""
    found = [(f"C{n:05d}", store.tools(f"C{n:05d}").order_ids(50)) for n in range(1, 13)]
    with_orders = [(c, ids) for c, ids in found if ids]
    (a, _), (b, b_ids) = with_orders[0], with_orders[1]
    return a, b, b_ids[0]


def _snapshot(store: OrderStore, order_id: str) -> tuple:
    with store.sessions() as session:
        order = session.get(Order, order_id)
        assert order is not None
        return (
            order.customer_id,
            order.status,
            order.shipping_address,
            len(order.refunds),
            session.scalar(select(func.count()).select_from(Ticket)),
        )


def _run(tools, tool: str, args: dict, *, key: str):
    """Run ``tool``; a write with the grant the write policy gives (the store layer alone is
    under test here: scoping and bound parameters)."""
    grant = _mint_grant(tool, tools.customer_id, key) if tool in WRITE_TOOLS else None
    return tools.run(tool, args, key=key, grant=grant)


TOOL_CALLS = {
    "lookup_order": lambda oid: {"order_id": oid},
    "track_shipment": lambda oid: {"order_id": oid},
    "check_refund_eligibility": lambda oid: {"order_id": oid},
    "start_refund": lambda oid: {"order_id": oid, "amount_cents": 100},
    "cancel_order": lambda oid: {"order_id": oid},
    "change_address": lambda oid: {"order_id": oid, "new_address": "1 Attacker Road, Evil"},
    "open_ticket": lambda oid: {"subject": "about it", "body": "please", "order_id": oid},
}


@pytest.mark.parametrize("tool", sorted(TOOL_CALLS))
def test_no_tool_reads_or_changes_another_customers_order(store: OrderStore, tool: str) -> None:
    a, b, b_order = _customers_with_orders(store)
    before = _snapshot(store, b_order)
    assert b_order not in store.tools(a).order_ids(1000)
    with pytest.raises(ToolError) as info:
        _run(store.tools(a), tool, TOOL_CALLS[tool](b_order), key="k1")
    assert info.value.code == "not_found", info.value
    # the same answer as for an id that exists for nobody: the id's existence is not revealed
    with pytest.raises(ToolError) as none:
        _run(store.tools(a), tool, TOOL_CALLS[tool]("ORD-999999"), key="k2")
    assert none.value.code == "not_found"
    assert str(info.value).replace(b_order, "ID") == str(none.value).replace("ORD-999999", "ID")
    assert _snapshot(store, b_order) == before
    # B can still use it: the refusal was about who asked, not the order
    assert store.tools(b).run("lookup_order", {"order_id": b_order}).ok


@pytest.mark.parametrize("customer", [*INJECTIONS, "%", "_", "C0000%", "*"])
def test_an_injected_or_wildcard_customer_id_sees_no_orders(
    store: OrderStore, customer: str
) -> None:
    """Refused as a customer id, or (when it looks like one) scoped to nobody's orders."""
    _, _, b_order = _customers_with_orders(store)
    try:
        tools = store.tools(customer)
    except ToolError as exc:
        assert exc.code == "invalid_arguments"
        return
    assert tools.order_ids(1000) == []
    with pytest.raises(ToolError) as info:
        tools.run("lookup_order", {"order_id": b_order})
    assert info.value.code == "not_found"


# --------------------------------------------------------------------------- bound parameters

_SQL_CALLS = {"text", "execute", "exec_driver_sql", "executescript", "executemany"}


def _built_from_strings(node: ast.expr) -> bool:
    """True for an f-string with placeholders, ``"..." % x``, ``"..." + x`` or ``"...".format``."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        sides = (node.left, node.right)
        return any(
            (isinstance(s, ast.Constant) and isinstance(s.value, str))
            or isinstance(s, ast.JoinedStr)
            for s in sides
        ) or any(_built_from_strings(s) for s in sides)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    )


def _sql_built_from_strings(source: str, filename: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func_node = node.func
        name = (
            func_node.attr if isinstance(func_node, ast.Attribute) else getattr(func_node, "id", "")
        )
        if name in _SQL_CALLS and _built_from_strings(node.args[0]):
            found.append(f"{filename}:{node.lineno}: {ast.unparse(node)[:120]}")
    return found


def test_the_scan_finds_string_built_sql() -> None:
    """The scan can fail: each way of building SQL from strings is caught."""
    bad = (
        "conn.execute(text(f'SELECT * FROM t WHERE id = {x}'))\n"
        "cur.execute('SELECT * FROM t WHERE id = %s' % x)\n"
        "cur.execute('SELECT * FROM t WHERE id = ' + x)\n"
        "db.exec_driver_sql('SELECT {}'.format(x))\n"
    )
    assert len(_sql_built_from_strings(bad, "bad.py")) == 4
    good = "conn.execute(text('SELECT * FROM t WHERE id = :id'), {'id': x})\n"
    assert _sql_built_from_strings(good, "good.py") == []


def test_no_module_builds_sql_from_strings() -> None:
    found: list[str] = []
    files = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(files) > 100  # the scan really looked at the project
    for path in files:
        found += _sql_built_from_strings(
            path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))
        )
    assert found == [], "\n".join(found)


# --------------------------------------------------------------------------- injection attempts


def _table_counts(store: OrderStore) -> dict[str, int]:
    with store.sessions() as session:
        names = inspect(session.get_bind()).get_table_names()
        return {
            name: session.execute(
                select(func.count()).select_from(Order.metadata.tables[name])
            ).scalar_one()
            for name in names
            if name in Order.metadata.tables
        }


@pytest.mark.parametrize("hostile", INJECTIONS)
def test_injection_through_every_order_store_text_field_is_stored_verbatim(
    store: OrderStore, hostile: str
) -> None:
    a, _, _ = _customers_with_orders(store)
    tools = store.tools(a)
    own = tools.order_ids(50)
    counts = _table_counts(store)
    # an order id is validated before any query: an injection is refused, nothing runs
    with pytest.raises(ToolError) as info:
        tools.run("lookup_order", {"order_id": hostile})
    assert info.value.code == "invalid_arguments"
    # free text fields are bound parameters: stored and read back as written
    ticket = _run(tools, "open_ticket", {"subject": hostile, "body": hostile * 2}, key=hostile)
    assert ticket.ok
    with store.sessions() as session:
        row = session.scalars(select(Ticket).where(Ticket.subject == hostile)).one()
        assert row.body == hostile * 2 and row.customer_id == a
    address = f"{hostile} 12 Main St"
    for oid in own:
        try:
            args = {"order_id": oid, "new_address": address}
            result = _run(tools, "change_address", args, key="x")
        except ToolError:
            continue
        if result.ok:
            with store.sessions() as session:
                assert session.get(Order, oid).shipping_address == address
            break
    # handoff reason, context and note, thread and customer ids
    store.record_handoff(hostile, 1, hostile, hostile, {"message": hostile, "history": [hostile]})
    (waiting,) = [h for h in store.handoffs() if h["thread_id"] == hostile]
    assert waiting["reason"] == hostile and waiting["context"]["message"] == hostile
    store.resolve_handoff(hostile, 1, "approved", hostile)
    (done,) = [h for h in store.handoffs("approved") if h["thread_id"] == hostile]
    assert done["note"] == hostile
    # every table is still there, and only the rows written above were added
    after = _table_counts(store)
    assert set(after) == set(counts)
    assert all(after[name] >= counts[name] for name in counts)
    assert after.get("cs_orders") == counts.get("cs_orders")


@pytest.mark.parametrize("hostile", INJECTIONS)
def test_injection_through_request_fields_reaches_telemetry_verbatim(
    tmp_path: Path, hostile: str
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    request = Request(
        text=hostile,
        channel=hostile[:64],
        metadata={hostile: hostile, "source": hostile},
        thread_id="t-1",
    )
    classification = Classification(
        route=Route("customer_service"), confidence=0.5, scores={}, reason=hostile
    )
    store.start_request(request, classification, "customer_service")
    store.finish_request(request.id, "failed", error=hostile)
    other = Request(text="second")
    store.start_request(other, classification, "customer_service")
    store.finish_request(other.id, "succeeded")
    rows = {row.id: row for row in store.requests()}
    assert set(rows) == {request.id, other.id}  # nothing dropped, nothing extra
    assert rows[request.id].error == hostile and rows[request.id].status == "failed"
    assert rows[other.id].status == "succeeded"
    store.close()
