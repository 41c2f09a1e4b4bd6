"""A lightweight rule classifier: regex and fuzzy keyword signals, English and Chinese.

Each :class:`Rule` that fires adds evidence for one route. A route's score is the noisy-OR of
the weights of its fired rules, ``1 - prod(1 - w)``, so independent weak signals add up but
never pass 1. The best route wins when its score reaches ``min_score`` and beats the runner-up
by ``ambiguity_margin``; otherwise the request goes to :attr:`Route.FALLBACK` and the result
says why.

Confidence (first version): the winning route's noisy-OR score, or ``1 - best score`` for a
fallback. It is a monotone evidence score, **not yet calibrated** against labelled data.

Text is normalised with NFKC (full-width to half-width) and lower-cased. Chinese has no word
boundaries, so Chinese keywords match as substrings (character level); English keywords of
five letters or more also match with rapidfuzz ``partial_ratio`` so that typos still count.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz

from orchestrator.request import Request
from orchestrator.routes import Route

_CJK = re.compile(r"[\u3400-\u9fff]")


class Signal(BaseModel):
    """One rule that fired: its id, the route it supports, its weight and the matched span.

    ``span`` is ``(start, end)`` character offsets into the normalised text, or None for
    attachment rules.
    """

    model_config = ConfigDict(frozen=True)

    rule_id: str
    route: Route
    weight: float
    matched: str
    span: tuple[int, int] | None = None


class Rule(BaseModel):
    """Evidence for a route.

    Attributes:
        id: Stable rule id, shown in signals and telemetry.
        route: The route it supports.
        kind: ``regex`` (``pattern``), ``keywords`` (any of ``keywords``), or ``attachment``
            (an attachment whose extension is in ``keywords``).
        weight: Evidence strength in (0, 1).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    route: Route
    kind: Literal["regex", "keywords", "attachment"]
    weight: float = Field(gt=0, lt=1)
    pattern: str | None = None
    keywords: tuple[str, ...] = ()

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern or "(?!)", re.IGNORECASE)

    def match(self, text: str, request: Request) -> Signal | None:
        """The signal this rule gives for normalised ``text``, or None."""
        if self.kind == "attachment":
            for attachment in request.attachments:
                if attachment.extension in self.keywords:
                    return Signal(
                        rule_id=self.id,
                        route=self.route,
                        weight=self.weight,
                        matched=attachment.filename,
                    )
            return None
        if self.kind == "regex":
            found = self._regex.search(text)
            if found:
                return Signal(
                    rule_id=self.id,
                    route=self.route,
                    weight=self.weight,
                    matched=found.group(0),
                    span=found.span(),
                )
            return None
        for keyword in self.keywords:
            start = text.find(keyword)
            if start >= 0 and (_CJK.match(keyword) or _word_bounded(text, start, len(keyword))):
                return Signal(
                    rule_id=self.id,
                    route=self.route,
                    weight=self.weight,
                    matched=keyword,
                    span=(start, start + len(keyword)),
                )
        for keyword in self.keywords:
            if len(keyword) >= 5 and not _CJK.search(keyword):
                hit = fuzz.partial_ratio_alignment(keyword, text, score_cutoff=88)
                if hit is not None:
                    span = (hit.dest_start, hit.dest_end)
                    return Signal(
                        rule_id=self.id,
                        route=self.route,
                        weight=self.weight * hit.score / 100,
                        matched=text[span[0] : span[1]],
                        span=span,
                    )
        return None


def _word_bounded(text: str, start: int, length: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[start + length] if start + length < len(text) else " "
    return not (before.isalnum() or after.isalnum())


class Classification(BaseModel):
    """The classifier's decision for one request.

    Attributes:
        route: The chosen route (``fallback`` when unsure).
        confidence: In [0, 1]; see the module docstring for its meaning.
        scores: Noisy-OR score of every non-fallback route, highest first.
        signals: Every rule that fired, with its matched span.
        reason: Why the route was chosen, in words.
    """

    model_config = ConfigDict(frozen=True)

    route: Route
    confidence: float = Field(ge=0, le=1)
    scores: dict[Route, float]
    signals: tuple[Signal, ...] = ()
    reason: str

    @property
    def runner_up(self) -> tuple[Route, float] | None:
        """The second-best route and its score."""
        ranked = list(self.scores.items())
        return ranked[1] if len(ranked) > 1 else None


def _kw(rule_id: str, route: Route, weight: float, *words: str) -> Rule:
    return Rule(id=rule_id, route=route, kind="keywords", weight=weight, keywords=words)


def _rx(rule_id: str, route: Route, weight: float, pattern: str) -> Rule:
    return Rule(id=rule_id, route=route, kind="regex", weight=weight, pattern=pattern)


CS, MOD, XL = Route.CUSTOMER_SERVICE, Route.CONTENT_MODERATION, Route.EXCEL_REPORT

#: The first rule set. A later version loads rules from a validated data file.
DEFAULT_RULES: tuple[Rule, ...] = (
    _kw(
        "cs.commerce.en",
        CS,
        0.6,
        "order",
        "orders",
        "refund",
        "refunds",
        "delivery",
        "deliver",
        "delivered",
        "shipping",
        "shipment",
        "package",
        "parcel",
        "purchase",
        "invoice",
        "invoices",
        "receipt",
        "subscription",
        "newsletter",
        "cancel",
        "cancellation",
        "return",
        "exchange",
        "warranty",
        "tracking",
        "track",
    ),
    _kw(
        "cs.account.en",
        CS,
        0.55,
        "account",
        "password",
        "log in",
        "login",
        "sign up",
        "register",
        "registration",
        "profile",
        "username",
        "verify",
        "verification",
        "identity",
        "passcode",
        "pin",
    ),
    _kw(
        "cs.payment.en",
        CS,
        0.55,
        "payment",
        "pay",
        "paid",
        "charge",
        "charged",
        "fee",
        "fees",
        "bill",
        "billing",
        "card",
        "credit card",
        "debit",
        "transfer",
        "top up",
        "top-up",
        "topup",
        "balance",
        "withdraw",
        "withdrawal",
        "atm",
        "cash",
        "deposit",
        "exchange rate",
        "currency",
        "transaction",
        "statement",
        "money",
        "funds",
        "bank",
    ),
    _kw(
        "cs.contact.en",
        CS,
        0.5,
        "customer service",
        "customer support",
        "human agent",
        "agent",
        "representative",
        "complaint",
        "complain",
        "speak to",
        "talk to",
    ),
    _rx(
        "cs.ask.en",
        CS,
        0.25,
        r"\b(how (do|can|long)|can i|can you|i (need|want|would like)"
        r"|help me|where is my|why (was|is|did)|i('ve| have) (been|not))\b",
    ),
    _kw(
        "cs.finance.zh",
        CS,
        0.6,
        "花呗",
        "借呗",
        "支付宝",
        "还款",
        "付款",
        "支付",
        "额度",
        "逾期",
        "利息",
        "分期",
        "银行卡",
        "到账",
        "扣款",
        "充值",
        "余额",
        "信用",
        "提现",
        "转账",
    ),
    _kw(
        "cs.commerce.zh",
        CS,
        0.55,
        "订单",
        "退款",
        "退货",
        "外卖",
        "配送",
        "送餐",
        "送达",
        "骑手",
        "商家",
        "快递",
        "发货",
        "客服",
        "投诉",
        "优惠",
        "红包",
        "账户",
        "账号",
        "密码",
        "送货",
        "小哥",
        "餐",
    ),
    _kw(
        "cs.feedback.zh",
        CS,
        0.35,
        "味道",
        "好吃",
        "难吃",
        "速度",
        "服务",
        "态度",
        "太慢",
        "凉了",
        "分量",
        "包装",
        "下单",
    ),
    _rx("cs.ask.zh", CS, 0.25, r"(请问|怎么|为什么|如何|可以|能不能|多久|什么时候)"),
    _rx(
        "mod.ask.en",
        MOD,
        0.75,
        r"\b(moderat\w*|review (this|the|my) (post|comment|tweet|message|text|content)"
        r"|is (this|it) (ok|okay|appropriate|allowed|safe)( to post)?"
        r"|check (this|the|my) (post|comment|tweet)|flag (this|it))\b",
    ),
    _kw(
        "mod.harm.en",
        MOD,
        0.45,
        "offensive",
        "toxic",
        "hate speech",
        "harassment",
        "abusive",
        "nsfw",
        "spam",
        "slur",
    ),
    _kw(
        "mod.ask.zh",
        MOD,
        0.75,
        "审核",
        "违规",
        "敏感词",
        "合规",
        "违禁",
        "举报",
        "涉黄",
        "涉政",
        "文案",
        "帖子",
    ),
    Rule(
        id="xl.attachment",
        route=XL,
        kind="attachment",
        weight=0.95,
        keywords=("xlsx", "xls", "xlsm", "csv"),
    ),
    _kw(
        "xl.file.en",
        XL,
        0.7,
        "spreadsheet",
        "excel",
        "xlsx",
        "csv",
        "workbook",
        "worksheet",
        "pivot",
    ),
    _kw(
        "xl.report.en",
        XL,
        0.35,
        "report",
        "summarise",
        "summarize",
        "summary",
        "dashboard",
        "chart",
        "quarterly",
    ),
    _kw("xl.file.zh", XL, 0.7, "表格", "报表", "工作簿", "电子表"),
    _kw("xl.report.zh", XL, 0.35, "报告", "汇总", "统计", "图表"),
)


class RuleClassifier:
    """Picks a route for a request from regex and keyword rules.

    Args:
        rules: The rule set; :data:`DEFAULT_RULES` when None.
        min_score: A route needs at least this score to be chosen.
        ambiguity_margin: The winner must beat the runner-up by this much.

    Example:
        >>> from orchestrator import Request, RuleClassifier
        >>> RuleClassifier().classify(Request(text="Where is my refund?")).route
        <Route.CUSTOMER_SERVICE: 'customer_service'>
    """

    def __init__(
        self,
        rules: Sequence[Rule] | None = None,
        *,
        min_score: float = 0.4,
        ambiguity_margin: float = 0.1,
    ) -> None:
        self.rules = tuple(rules if rules is not None else DEFAULT_RULES)
        self.min_score = min_score
        self.ambiguity_margin = ambiguity_margin

    @staticmethod
    def normalise(text: str) -> str:
        """NFKC (full-width to half-width) and lower case."""
        return unicodedata.normalize("NFKC", text).lower()

    def classify(self, request: Request) -> Classification:
        """Route one request; never raises for a valid :class:`Request`."""
        text = self.normalise(request.text)
        signals = [s for rule in self.rules if (s := rule.match(text, request)) is not None]
        miss = {route: 1.0 for route in Route if route is not Route.FALLBACK}
        for signal in signals:
            miss[signal.route] *= 1.0 - signal.weight
        scores = dict(
            sorted(
                ((r, round(1.0 - m, 4)) for r, m in miss.items()),
                key=lambda item: item[1],
                reverse=True,
            )
        )
        (best, best_score), (second, second_score) = list(scores.items())[:2]
        if best_score < self.min_score:
            return Classification(
                route=Route.FALLBACK,
                confidence=round(1.0 - best_score, 4),
                scores=scores,
                signals=tuple(signals),
                reason=f"no route reached {self.min_score} (best {best} at {best_score})",
            )
        if best_score - second_score < self.ambiguity_margin:
            return Classification(
                route=Route.FALLBACK,
                confidence=round(1.0 - best_score, 4),
                scores=scores,
                signals=tuple(signals),
                reason=f"ambiguous: {best} {best_score} vs {second} {second_score}",
            )
        return Classification(
            route=best,
            confidence=best_score,
            scores=scores,
            signals=tuple(signals),
            reason=f"{best} scored {best_score} (runner-up {second} {second_score})",
        )
