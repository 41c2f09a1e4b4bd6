"""Training examples for the workflow calls beyond triage and risk (issue 20, second run).

The first checkpoint was trained on replies that always had tool facts, so in the main job
(``orchestrator run``: no order store, so no tool ran and the reply prompt offers the
placeholders ``none``) it still wrote ``{ticket_id}``, which the fact guard removed: "ticket .".
This module builds the other calls the workflows send, each from the skill's own prompt code:

==============  =========================================  ====================================
task            prompt (skill, as the workflow calls it)   target (code)
==============  =========================================  ====================================
reply           ``stream_reply`` after a real tool ran on  a template per tool outcome that
                a seeded order store (every tool, refusals  names facts only through the
                and missing orders included)               placeholders offered
reply_plain     ``stream_reply`` with no tool result       a template per issue type, with no
                (placeholders ``none``: the main job,      placeholder and no figure
                a turn with nothing to look up)
draft           ``draft_reply`` (the classic skill)        the same no-figure templates
tool            ``request_tool_call`` (``select_tool``)     the arguments JSON: the order id the
                                                           message names (and a new address)
interpret       ``interpret_data`` on the Excel workflow's  findings JSON citing the figure ids
                encoding of a generated workbook
report          ``write_report`` on the workflow's facts    title / summary / sections citing
                (findings + figure lines)                  ``{Fn}``, never a number
==============  =========================================  ====================================

**Where the values come from.** Tool facts are what the real customer-service tools return on
an order store seeded with faker (:meth:`OrderStore.seed`, a fixed ``as_of`` and a fixed clock,
so the same seed gives the same facts). Workbooks are CSV tables of faker values (names,
dates, places) read, analysed and encoded by the Excel workflow's own code. Customer messages
are tune-split utterances only (the caller passes them in).
"""

from __future__ import annotations

import csv
import json
import random
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from faker import Faker
from sqlalchemy import select

from skills.interpret_data import MAX_STATEMENT_CHARS
from skills.interpret_data import SYSTEM as INTERPRET_SYSTEM
from skills.prompting import delimit
from skills.reply import PLACEHOLDER
from skills.reply import SYSTEM as DRAFT_SYSTEM
from skills.tool_call import SYSTEM as TOOL_SYSTEM
from skills.triage import IssueTriage
from skills.write_report import (
    MAX_BODY_CHARS,
    MAX_HEADING_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
)
from skills.write_report import SYSTEM as REPORT_SYSTEM
from workflows.customer_service.acting import refusal
from workflows.customer_service.policy import WriteAction, execute_write
from workflows.customer_service.signals import INTENT_TOOL, TRIAGE_INTENT, read_signals
from workflows.customer_service.store import OrderStore, ToolError
from workflows.customer_service.store.schema import Customer, Order
from workflows.customer_service.store.tools import OrderTools, ToolResult

#: The seeded store's reference day (fixed, so the facts do not depend on the build date).
AS_OF = datetime(2026, 11, 1, tzinfo=UTC)

# --------------------------------------------------------------------------- reply targets
#: Prose after a tool ran, per tool (``ok``) or outcome; ``{name}`` only where that fact exists.
REPLY_EN: dict[str, tuple[str, ...]] = {
    "lookup_order": (
        "Thank you for your patience. Your order {order_id} is {status}.",
        "I checked order {order_id}: it is {status} (total {total}). Let me know if anything "
        "else is unclear.",
    ),
    "track_shipment": (
        "Your order {order_id} is on its way with {carrier}; the tracking number is "
        "{tracking_number}.",
        "Sorry for the wait. Order {order_id} shipped on {shipped_on} and you can follow it with "
        "{tracking_number}.",
    ),
    "check_refund_eligibility": (
        "I am sorry about this. Order {order_id} can be refunded up to {refundable}, and I can "
        "start it for you.",
    ),
    "start_refund": (
        "I am sorry about this. Refund {refund_id} of {refund_amount} for order {order_id} is "
        "{refund_status}.",
        "Thank you for telling us. Your refund {refund_id} for order {order_id} is "
        "{refund_status}.",
    ),
    "cancel_order": (
        "Done: order {order_id} is now {status}.",
        "I understand. Order {order_id} is {status}, and nothing more will be charged.",
    ),
    "change_address": (
        "Done: order {order_id} will now ship to the new address. Thank you for letting us know.",
        "I updated order {order_id}; it will go to {shipping_address}.",
    ),
    "open_ticket": (
        "Thank you for reaching out. I opened ticket {ticket_id} and a colleague will follow up "
        "soon.",
    ),
    "not_found": (
        "I am sorry, I could not find order {order_id} on your account. Could you check the "
        "order number?",
    ),
    "refused": (
        "I am sorry, I cannot do that for order {order_id}. A colleague can look at other "
        "options with you.",
    ),
    "no_shipment": ("Order {order_id} has not shipped yet; you can ask me again at any time.",),
}
REPLY_ZH: dict[str, tuple[str, ...]] = {
    "lookup_order": (
        "感谢您的耐心等待，您的订单 {order_id} 目前{status}。",
        "已为您查询订单 {order_id}：状态为{status}，金额 {total}。",
    ),
    "track_shipment": (
        "您的订单 {order_id} 已由 {carrier} 配送，运单号 {tracking_number}。",
        "抱歉让您久等了，订单 {order_id} 已于 {shipped_on} 发出，运单号 {tracking_number}。",
    ),
    "check_refund_eligibility": (
        "非常抱歉给您带来不便，订单 {order_id} 最多可退款 {refundable}，我们可以为您办理。",
    ),
    "start_refund": (
        "非常抱歉给您带来不便，订单 {order_id} 的退款 {refund_id} 已提交，状态：{refund_status}。",
        "感谢您的反馈，退款 {refund_id}（{refund_amount}）已提交。",
    ),
    "cancel_order": (
        "已为您处理，订单 {order_id} 当前状态：{status}。",
        "明白，订单 {order_id} 已{status}，不会再产生费用。",
    ),
    "change_address": (
        "已为您修改订单 {order_id} 的收货地址，感谢您的告知。",
        "订单 {order_id} 将寄往新地址：{shipping_address}。",
    ),
    "open_ticket": ("感谢您的反馈，已为您创建工单 {ticket_id}，同事会尽快联系您。",),
    "not_found": ("抱歉，您的账户中没有找到订单 {order_id}，请核对订单号。",),
    "refused": ("抱歉，订单 {order_id} 暂时无法办理，同事可以和您一起看看其他办法。",),
    "no_shipment": ("订单 {order_id} 尚未发货，您可以随时再来查询。",),
}
#: Prose when no tool ran (placeholders ``none``): per issue type, no figure, no placeholder.
PLAIN_EN: dict[str, tuple[str, ...]] = {
    "refund": (
        "I am sorry about this. A colleague will look at your refund and get back to you soon.",
        "Thank you for telling us. We will check the refund for you and reply by email.",
    ),
    "cancellation": (
        "I understand you want to cancel. A colleague will take care of it and confirm by email.",
    ),
    "order_status": (
        "Thank you for your patience. We will check your order and update you soon.",
        "I will look into your order and let you know where it stands.",
    ),
    "delivery": (
        "Sorry for the wait. We will check where your parcel is and update you soon.",
        "I understand the delivery matters. A colleague will follow it up with the carrier.",
    ),
    "billing": (
        "Thank you for reaching out. A colleague will review the charge and get back to you.",
        "I am sorry for the confusion. We will check your bill and explain it to you.",
    ),
    "payment": (
        "Thank you for your message. We will look into the payment and reply soon.",
        "I am sorry the payment gave you trouble. A colleague will check it with you.",
    ),
    "card": (
        "I understand this is urgent. A colleague will help you with your card right away.",
        "Thank you for telling us. We will look into your card and get back to you soon.",
    ),
    "account_access": (
        "I am sorry you cannot get in. A colleague will help you regain access to your account.",
        "Thank you for reaching out. We will help you with your account soon.",
    ),
    "complaint": (
        "I am very sorry about your experience. A colleague will look into it and contact you.",
        "Thank you for telling us, and sorry for the trouble. We will make this right.",
    ),
    "product_feedback": (
        "Thank you for your feedback.",
        "Thank you for taking the time to tell us. Your feedback helps us improve.",
    ),
    "other": (
        "Thank you for your message. A colleague will look into it and get back to you.",
        "Thank you for reaching out. We will reply to you as soon as we can.",
    ),
}
PLAIN_ZH: dict[str, tuple[str, ...]] = {
    "refund": ("非常抱歉给您带来不便，同事会尽快核实您的退款并联系您。",),
    "cancellation": ("明白，您想取消订单，同事会为您处理并发送确认。",),
    "order_status": ("感谢您的耐心等待，我们会查询您的订单并尽快告诉您。",),
    "delivery": ("抱歉让您久等了，我们会跟进物流情况并尽快回复您。",),
    "billing": ("感谢您的反馈，同事会核实这笔费用并给您答复。",),
    "payment": ("感谢您的留言，我们会核实付款问题并尽快回复。",),
    "card": ("明白这件事很紧急，同事会马上协助您处理卡片问题。",),
    "account_access": ("抱歉给您带来不便，同事会协助您恢复账户访问。",),
    "complaint": (
        "非常抱歉给您带来不好的体验，同事会尽快跟进并联系您。",
        "感谢您的反馈，给您添麻烦了，我们会认真处理。",
    ),
    "product_feedback": (
        "感谢您的评价。",
        "感谢您的反馈，这对我们很有帮助。",
    ),
    "other": ("感谢您的留言，同事会尽快为您处理并回复。", "感谢您的咨询，我们会尽快回复您。"),
}


def plain_reply(issue_type: str, lang: str, rng: random.Random) -> str:
    """A reply with no placeholder and no figure for ``issue_type`` in ``lang``."""
    table = PLAIN_ZH if lang == "zh" else PLAIN_EN
    return rng.choice(table.get(issue_type, table["other"]))


def fact_reply(outcome: str, facts: dict[str, str], lang: str, rng: random.Random) -> str:
    """A reply for ``outcome`` naming only placeholders present in ``facts`` (templates that
    need a missing one are skipped; the plain ``other`` template when none fits)."""
    table = REPLY_ZH if lang == "zh" else REPLY_EN
    fits = [
        t
        for t in table.get(outcome, ())
        if all(facts.get(m.group(1)) for m in PLACEHOLDER.finditer(t))
    ]
    return rng.choice(fits) if fits else plain_reply("other", lang, rng)


# --------------------------------------------------------------------------- tool world


class ToolWorld:
    """A faker-seeded order store (in memory) whose real tools give the facts of replies.

    Args:
        seed: Seed of the store's data and of every draw.
        customers: Customers to seed (each has a few orders).
    """

    def __init__(self, seed: int = 0, customers: int = 300) -> None:
        self.store = OrderStore("sqlite://")
        self.store.seed(customers, seed=seed, as_of=AS_OF)
        self._now = AS_OF + timedelta(hours=12)
        with self.store.sessions() as session:
            rows = session.execute(select(Customer.id, Customer.locale)).all()
            orders = session.execute(select(Order.id, Order.customer_id)).all()
        self.customers = {
            "en": sorted(c for c, loc in rows if not loc.startswith("zh")),
            "zh": sorted(c for c, loc in rows if loc.startswith("zh")),
        }
        self.orders: dict[str, list[str]] = {}
        for order_id, customer in orders:
            self.orders.setdefault(customer, []).append(order_id)
        self._all_orders = sorted(
            o for _, o in [(c, o) for c, os in self.orders.items() for o in os]
        )
        self._faker = {"en": Faker("en_US"), "zh": Faker("zh_CN")}
        for f in self._faker.values():
            f.seed_instance(seed)
        self._n = 0

    def tools(self, customer: str) -> OrderTools:
        return OrderTools(
            self.store.sessions, customer, policy=self.store.policy, now=lambda: self._now
        )

    def customer(self, lang: str, rng: random.Random) -> str:
        pool = self.customers[lang] or self.customers["en"] or self.customers["zh"]
        return rng.choice(pool)

    def address(self, lang: str) -> str:
        return self._faker[lang].address().replace("\n", ", ")[:110]

    def run(
        self, tool: str, lang: str, rng: random.Random
    ) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
        """Run ``tool`` as the workflow would for a customer of ``lang``: ``(outcome, tool
        results as the workflow stores them, arguments)``. One call in 8 names an order of
        another customer (``not_found``); a refund over the automatic limit is decided by a
        person (approved or declined), as after the workflow's handoff."""
        self._n += 1
        customer = self.customer(lang, rng)
        tools = self.tools(customer)
        own = self.orders.get(customer) or [rng.choice(self._all_orders)]
        order_id = rng.choice(own) if rng.random() > 0.125 else rng.choice(self._all_orders)
        args: dict[str, Any] = {"order_id": order_id}
        if tool == "change_address":
            args["new_address"] = self.address(lang)
        key = f"train:{self._n}"
        try:
            result = _as_the_workflow_would(tools, tool, args, key)
        except ToolError as exc:
            result = self._refused(tools, tool, args, key, exc, rng)
        return self._outcome(tool, result), [result.model_dump()], args

    def run_usually_ok(
        self, tool: str, lang: str, rng: random.Random, tries: int = 4
    ) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
        """:meth:`run`, retried on other orders while it was refused (each retry taken with
        probability 0.7), so successful outcomes are not swamped by old orders' refusals."""
        outcome, results, args = self.run(tool, lang, rng)
        for _ in range(tries - 1):
            if outcome == tool or rng.random() > 0.7:
                break
            outcome, results, args = self.run(tool, lang, rng)
        return outcome, results, args

    @staticmethod
    def _refused(tools, tool, args, key, exc, rng) -> ToolResult:
        """The workflow's result for a refused call (a refund over the limit goes to a
        person, who approves or declines it)."""
        order_id = args["order_id"]
        if exc.code == "needs_approval" and rng.random() < 0.5:
            return _as_the_workflow_would(tools, tool, args, key, approved_by="person:trainer")
        if exc.code == "needs_approval":
            return ToolResult(
                tool=tool,
                ok=False,
                error_code="policy",
                facts={"order_id": order_id, "reason": "declined after review"},
            )
        return refusal(tool, args, exc)

    @staticmethod
    def _outcome(tool: str, result: ToolResult) -> str:
        """``tool`` when it succeeded, else not_found / no_shipment / refused."""
        if result.ok:
            return tool
        if result.error_code == "not_found":
            return "not_found"
        if tool == "track_shipment" and "status" in result.facts and "reason" not in result.facts:
            return "no_shipment"
        return "refused"


def tool_of(text: str, issue_type: str) -> str | None:
    """The tool the customer-service workflow's ``decide`` node picks for a message: the first
    non-``human`` intent word, else the triage's issue type; None when no tool fits."""
    intents = [i for i in read_signals(text).intents if i != "human"]
    intent = intents[0] if intents else TRIAGE_INTENT.get(issue_type)
    return INTENT_TOOL.get(intent or "")


def reply_messages(text: str, triage: IssueTriage, facts: dict[str, str]) -> tuple[dict, ...]:
    """The chat turns :func:`skills.reply.stream_reply` sends (its own constants)."""
    from skills.reply import STREAM_SYSTEM
    from skills.reply import _context as triage_context

    names = ", ".join("{" + name + "}" for name in sorted(facts)) or "none"
    system = f"{STREAM_SYSTEM.replace('{placeholders}', names)}\n{triage_context(triage)}"
    return (
        {"role": "system", "content": system},
        {"role": "user", "content": delimit("message", text)},
    )


def draft_messages(text: str, triage: IssueTriage) -> tuple[dict, ...]:
    """The chat turns :func:`skills.reply.draft_reply` sends."""
    from skills.reply import _context as triage_context

    return (
        {"role": "system", "content": f"{DRAFT_SYSTEM}\n{triage_context(triage)}"},
        {"role": "user", "content": delimit("message", text)},
    )


def tool_messages(text: str) -> tuple[dict, ...]:
    """The chat turns :func:`skills.tool_call.request_tool_call` sends (the tools travel in
    the API's ``tools`` field, which ERNIE's chat template does not render)."""
    return (
        {"role": "system", "content": TOOL_SYSTEM},
        {"role": "user", "content": delimit("message", text)},
    )


_ORDER_LEADS = {
    "en": (
        "Order {id}: {text}",
        "{text} (order {id})",
        "{text} My order number is {id}.",
        "Re {id} - {text}",
    ),
    "zh": ("订单 {id}：{text}", "{text}（订单号 {id}）", "{text} 我的订单号是 {id}。"),
}
_ADDRESS_LEADS = {
    "en": (
        "Please ship order {id} to {address} instead.",
        "Can you change the address of {id}? New address: {address}",
        "I moved. Deliver it to {address}, order {id}.",
    ),
    "zh": ("请把订单 {id} 的地址改成 {address}。", "订单 {id} 麻烦改地址：{address}"),
}


def tool_call_text(
    text: str, tool: str, lang: str, world: ToolWorld, rng: random.Random
) -> tuple[str, dict[str, str]]:
    """A tune-split message with an order id written in (and, for ``change_address``, a new
    address from faker), and the arguments the call should carry."""
    order_id = rng.choice(world._all_orders)
    if tool == "change_address":
        address = world.address(lang)
        lead = rng.choice(_ADDRESS_LEADS[lang])
        return lead.format(id=order_id, address=address), {
            "order_id": order_id,
            "new_address": address,
        }
    lead = rng.choice(_ORDER_LEADS[lang])
    return lead.format(id=order_id, text=text), {"order_id": order_id}


# --------------------------------------------------------------------------- workbooks

#: Measure columns and the range of their values: English name, Chinese name (None: English
#: workbooks only), low, high.
_MEASURE_RANGES = (
    ("Sales", "销售额", 5, 900),
    ("Profit", "利润", -50, 300),
    ("Revenue", "收入", 50, 5000),
    ("Cost", "成本", 10, 700),
    ("Amount", "金额", 5, 2000),
    ("Refunds", None, 0, 200),
)
_MEASURES = {
    "en": tuple((en, low, high) for en, _, low, high in _MEASURE_RANGES),
    "zh": tuple((zh, low, high) for _, zh, low, high in _MEASURE_RANGES if zh is not None),
}
_COUNTS = {"en": ("Quantity", "Units", "Tickets"), "zh": ("数量", "件数")}
_GROUPS = {
    "en": (
        ("Region", ("West", "East", "North", "South", "Central")),
        ("Category", ("Furniture", "Technology", "Office Supplies", "Toys")),
        ("Channel", ("Online", "Retail", "Partner")),
        ("Segment", ("Consumer", "Corporate", "Home Office")),
    ),
    "zh": (
        ("地区", ("华东", "华南", "华北", "西南", "东北")),
        ("类别", ("家具", "电子产品", "办公用品")),
        ("渠道", ("线上", "门店", "经销商")),
    ),
}
_IDS = {"en": ("Order ID", "Invoice", "Ticket ID"), "zh": ("订单编号", "单号")}
_DATES = {"en": ("Order Date", "Date", "Ship Date"), "zh": ("下单日期", "日期")}
_PEOPLE = {"en": ("Customer", "Sales Rep", "Manager"), "zh": ("客户", "销售员")}


def _workbook_csv(path: Path, lang: str, rng: random.Random, faker: Faker) -> None:
    """A CSV sales-like table of faker values (ids, dates, people, groups, measures)."""
    measures = rng.sample(_MEASURES[lang], rng.randint(1, 3))
    groups = rng.sample(_GROUPS[lang], rng.randint(1, 2))
    columns: list[tuple[str, Any]] = [(rng.choice(_IDS[lang]), "id")]
    if rng.random() < 0.8:
        columns.append((rng.choice(_DATES[lang]), "date"))
    columns += [(name, ("group", members)) for name, members in groups]
    if rng.random() < 0.6:
        columns.append((rng.choice(_PEOPLE[lang]), "person"))
    columns += [(name, ("measure", low, high)) for name, low, high in measures]
    if rng.random() < 0.5:
        columns.append((rng.choice(_COUNTS[lang]), "count"))
    rows = rng.randint(12, 400)
    start = AS_OF - timedelta(days=rng.randint(60, 900))
    span = (AS_OF - start).days
    weights = {name: [rng.random() + 0.2 for _ in members] for name, members in groups}
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([name for name, _ in columns])
        for i in range(rows):
            out: list[object] = []
            for name, kind in columns:
                if kind == "id":
                    out.append(
                        f"{name[:2].upper()}{10000 + i}" if lang == "en" else f"D{10000 + i}"
                    )
                elif kind == "date":
                    out.append((start + timedelta(days=rng.randint(0, span))).date().isoformat())
                elif kind == "person":
                    out.append(faker.name())
                elif kind == "count":
                    out.append(rng.randint(1, 12))
                elif kind[0] == "group":
                    out.append(rng.choices(kind[1], weights=weights[name])[0])
                else:
                    out.append(round(rng.uniform(kind[1], kind[2]), 2))
            writer.writerow(out)


def _plain(label: str) -> str:
    return label.replace("`", "")


def _findings(figures: dict[str, Any], lang: str, rng: random.Random) -> list[dict[str, Any]]:
    """Up to three findings over the computed figures, each citing the ids it rests on."""
    by_op: dict[str, list[Any]] = {}
    for fig in figures.values():
        by_op.setdefault(fig.provenance.operation, []).append(fig)
    zh = lang == "zh"
    found: list[dict[str, Any]] = []
    sums = [f for f in by_op.get("sum", []) if not f.provenance.filter]
    rows = by_op.get("count_rows", [])
    if sums:
        s = sums[0]
        col = s.column or _plain(s.label)
        text = f"{col}合计为 {{{s.id}}}。" if zh else f"Total {col} is {{{s.id}}}."
        cites = [s.id]
        if rows:
            text = (
                f"{col}合计为 {{{s.id}}}，共 {{{rows[0].id}}} 行数据。"
                if zh
                else f"Total {col} is {{{s.id}}} over {{{rows[0].id}}} rows."
            )
            cites.append(rows[0].id)
        found.append({"statement": text, "figure_ids": cites})
    shares = [f for f in figures.values() if _plain(f.label).startswith("share of")]
    if shares:
        top = max(shares, key=lambda f: f.value or 0)
        member = _plain(top.label).split(" = ", 1)[-1].split(" in ", 1)[0].strip()
        text = (
            f"{member} 占比最高，为 {{{top.id}}}。"
            if zh
            else f"{member} has the largest share, at {{{top.id}}}."
        )
        found.append({"statement": text, "figure_ids": [top.id]})
    lows, highs = by_op.get("min", []), by_op.get("max", [])
    if lows and highs and lows[0].column == highs[0].column:
        col = lows[0].column or ""
        text = (
            f"{col}介于 {{{lows[0].id}}} 和 {{{highs[0].id}}} 之间。"
            if zh
            else f"{col} ranges from {{{lows[0].id}}} to {{{highs[0].id}}}."
        )
        found.append({"statement": text, "figure_ids": [lows[0].id, highs[0].id]})
    elif by_op.get("mean"):
        m = by_op["mean"][0]
        text = (
            f"{m.column or ''}平均为 {{{m.id}}}。"
            if zh
            else f"The mean {m.column or ''} is {{{m.id}}}."
        )
        found.append({"statement": text, "figure_ids": [m.id]})
    rng.shuffle(found) if rng.random() < 0.2 else None
    return [
        {"statement": f["statement"][:MAX_STATEMENT_CHARS], "figure_ids": f["figure_ids"]}
        for f in found[:3]
    ]


def _report(
    interpretation: Any, figures: dict[str, Any], ids: Sequence[str], lang: str, table: str
) -> dict[str, Any]:
    """Title, summary and two sections citing the figures of ``ids`` (the write prompt's)."""
    zh = lang == "zh"
    cited = [i for f in interpretation.findings for i in f.figure_ids if i in ids]
    first = cited[0] if cited else ids[0]
    col = figures[first].column or _plain(figures[first].label)
    title = (f"{table} {col}报告" if zh else f"{col} report: {table}")[:MAX_TITLE_CHARS]
    summary = f"{col}合计为 {{{first}}}。" if zh else f"{col} came to {{{first}}}."
    sections: list[dict[str, str]] = []
    for finding in interpretation.findings[:2]:
        heading = ("要点" if zh else "Key finding") if not sections else ("其他" if zh else "Also")
        sections.append(
            {"heading": heading[:MAX_HEADING_CHARS], "body": finding.statement[:MAX_BODY_CHARS]}
        )
    if not sections:
        sections.append(
            {
                "heading": "概览" if zh else "Overview",
                "body": (f"见 {{{first}}}。" if zh else f"See {{{first}}}."),
            }
        )
    return {"title": title, "summary": summary[:MAX_SUMMARY_CHARS], "sections": sections}


#: (lang, source, interpret turns, interpret target, report turns, report target)
_ExcelExample = tuple[Literal["en", "zh"], str, tuple[dict, ...], str, tuple[dict, ...], str]


def excel_examples(
    n: int,
    rng: random.Random,
    counter: Any,
    *,
    seed: int = 0,
    token_budget: int = 900,
    facts_budget: int = 600,
) -> list[_ExcelExample]:
    """``n`` generated workbooks through the Excel workflow's own read / analyse / encode /
    facts code: ``(lang, source, interpret turns, interpret target, report turns, report
    target)`` each. ``counter`` counts tokens as the workflow does (its tokenizer)."""
    from orchestrator.spreadsheet import read_workbook
    from skills.interpret_data import Finding, Interpretation
    from workflows.excel_report.analysis import analyse
    from workflows.excel_report.encoding import encode_workbook
    from workflows.excel_report.graph import _facts

    fakers = {"en": Faker("en_US"), "zh": Faker("zh_CN")}
    for f in fakers.values():
        f.seed_instance(seed)
    out: list[_ExcelExample] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            lang: Literal["en", "zh"] = "zh" if rng.random() < 0.3 else "en"
            name = rng.choice(("sales", "orders", "quarter", "report", "data", "export", "销售"))
            path = Path(tmp) / str(i) / f"{name}.csv"
            path.parent.mkdir()
            _workbook_csv(path, lang, rng, fakers[lang])
            workbook = read_workbook(path)
            analysis = analyse(workbook)
            encoding = encode_workbook(workbook, analysis, token_budget, counter)
            if not encoding.figure_ids:
                continue
            figures = {k: v for k, v in analysis.by_id().items() if k in encoding.figure_ids}
            findings = _findings(figures, lang, rng)
            interpret_turns = (
                {"role": "system", "content": INTERPRET_SYSTEM},
                {"role": "user", "content": delimit("data", encoding.text, len(encoding.text) + 1)},
            )
            interpretation = Interpretation(findings=[Finding(**f) for f in findings])
            facts, ids = _facts(analysis, interpretation, counter, facts_budget)
            if not ids:
                continue
            report_turns = (
                {"role": "system", "content": REPORT_SYSTEM},
                {"role": "user", "content": delimit("facts", facts, len(facts) + 1)},
            )
            report = _report(interpretation, analysis.by_id(), ids, lang, path.stem)
            out.append(
                (
                    lang,
                    f"generated:{path.name}",
                    interpret_turns,
                    _json({"findings": findings}),
                    report_turns,
                    _json(report),
                )
            )
    return out


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


#: The customer's ask of each write, as the workflow's write policy reads it.
_ASKS = {
    "start_refund": "Please refund {order_id}",
    "cancel_order": "Please cancel order {order_id}",
    "change_address": "Please change the address of {order_id} to {new_address}",
    "open_ticket": "Please open a ticket",
}


def _as_the_workflow_would(
    tools: OrderTools, tool: str, args: dict[str, Any], key: str, approved_by: str | None = None
) -> ToolResult:
    """Run ``tool`` as the workflow does: a read directly; a write through its write policy
    (:func:`~workflows.customer_service.policy.execute_write`), as asked and confirmed by the
    customer (a refund for the exact amount left, as its confirmation question states it).

    Raises:
        ToolError: The tool or the policy refused.
    """
    if tool not in _ASKS:
        return tools.run(tool, args)
    arguments = dict(args)
    if tool == "start_refund":
        left, _, _ = tools.refundable(str(args["order_id"]))
        arguments["amount_cents"] = left or 1  # not refundable: the store says why
    action = WriteAction(
        tool=tool,
        customer_id=tools.customer_id,
        arguments=arguments,
        key=key,
        ask=_ASKS[tool].format(**args),
        confirmation="yes",
        confirmed_by=tools.customer_id,
    )
    return execute_write(tools, action, approved_by=approved_by)
