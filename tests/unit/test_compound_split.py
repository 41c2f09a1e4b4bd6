"""tester4 finding 9 (issue 46 item 7 kind): every part of a compound request is found, in
English, Simplified and Traditional Chinese, with or without punctuation before the joining
word, in either order, and with three parts; a message that only mentions another order or
a second thing inside one ask stays one part. Then the dispatcher (real workflows,
ScriptedModel as the model's test double, real SQLite telemetry): a part asking for a sheet
with none attached is rejected, and the other part is handed to a person with its own record,
never dropped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.classifier import RuleClassifier
from orchestrator.testing import ScriptedModel
from workflows import default_workflows

CS, XL, MOD = "customer_service", "excel_report", "content_moderation"

#: (text, the routes it asks for): joiners 另外/还有/顺便/同时/以及/并且/再帮我/此外/另/還有/順便,
#: also/and also/plus/btw/one more thing; parts in either order; three parts.
COMPOUNDS = [
    ("我的包裹在哪？另外帮我总结一下这个表格", {CS, XL}),
    ("我的包裹在哪 另外帮我总结一下这个表格", {CS, XL}),
    ("我的包裹在哪此外帮我总结一下这个表格", {CS, XL}),
    ("帮我总结一下这个表格，还有我的包裹到哪了", {CS, XL}),
    ("帮我总结这个表格并且我的包裹在哪", {CS, XL}),
    ("我的快递怎么还没到？顺便把这个表格汇总一下", {CS, XL}),
    ("我的包裹在哪 顺便总结这个表格", {CS, XL}),
    ("订单ORD-100076什么时候发货，同时帮我分析这份报表", {CS, XL}),
    ("请汇总附件里的销售表格，以及帮我查一下我的订单状态", {CS, XL}),
    ("我想退款，并且帮我做一个表格的总结", {CS, XL}),
    ("我的包裹在哪里？再帮我总结这个表格", {CS, XL}),
    ("我的退款到账了吗。此外，请总结这个电子表格", {CS, XL}),
    ("我的包裹在哪？另帮我总结一下这个表格", {CS, XL}),
    ("我的快件到哪了？另外帮我汇总这个表格", {CS, XL}),
    ("我的包裹在哪？還有幫我總結一下這個表格", {CS, XL}),
    ("我的包裹在哪裡？順便幫我匯總這份表格", {CS, XL}),
    ("幫我分析這個報表，另外我的訂單什麼時候到", {CS, XL}),
    ("總結這個表格，此外我的包裹在哪裡", {CS, XL}),
    ("我的包裹在哪？另外帮我总结一下这个表格，还有请审核这条评论：你们都是骗子", {CS, XL, MOD}),
    ("where is my parcel? also summarise this spreadsheet", {CS, XL}),
    ("where is my parcel also summarise this spreadsheet", {CS, XL}),
    ("summarise this spreadsheet, and also where is my parcel?", {CS, XL}),
    ("where is my parcel plus summarise the attached sheet", {CS, XL}),
    ("Summarize the attached sales sheet. btw where is my order?", {CS, XL}),
    ("where is my parcel btw can you summarise this spreadsheet", {CS, XL}),
    ("where is my package? one more thing, make a report from this spreadsheet", {CS, XL}),
    ("summarise this spreadsheet one more thing where is my parcel", {CS, XL}),
    ("refund order 5512 and also analyse this excel file", {CS, XL}),
    (
        "track my parcel, also summarise this spreadsheet, and also moderate this comment: "
        "you are idiots",
        {CS, XL, MOD},
    ),
]

#: One request each: another order, a second thing inside one ask, one route twice.
SINGLE = [
    ("另外一个订单还没到", CS),
    ("我还有一个订单没收到", CS),
    ("同时下了两个订单，都没到", CS),
    ("where is my order? also the refund for it", CS),
    ("I want to cancel my order and also get the refund", CS),
    ("summarise this spreadsheet and also chart the totals", XL),
    ("帮我总结一下这个表格", XL),
    ("我的包裹在哪？", CS),
    ("我的包裹在哪裡？", CS),
]


@pytest.fixture(scope="module")
def clf() -> RuleClassifier:
    return RuleClassifier()


@pytest.mark.parametrize(("text", "want"), COMPOUNDS)
def test_every_part_of_a_compound_request_is_found(
    clf: RuleClassifier, text: str, want: set[str]
) -> None:
    c = clf.classify(Request(text=text))
    assert {str(c.route), *map(str, c.secondary_routes)} == want, c.reason


@pytest.mark.parametrize(("text", "route"), SINGLE)
def test_one_request_stays_one_part(clf: RuleClassifier, text: str, route: str) -> None:
    c = clf.classify(Request(text=text))
    assert (str(c.route), c.secondary_routes) == (route, ()), c.reason


@pytest.mark.parametrize(
    "text", ["我的包裹在哪？另外帮我总结一下这个表格", "我的包裹在哪裡？順便幫我匯總這份表格"]
)
async def test_the_part_not_run_is_handed_on_when_the_sheet_is_missing(
    tmp_path: Path, text: str
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    orch = Orchestrator(ScriptedModel(replies=["ok"]), store, default_workflows())
    request = Request(text=text)
    outcome = await orch.handle(request)
    asked = {outcome.classification.route, *outcome.classification.secondary_routes}
    assert asked == {CS, XL}
    ran = outcome.classification.route
    assert [h.route for h in outcome.handed_on] == list(asked - {ran})
    part = outcome.handed_on[0]
    rows = {r.id: r for r in store.requests()}
    assert rows[part.request_id].status == "needs_human"
    assert f"handed to a person as request {part.request_id}" in outcome.headline
    store.close()
