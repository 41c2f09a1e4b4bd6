"""The customer-service order store: tables, deterministic seed data and the tools."""

from workflows.customer_service.store.schema import (
    Base,
    Customer,
    Handoff,
    Order,
    OrderLine,
    Refund,
    Shipment,
    Ticket,
    TrackingEvent,
)
from workflows.customer_service.store.seed import generate
from workflows.customer_service.store.store import OrderStore, today_utc
from workflows.customer_service.store.tools import (
    ORDER_ID_PATTERN,
    TOOL_ARGS,
    TOOL_DESCRIPTIONS,
    OrderTools,
    RefundPolicy,
    ToolArgumentsError,
    ToolError,
    ToolResult,
    idempotency_key,
    money,
)

__all__ = [
    "ORDER_ID_PATTERN",
    "TOOL_ARGS",
    "TOOL_DESCRIPTIONS",
    "Base",
    "Customer",
    "Handoff",
    "Order",
    "OrderLine",
    "OrderStore",
    "OrderTools",
    "Refund",
    "RefundPolicy",
    "Shipment",
    "Ticket",
    "ToolArgumentsError",
    "ToolError",
    "ToolResult",
    "TrackingEvent",
    "generate",
    "idempotency_key",
    "money",
    "today_utc",
]
