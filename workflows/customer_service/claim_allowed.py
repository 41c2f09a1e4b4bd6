"""The safe default of the claim checker (:mod:`workflows.customer_service.claims`): a model
sentence is shown only when every clause of it is *recognised* as a kind the model may say.
Anything else is dropped, however harmless it may look: this is an allow-list, not a list of
bad sentences (truth10: word lists of bad kinds leaked on variants).

A clause is recognised when, after this turn's facts are blanked out
(:func:`workflows.customer_service.claim_assertions.explained`: tool values and figures,
verified state words, the phrases of actions that ran), it is

* **a restated fact or a next step taken**: it holds a blanked fact of this turn (``~``), or
  a phrase of what we will do that carries no fact ("look into your order", ``^``);
* **courtesy**: a greeting, thanks, an apology, empathy, a sign-off;
* **a question back** (the last clause of a question) or **an offer, a request or a
  condition** ("I can…", "Would you like…", "Please send…", "If…", 如需…, 请…);

and each of its words is in a small vocabulary of service words (English), or it is covered
by one (Chinese, longest match first; Traditional is folded by OpenCC before). Words of this
turn's tool values count as known. Words of time, promise, guarantee, terms and rudeness are
kept out of the vocabulary on purpose: a clause that uses one must have it blanked as a tool
fact, or it is dropped.

Checked last (after the figure, state, kind and unbacked checks), so a dropped sentence keeps
the more precise reason when another check has one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from workflows.customer_service.claim_assertions import (
    EN_CLAUSE,
    EN_EMPATHY,
    EN_NO_FACT,
    ZH_CLAUSE,
    ZH_EMPATHY,
    ZH_NO_FACT,
)


def _en(*parts: str) -> re.Pattern[str]:
    """An English pattern (case folded) from its parts."""
    return re.compile("".join(parts), re.I)


# --- clause kinds ------------------------------------------------------------------------

_EN_COURTESY = _en(
    r"^\W*(?:hello|hi|hey|dear|good (?:morning|afternoon|evening|day)|greetings|welcome|",
    r"thanks?|thank you|many thanks|you(?:'re| are) (?:very |most )?welcome|no problem|",
    r"of course|certainly|absolutely|sure|understood|noted|okay|ok|great|apologies|",
    r"(?:kind|best|warm)(?:est)? regards|regards|best wishes|take care|have a (?:nice|good|",
    r"great|lovely|wonderful) \w+|happy to help|glad to help|with pleasure|",
    r"here (?:is|are)|regarding|concerning|as for|about your|good luck|bye|goodbye|feel free|",
    r"(?:i|we) (?:hope|am|'m|are|'re) (?:here|happy|glad|sorry))\b",
)
_ZH_COURTESY = re.compile(
    r"^\W*(?:(?:我|我们)?(?:只能|了解|知道)|如有|如需|如还有|如还需|关于|对于|您好|你好|亲爱的|尊敬的|亲|早上好|下午好|晚上好|欢迎|好的|收到|明白了|没问题|"
    r"当然|祝您|感谢|谢谢|多谢|不客气|很高兴|非常高兴|乐意|不好意思|抱歉|对不起|再见|"
    r"(?:我|我们)(?:很|非常)?(?:高兴|乐意))"
)
_ZH_QUESTION = re.compile(r"(?:[?？]|[吗呢][。！？?!]?)\s*$")

# --- the vocabularies ---------------------------------------------------------------------

_EN_WORDS = frozenset(
    re.findall(
        r"\S+",
        # function words
        "a an the this that these those it its it's i i'm i'd i'll i've me my we we're we'd "
        "we've we'll us our ours you you're you'd you've you'll your yours they they're them "
        "their there there's here here's what what's which who whom when where why how whether "
        "if is are was were be been being am do does did doing have has had having can could "
        "would should may might will shall let let's please kindly to of for and or but so in "
        "on at by with from about into onto over under through up out as than then not no yes "
        "any anything some something all each both other another more also just only still "
        "already again too very really truly sure once while after before until because since "
        "via per can't cannot couldn't don't doesn't didn't isn't aren't wasn't that's else "
        # courtesy and empathy
        "hello hi hey dear good morning afternoon evening day greetings welcome thank thanks "
        "thankful grateful sorry apologies apologise apologize apologising apologizing regret "
        "understand understanding understandable appreciate appreciated hope hear hearing know "
        "see happy glad pleased delighted pleasure certainly absolutely course okay ok great "
        "nice lovely wonderful kind best warm regards wishes care problem problems trouble "
        "troubles inconvenience inconvenienced frustrating frustrated frustration "
        "disappointing disappointed disappointment upset annoying worry worried concern "
        "concerns concerned patience patient time experience situation hassle stress stressful "
        "confusing confusion matter matters important completely totally fully deeply "
        "sincerely genuinely much many noted understood feel feeling "
        # help, questions, requests and next steps
        "help helping helped assist assisting assistance support look looking check checking "
        "find tell let share send sending provide confirm confirming confirmation reply "
        "replying respond answer answers ask asking question questions request requests like "
        "want wish need needs needed would love happy able further details detail information "
        "info more start starting continue proceed go ahead review reviewing follow following "
        "contact contacting reach reaching message messages write chat conversation right away "
        "make note use try click visit sign log reset colleague colleagues team agent person "
        "specialist someone human pass passing hand handing forward forwarding transfer "
        "escalate "
        # the order's words (statements of them need a blanked fact)
        "order orders order's number numbers id parcel package packages shipment shipments "
        "delivery deliveries item items product products purchase tracking track tracked "
        "carrier courier status refund refunds refunded refunding cancel cancelling canceling "
        "cancellation address addresses new delivery shipping total amount payment method "
        "original account card bank money back case ticket page link email e-mail receipt date "
        "dates placed shipped delivered transit way expected estimated arrive arriving arrival "
        "eligible eligibility approved declined processing cancelled canceled update updated "
        "change changed changing correct issue issues charge charged fee fees bill billing "
        "invoice password login return returns exchange today fix customer customers above "
        "below instead stands stand sign-in signed online again option options wrong possible "
        "contains contain includes include exist exists keep reference caused cause shows show "
        "showing seems seem prefer packaging box photo photos picture next now late feedback "
        "choosing choose store come comes such must settled apply coupon coupons checkout spam "
        "folder inbox appear appeared notice noticed receive received get getting got touch "
        "work working works describe explain explaining happen happened happening shopping "
        "shop luck enjoy take taking taken bye goodbye wait waiting waited lot gave give given",
    )
)

_ZH_WORDS = frozenset(
    re.findall(
        r"\S+",
        # function words and pronouns
        "您 我 我们 你 这 那 这个 那个 这些 它 的 了 是 在 和 与 及 或 或者 为 给 对 把 将 会 "
        "能 可 以 可以 能够 请问 问 您的 让 让您 让人 一步 进一步 目前 当前 现在 最多 可退 退 "
        "回 返回 原路 照片 图片 发给 发 查 查一下 看 看看 愿意 帮忙 无法 不能 未 没 已 已经 请 "
        "吗 呢 也 都 就 还 再 一下 一些 有 没有 如 如果 若 需要 想 想要 希望 要 哪 哪个 哪些 "
        "什么 怎么 如何 是否 一个 此 该 其 中 里 上 下 后 时 费用 扣款 核查 以便 方便 日期 "
        "收件箱 收件 进度 客户 "
        "自己 信息 物流信息 登录页 页 要求 转 用 上面 下面 重新 登录 链接 重置 密码 "
        "本人 改为 怎么 只能 还款 疑问 遇到 获 获批 批准 多少 这里 这边 情况 发生 描述 说明 "
        "今天 不好 检查 垃圾邮件 垃圾邮件箱 邮件箱 正 服务 垃圾箱 转给 换货 结算 使用 优惠券 "
        "如需 如有 需 关于 有关 由 从 到 向 并 但 而 所 因为 所以 以便 以下 以上 下面 上面 "
        "方面 "
        # courtesy and empathy
        "您好 你好 亲爱 尊敬 欢迎 好的 收到 明白 理解 当然 没问题 祝您 祝 愉快 生活 顺利 感谢 "
        "谢谢 多谢 不客气 很 非常 十分 真的 完全 高兴 乐意 荣幸 不好意思 抱歉 对不起 再见 耐心 "
        "等待 等候 久等 支持 信任 配合 不便 麻烦 困扰 带来 添 造成 体验 心情 着急 迟迟 到 未到 "
        "抽出 时间 分享 宝贵 担心 失望 问题 情况 反馈 意见 留言 消息 服务 满意 "
        # help, questions, requests and next steps
        "帮 帮您 帮助 协助 为您 查询 查看 核实 核对 确认 处理 跟进 了解 解决 告诉 告知 提供 "
        "发送 回复 联系 咨询 说明 详细 具体 信息 其他 其它 还有 任何 随时 继续 同事 人工 客服 "
        "专员 团队 转交 转接 办理 申请 操作 需求 地方 "
        # the order's words (statements of them need a blanked fact)
        "订单 订单号 单号 号码 包裹 快递 物流 运单 运单号 商品 物品 货物 配送 发货 送达 签收 "
        "状态 退款 取消 地址 收货 新 金额 总额 总价 付款 支付 原 账户 工单 页面 邮件 日期 下单 "
        "承运 承运商 预计 运输 途中 审核 批准 更新 修改 更改 资格 记录",
    )
)
_ZH_LONGEST = max(len(w) for w in _ZH_WORDS)
#: Vague times a clause may carry when a handoff or a ticket backs a follow-up this turn.
_EN_SOON = frozenset({"soon", "shortly", "asap"})
_ZH_SOON = frozenset({"尽快", "稍后", "很快", "马上"})
#: A question back to the customer: asked of them, or offering to act.
_EN_QUESTION_BACK = _en(
    r"^\W*(?:(?:would|could|can|do|did|have|has|are|were|will|should|may) you\b|"
    r"(?:can|could|may|shall|should) (?:i|we)\b|what|which|when|where|how|who|is there|"
    r"are there|anything|any other|is (?:this|that|it|everything)\b|does (?:this|that|it)\b|"
    r"if\b|or\b)",
)
_DETERMINERS = "the your this that these those any all my our a an every -ing"
#: Verbs a request opens with ("Please send…").
_REQUESTS = (
    "let send tell check reply share provide confirm use keep follow contact ask try give make "
    "kindly could click visit wait allow describe feel choose sign log reset note accept be do "
    "don't have see look find write include attach call double-check rest take bear apply"
)
#: The object of a next step ("review your refund", 核实您的退款): a thing of the order named
#: with a determiner, never a verb ("We will refund you" stays unrecognised).
_EN_OBJECT = _en(
    r"\b(?:your|the|this|that|these|those|a|an)\s+(?:(?:new|original|delivery|shipping|",
    r"payment|refund)\s+)?(?:refunds?|orders?|parcels?|packages?|cards?|accounts?|address|",
    r"payments?|charges?|shipments?|delivery|request|case|items?|return|method)\b",
)
_ZH_OBJECT = re.compile(
    r"(?:您的|该|这个|此)(?:退款|订单|包裹|银行卡|账户|地址|付款|扣款|申请|问题)"
)
#: What may stand beside a next step (``^``): pronouns, auxiliaries, determiners.
_EN_GLUE = frozenset(
    re.findall(
        r"\S+",
        "a an the i i'll we we'll you it this that your our will can also now then here and to "
        "for with on of about so just please as into at all further more matter case issue "
        "there know again order orders colleague colleagues team agent person specialist "
        "manager supervisor courier carrier someone email e-mail phone message chat "
        "conversation update updates details result results decision news question questions "
        "request look looking check checking review reviewing investigate investigating help "
        "helping sort out received noted got message feedback after",
    )
)
_ZH_GLUE = frozenset(
    re.findall(
        r"\S+",
        "我 我们 会 将 您 你 的 这 这个 此 该 一下 为您 帮您 也 再 就 都 事 在 这里 这边 通过 "
        "邮件 短信 电话 结果 确认 消息 进展 同事 专员 人工 客服 团队 订单 不会 之后 此后 以后 "
        "您的 卡 银行卡 账户 情况 问题 退款结果 处理结果 核实 查看 查询 处理 跟进 了解 解决 "
        "帮助 协助 恢复 一下 收到 留言 反馈 后",
    )
)
#: Courtesy phrases whose words are not in the vocabulary on their own.
_EN_PHRASES = _en(
    r"\bfeel free\b|\bgood luck\b|\b(?:terrible|awful|horrible|bad|poor) (?:experience|wait|",
    r"delay|day|time|situation|news)\b",
)
_EN_WORD = re.compile(r"[a-z]+(?:['’-][a-z]+)*")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


def _en_unknown(clause: str, known: frozenset[str]) -> str | None:
    words = _EN_WORD.findall(_EN_PHRASES.sub(" ", clause).lower())
    return next((w for w in words if w not in known), None)


def _zh_unknown(clause: str, known: frozenset[str]) -> str | None:
    """The first stretch of ``clause``'s Chinese that no sequence of known words covers, or
    its first unknown English word."""
    for run in _CJK_RUN.findall(clause):
        reach = [True] + [False] * len(run)  # reach[i]: run[:i] is a sequence of known words
        for i in range(len(run)):
            if reach[i]:
                for n in range(1, min(_ZH_LONGEST, len(run) - i) + 1):
                    reach[i + n] = reach[i + n] or run[i : i + n] in known
        if not reach[-1]:
            stop = max(i for i, ok in enumerate(reach) if ok)
            return run[stop : stop + 2]
    return _en_unknown(_CJK_RUN.sub(" ", clause), _EN_WORDS)


def _recognised(clause: str, zh: bool, question: bool, glue: frozenset[str]) -> bool:
    """Whether ``clause`` is of a kind the model may say (see the module's list): a fact of
    this turn, a question, courtesy, an offer or request, or a next step (``^``) with nothing
    but pronouns, auxiliaries, people, means of contact and its object beside it."""
    if "~" in clause or (question and (zh or _EN_QUESTION_BACK.search(clause))):
        return True
    bare = (_ZH_OBJECT if zh else _EN_OBJECT).sub(" ", clause)
    if (_zh_unknown if zh else _en_unknown)(bare, glue) is None:  # a next step, or glue only
        return True
    if zh:
        return bool(_ZH_COURTESY.search(clause) or ZH_NO_FACT.search(clause)
                    or ZH_EMPATHY.search(clause))  # fmt: skip
    return bool(_EN_COURTESY.search(clause) or EN_NO_FACT.search(clause)
                or EN_EMPATHY.search(clause))  # fmt: skip


#: What may follow a courtesy word, so the sentence is in a known-good form ("Thank you for
#: your patience", never "Thank you want to your patience."; "sorry for the wait", never "sorry
#: for hear that"; "Please send…", never "Please to let me know").
_EN_FORMS = (
    (re.compile(r"\b(?:thank you|thanks)\s+(\w+)", re.I), "for so very again much kindly all in a"),
    (
        re.compile(r"\bsorry\s+(\w+)", re.I),
        "for about to that you we i again if but it this the your there our my they its",
    ),
    (re.compile(r"\b(?:thank you|thanks|sorry|apologi[sz]e) for\s+(\w+)", re.I), _DETERMINERS),
    (re.compile(r"\bsorry to\s+(\w+)", re.I), "hear see learn keep have say trouble bother"),
    (re.compile(r"^\W*please\s+([\w-]+)", re.I), _REQUESTS),
)
#: Chinese words that double a character on purpose (谢谢, 看看); any other doubled character
#: or doubled pair of characters (的的, 不便不便) is garbled.
_ZH_DOUBLES = frozenset(
    re.findall(r"\S+", "谢谢 看看 试试 等等 刚刚 常常 迟迟 慢慢 稍稍 天天 好好 多多 渐渐 一一 久久")
)
_ZH_DOUBLED = re.compile(r"([\u4e00-\u9fff])\1|([\u4e00-\u9fff]{2})\2")
#: Two determiners or two prepositions in a row ("the your order", "sorry about of this").
_EN_STACKED = _en(
    r"\b(?:the|a|an|your|my|our)\s+(?:the|a|an|your|my|our)\b|"
    r"\b(?:about|for|of|with|from|at)\s+(?:of|for|about|with|from|at)\b",
)
_ZH_DANGLING = re.compile(r"(?:您|你|我|我们)的\s*[。！？!?]?$")
#: A word said twice in a row ("order order", "can can"); "had had" and "that that" are English.
_EN_TWICE = frozenset({"had", "that"})
#: Closed classes of English words (grammar, not topics): a determiner or possessive
#: (:data:`_EN_DET`) is followed by a noun phrase, never by another determiner, a preposition,
#: a pronoun, an auxiliary, a conjunction or the end of its clause ("Sorry the for
#: inconvenience.", "your the order", "the is", "for your and patience", "the delay your.").
_EN_DET = frozenset({"the", "a", "an", "your", "my", "our", "their", "its"})
_EN_NOT_AFTER_DET = _EN_DET | frozenset(
    re.findall(
        r"\S+",
        "about for of with from at to in on by into onto than i we you he she they me us him "
        "them is are was were be been am does did has have had do would could should shall "
        "and or but nor so if because this that these those",
    )
)
#: Chinese possessives (您的, 我们的) are followed by a noun phrase, never by another pronoun
#: or possessive, an adverb, a preposition, an auxiliary or a verb that takes an object (带来,
#: 造成): 您的我们, 给您的带来, 您的在耐心 (a final particle may follow: 可以帮您的吗).
_ZH_POSSESSED = re.compile(
    r"(?:您|你|我|我们|你们|他|她|他们)的\s*(?:您|你|我|他|她|它|的|是|在|给|把|被|对|"
    r"向|从|为|跟|和|与|及|或|已|将|会|能|可以|可|也|都|就|还|再|很|非常|正在|不|没|带来|造成)"
)


def garbled(text: str, zh: bool) -> str | None:
    """Words in no known-good form: a doubled word, pair of words or character (order order,
    for you for you, 的的, 不便不便), a determiner or possessive before what cannot follow it
    (the for, your the, the delay your., 您的我们, 给您的带来), a courtesy word followed by what
    cannot follow it, a dangling 您的."""
    if zh:
        for match in _ZH_DOUBLED.finditer(text):
            if match.group(2) or match.group(0) not in _ZH_DOUBLES:
                return match.group(0)
        found = _ZH_DANGLING.search(text) or _ZH_POSSESSED.search(text)
        return found.group(0) if found else None
    words = _EN_WORD.findall(text.lower())
    for i in range(len(words) - 3):
        if words[i : i + 2] == words[i + 2 : i + 4]:
            return " ".join(words[i : i + 4])
    misplaced = _en_misplaced(text.lower())
    if misplaced is not None:
        return misplaced
    stacked = _EN_STACKED.search(text)
    if stacked:
        return stacked.group(0)
    for pattern, allowed in _EN_FORMS:
        for match in pattern.finditer(text):
            word = match.group(1).lower()
            if word not in allowed.split() and not (word.endswith("ing") and "-ing" in allowed):
                return match.group(0)
    return None


_EN_TOKEN = re.compile(r"[a-z]+(?:['’-][a-z]+)*|[~^]|\d+")


def _en_misplaced(low: str) -> str | None:
    """A word said twice in a row, or a determiner before what cannot follow it (a closed
    class, :data:`_EN_NOT_AFTER_DET`, or its clause's end), in the lower-cased ``low``."""
    for clause in EN_CLAUSE.split(low):
        words = _EN_TOKEN.findall(clause)  # a blanked fact (~, ^) or a figure is a word too
        for first, then in itertools.pairwise([*words, ""]):
            if first == then and first.isalpha() and first not in _EN_TWICE:
                return f"{first} {then}"
            if first in _EN_DET and (then in _EN_NOT_AFTER_DET or not then):
                return f"{first} {then}".strip()
    return None


def unrecognised(rest: str, zh: bool, values: Iterable[str], follow_up: bool) -> str | None:
    """Why a sentence is not of a kind the model may say, or None when every clause is.

    Args:
        rest: The sentence with this turn's facts blanked
            (:func:`~workflows.customer_service.claim_assertions.explained`).
        zh: The sentence is Chinese (folded to Simplified).
        values: The tools' fact values of this turn: their words count as known.
        follow_up: A handoff or a ticket was recorded this turn: "soon" (尽快) may tell when
            a person follows up.

    Returns:
        ``"a statement no fact backs (…)"`` or ``"the word … is not one the model may use"``.
    """
    soon = (_ZH_SOON if zh else _EN_SOON) if follow_up else frozenset()
    glue = (_ZH_GLUE if zh else _EN_GLUE) | soon
    extra = {w for v in values for w in (_CJK_RUN if zh else _EN_WORD).findall(v.lower())}
    known = (_ZH_WORDS if zh else _EN_WORDS) | glue | extra
    odd = garbled(rest, zh)
    if odd is not None:
        return f"garbled words ({odd!r})"
    question = bool(_ZH_QUESTION.search(rest)) if zh else rest.rstrip().endswith("?")
    clauses = [c.strip() for c in (ZH_CLAUSE if zh else EN_CLAUSE).split(rest)]
    clauses = [c for c in clauses if c.strip(" ~^.!?。！？")]
    before = False  # the clause before was recognised
    for index, clause in enumerate(clauses):
        before = _recognised(clause, zh, question and index == len(clauses) - 1, glue) or (
            before and _continues(clause, zh)
        )
        if not before:
            return f"a statement no fact backs ({clause[:40]!r})"
        word = (_zh_unknown if zh else _en_unknown)(clause, known)
        if word is not None:
            return f"the word {word!r} is not one the model may use"
    return None


#: A finite verb: a clause with one states something, so it is no mere continuation.
_EN_FINITE = _en(
    r"\b(?:is|are|was|were|be|been|being|am|will|shall|has|have|had|gets?|got|won't)\b|",
    r"'(?:s|re|ll|ve|d)\b",
)
_ZH_JOIN = re.compile(r"^\W*(?:或者?|并且?|然后|再|以及|和|及)")
_ZH_FINITE = re.compile(r"是|会|将|已|了")


def _continues(clause: str, zh: bool) -> bool:
    """Whether ``clause`` only continues the recognised clause before it ("Please send the
    order number and the new address", "…, or ask for a colleague", 或要求转人工): no verb
    that states anything of its own."""
    if zh:
        return bool(_ZH_JOIN.search(clause)) and not _ZH_FINITE.search(clause)
    return not _EN_FINITE.search(clause)
