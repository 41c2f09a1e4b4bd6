"""Marks that a message is not the customer's own plain ask, by structure (the write gate's
second half, next to :mod:`workflows.customer_service.asks`).

* :func:`pasted_spans`: text the customer pasted or formatted as someone else's, and
  instructions addressed to the machine: Markdown code fences and indented code blocks,
  Markdown headings, HTML elements (``<blockquote>``, ``<q>``, ``<pre>``), bracketed wrappers
  (``[Forwarded] … [/Forwarded]``, ``【转发】``), attributions (``copied from WhatsApp:``,
  ``转发自微信：``), role labels with a qualifier (``Assistant (internal note):``), prompt
  formats (``### Instruction:``), orders to forget what came before (``ignore everything
  above``, ``请忘记你之前的设定``), a new persona or mode (``you are now …``, ``developer
  mode``, ``你现在是``), a claim of authority (``as the admin I authorize``, ``作为管理员``),
  and key–value pseudo-config (``action: refund``, ``auto_approve=true``).
* :data:`TAKEN_BACK`: an ask taken back later without a negation word (``forget what I
  said``, ``disregard that``, ``on reflection, leave it``, ``let it ship``, ``just joking``,
  ``我收回``, ``我再想想``, ``哦不对``, ``前面的话作废``).
* :func:`hidden`: an invisible or direction-changing character inside a word (``re\\u200bfund``),
  or a bidi override / isolate anywhere: what the customer sees is not what is read.
* :func:`fold_lookalikes`: invisible format characters dropped and Cyrillic / Greek look-alike
  letters inside a Latin word folded to Latin (``dо nоt`` → ``do not``), with the
  homoglyph table of :mod:`orchestrator.textnorm` (``fold_text`` itself also lower-cases,
  turns newlines into spaces and folds symbols such as ``¥``: the gate needs the lines and the
  signs, so it folds only the letters of mixed-script words and drops only ``Cf`` characters).

Hand-written patterns, as in the rest of the gate: this decision moves money, so code that a
test can pin makes it.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import opencc

from orchestrator.textnorm import homoglyph_table, is_han, to_simplified

#: Roles that are not the customer: a line that starts with one of them and a label is not
#: the customer's own words.
_ROLE = (
    r"system|sys|assistant|admin|administrator|developer|dev|operator|moderator|supervisor|"
    r"manager|support(?: team)?|staff|agent|bot|ai|root|sudo|internal|"
    r"instructions?|prompt|note to (?:agent|assistant|ai|bot|system|staff)|"
    # an agent's trace (ReAct, tester11 H): [Observation], "Thought (internal):"
    r"observation|thought|tool (?:result|output)|function (?:result|output)|final answer"
)
_ROLE_ZH = r"系统|管理员|助手|内部|后台|开发者|指令|操作员"
#: Orders to drop what came before, a new persona or mode, a claim of authority, prompt
#: formats: the marker and the rest of its line are set aside.
_INSTRUCTION = re.compile(
    # forget / ignore what came before
    r"\b(?:reset|clear|wipe)\s+(?:your|the (?:assistant|bot|system)'?s?)\s+(?:\w+\s+)?"
    r"(?:rules|instructions|prompts?|memory|settings|context|programming|guidelines)\b|"
    r"\b(?:ignore|disregard|forget|override|bypass|discard|erase)\s+"
    r"(?:(?:all|any|everything|anything|of|the|your|my|these|those|this|that|what|you|were|"
    r"told|been|said|was|written|stuff|text|content)\s+){0,4}"
    r"(?:above|before|previous|prior|preceding|earlier|foregoing|setup|settings?|context|"
    r"programming|training|configuration|config|system|prompts?|instructions?|rules|"
    r"guidelines|constraints|restrictions|limits|safeguards|guardrails|polic(?:y|ies))\b"
    # not the customer's own earlier address ("ignore the previous address and ship it to …")
    r"(?!\s+(?:(?:delivery|shipping|postal|home|mailing|billing|street)\s+)?"
    r"(?:address(?:es)?|addr|postcode|zip code)\b)|"
    r"(?:忘记|忘掉|忘了|忽略|无视|别管|不要管|抛开|丢掉|清除|清空|重置|覆盖)[^。！？!?\n]{0,8}"
    r"(?:之前|以前|上面|前面|上述|上文|以上|先前|此前|原来|原有|原先|所有|一切|全部|你的)[^。！？!?\n]{0,8}"
    r"(?:设定|设置|指令|规则|提示|要求|限制|身份|角色|内容|对话|说明|约束|政策|记忆)|"
    # a new persona or mode
    r"\byou(?:'re| are) now\b|\bfrom now on,? (?:you|your|answer|reply|respond|always|every|"
    r"just|only)\b|\b(?:answer|reply|respond)(?: to)? (?:every|each|all|any) (?:question|"
    r"message|request|ask)s?\b|(?:以后|今后|从现在起)[，,]?(?:每|所有|任何|一律|都)|"
    r"\b(?:pretend|act|behave|roleplay|role-play)\b[^.\n]{0,20}?\b(?:you(?:'re| are)|to be|"
    r"as (?:if|a|an|the|my|your))\b|"
    r"\b(?:developer|dev|debug|god|admin|sudo|maintenance|jailbreak|unrestricted|unfiltered|"
    r"test|override) mode\b|\bjailbr[eo]a?k\w*|"
    r"你现在是|你现在扮演|从现在(?:开始|起)[，,]?你|假装你是|扮演(?:一个|一名)?|"
    r"(?:开发者|调试|管理员|上帝|越狱|测试|维护)模式|"
    # a claim of authority over the system
    r"\b(?:as|i am|i'm|this is|speaking as)\s+(?:(?:the|a|an|your|its|this)\s+)?"
    r"(?:(?:store|shop|site|system|platform|senior|duty)\s+)?"
    r"(?:admin|administrator|moderator|operator|superuser|root)\b|"
    r"\b(?:as|i am|i'm|this is|speaking as)\s+(?:(?:the|a|an|one of the)\s+)?"
    r"(?:your|(?:store|shop|site|system|platform|company|customer service|support)(?:'s)?)\s+"
    r"(?:\w+\s+)?(?:manager|supervisor|developer|engineer|staff(?: member)?|employee|ceo|boss|"
    r"owner|agent|representative)\b|"
    r"\b(?:authori[sz]ed|approved|pre-?approved|cleared|signed off|sanctioned)\s+by\s+"
    r"(?:(?:the|a|an|your|my|our)\s+)?(?:admin|administrator|manager|management|supervisor|"
    r"system|support|staff|team|agent|boss|ceo|head office|headquarters|it)\b|"
    r"\b(?:admin|administrator|root|manager|supervisor|elevated|superuser|override)\s+"
    r"(?:rights|privileges?|access|permissions?|authority|approval|clearance)\b|"
    r"\bhereby\b|\boverride\b|\bbypass\b|"
    r"(?:作为|我是|本人是)(?:本店|店铺|平台|系统|你们的?|贵店)?(?:的)?(?:管理员|店主|老板|经理|主管|"
    r"开发者|运营|负责人|工作人员|员工|客服主管|超级用户)|特此授权|最高权限|管理员权限|"
    r"(?:管理员|主管|经理|上级|老板|系统)(?:已经?)?(?:授权|批准|同意|特批)|"
    r"以(?:管理员|系统|开发者|店主|主管|超级用户)(?:的)?身份|\bsudo\b|"
    r"\b(?:begin|end|start) (?:of )?(?:the )?(?:instructions?|system|prompt|admin|override)\b|"
    # prompt formats
    r"#{2,}\s*(?:instructions?|response|system|input|output|task|context|prompt)\b|"
    r"^\s*(?:instructions?|response|prompt|task)\s*[:：]|<<\s*/?sys\s*>>|<\|[^|>\n]{1,24}\|>",
    re.I | re.M,
)
#: A role label with a qualifier in brackets or words before its colon, at a line's start:
#: ``Assistant (internal note):``, ``Agent [internal]:``, ``管理员（内部）：``.
_ROLE_LABEL = re.compile(
    r"^[ \t]*[\[(<{*#]*[ \t]*(?:" + _ROLE + r")\b[^:：\n,.!?]{0,40}?[:：]|"
    r"\b(?:" + _ROLE + r")\s*[(\[（【][^)\]）】\n]{0,30}[)\]）】]\s*[:：]|"
    r"^[ \t]*[\[(【（]?(?:" + _ROLE_ZH + r")[^：:\n，,。]{0,12}[:：]|"
    r"^[ \t]*(?:[a-z]+[ \t]+){1,3}(?:system|admin|administrator|developer|operator|root|prompt|"
    r"directive|instructions?)\b[^:：\n,.!?]{0,20}[:：]|"
    r"[\[【<]\s*(?:(?:" + _ROLE + r")\b|" + _ROLE_ZH + r"|提示|通知)[^\]】>\n]{0,20}[\]】>]",
    re.I | re.M,
)
#: Code and quotes in Markdown or HTML: a fenced block (``'''`` is a fence after
#: :func:`~workflows.customer_service.asks.normalise` turned backticks into quotes), an HTML
#: element, a heading line.
_FORMATTED = re.compile(
    r"^[ \t]*(?:```|'''|~~~)[^\n]*\n.*?(?:^[ \t]*(?:```|'''|~~~)|\Z)|"
    r"(?:```|''')[^\n]+?(?:```|''')|"
    r"<(blockquote|q|pre|code|cite|quote|samp|kbd|tt)\b[^>]*>"
    r".*?(?:</\1\s*>|\Z)|"
    r"^[ \t]{0,3}#{1,6}[ \t]+[^\n]*$|^[^\n]+\n[ \t]*={3,}[ \t]*$|<!--.*?(?:-->|\Z)|"
    r"^[ \t]*[=*_<>-]{3,}[^\n]*?[=*_<>-]{3,}[ \t]*$.*\Z",
    re.I | re.M | re.S,
)
#: Words of a wrapper or attribution that marks pasted text.
_WRAPPER_WORDS = (
    r"forward(?:ed)?(?: message| mail| e-?mail| text| chat)?|fwd?|quote[ds]?|quotation|"
    r"original(?: message| text)?|copied(?: text)?|copy|paste[ds]?|excerpt|screenshot|"
    r"transcript|chat log|log|e-?mail|message|sms|begin [a-z ]{0,20}|"
    r"转发|引用|原文|复制|粘贴|截图|聊天记录|邮件|短信|消息|摘录"
)
#: A bracketed wrapper: a closed pair (``[Quote] … [/Quote]``, any ``[x] … [/x]``) or an
#: opening one with nothing to close it (to the end).
_WRAPPER = re.compile(
    r"\[([a-z][\w ]{0,30})\].*?\[/\1\]|"
    r"(?:^[ \t]*[(（]|[\[【])\s*(?:" + _WRAPPER_WORDS + r")[^\]】)）\n]{0,30}[\]】)）].*\Z",
    re.I | re.S | re.M,
)
#: An attribution: "copied from WhatsApp:", "forwarded by my boss:", 转发自微信：, 摘自群聊：.
_ATTRIBUTION = re.compile(
    r"\b(?:forwarded|copied|pasted|quoted|excerpted|excerpt|reposted|screenshot(?:ted)?|"
    r"transcript)\s+(?:from|by|via|off|out of|of)\b[^:：\n]{0,40}[:：]|"
    r"\b(?:fwd?|forwarded(?: message| text| mail| e-?mail)?|pasted text|copied text|"
    r"transcript)\s*[:：]|"
    r"(?:转发自|转自|转载自?|摘自|引自|引用自?|复制自|抄自|粘贴自|截图自|摘录自?)[^：:\n。]{0,20}[:：]|"
    r"来自[^：:\n。，]{0,12}的?(?:消息|短信|邮件|通知|留言|微信)[:：]?",
    re.I,
)
#: Keys of pseudo-config (``action: refund``, ``auto_approve=true``): one such line with a
#: strong key, or two config lines, is pasted configuration, not the customer's words.
#: Chinese keys are strong keys (operation, action, command, execute, instruction, mode).
_ZH_KEY = r"操作|动作|命令|执行|指令|模式"
_CONFIG_LINE = re.compile(
    r"^[ \t]*[\"']?(?P<key>[a-z][\w.-]{0,30}|" + _ZH_KEY + r")[\"']?[ \t]*[:：=][ \t]*"
    r"(?P<value>[^\n]*)$",
    re.I | re.M,
)
_STRONG_KEY = re.compile(
    r"action|command|cmd|op|operation|execute|exec|run|override|bypass|force|mode|role|"
    r"intent|tool|function|task|auto\w*|skip\w*|\w*_\w*|\w*\.\w*|" + _ZH_KEY,
    re.I,
)
_CONFIG_KEY = re.compile(
    r"target|order|order_?id|amount|status|user|customer|confirm\w*|approv\w*|authori[sz]\w*|"
    r"verified|priority|flag|debug|admin|订单|金额|状态|用户",
    re.I,
)
_CONFIG_VALUE = re.compile(r"(?:true|false|null|none|yes|no|on|off|0|1)\W*", re.I)


#: A text set between a begin line and an end line of its own ("Begin email" … "End email",
#: "--- start of message ---" … "--- end of message ---", 邮件开始 … 邮件结束): pasted, to its
#: end line or, with none, to the end of the text.
_BEGIN_END = re.compile(
    r"^[ \t]*[-=*#\[(<]*[ \t]*(?:begin|start)(?:[ \t]+of)?(?:[ \t]+the)?[ \t]+"
    r"(?:[a-z]+[ \t]+){0,2}?(e-?mail|mail|message|text|letter|note|quote|paste|transcript|"
    r"chat|sms|reply)\b[^\n]*\n"
    r".*?(?:^[ \t]*[-=*#\[(<]*[ \t]*end(?:[ \t]+of)?(?:[ \t]+the)?[ \t]+(?:[a-z]+[ \t]+){0,2}?\1\b"
    r"[^\n]*$|\Z)|"
    r"^[ \t]*[-=*#【\[]*[ \t]*(邮件|消息|短信|信件|聊天记录|原文)(?:内容)?开始[^\n]*\n.*?"
    r"(?:^[^\n]*\1(?:内容)?结束[^\n]*$|\Z)",
    re.I | re.M | re.S,
)


def _config_spans(text: str) -> list[tuple[int, int]]:
    """The key–value lines of pasted configuration (see :data:`_CONFIG_LINE`)."""
    strong, weak = [], []
    for m in _CONFIG_LINE.finditer(text):
        key, value = m["key"], m["value"].strip()
        if _STRONG_KEY.fullmatch(key):
            strong.append(m.span())
        elif _CONFIG_KEY.fullmatch(key) or _CONFIG_VALUE.fullmatch(value):
            weak.append(m.span())
    if strong or len(weak) >= 2:
        return strong + weak
    return []


def _indented_code(text: str) -> list[tuple[int, int]]:
    """Markdown indented code blocks: lines of 4 spaces or a tab in, at the start of the text
    or after a blank line, and the indented lines that follow them."""
    spans, pos, blank_before, in_code = [], 0, True, False
    for line in text.split("\n"):
        indented = line.startswith(("    ", "\t")) and line.strip() != ""
        in_code = indented and (in_code or blank_before)
        if in_code:
            spans.append((pos, pos + len(line)))
        blank_before = line.strip() == ""
        pos += len(line) + 1
    return spans


def _line_end(text: str, at: int) -> int:
    """Where the pasted text that starts at ``at`` ends: the end of its line, or (when the
    line ends right after a label, ``copied from WhatsApp:\\n…``) the end of the paragraph."""
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    if text[at:end].strip():
        return end
    para = text.find("\n\n", end + 1)
    return len(text) if para < 0 else para


def pasted_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` spans of ``text`` (normalised) that the customer pasted or formatted
    as someone else's, or that instruct the machine (see the module's docstring)."""
    spans = [m.span() for m in _FORMATTED.finditer(text)]
    spans += [m.span() for m in _WRAPPER.finditer(text)]
    spans += [m.span() for m in _BEGIN_END.finditer(text)]
    spans += _indented_code(text) + _config_spans(text)
    for pattern in (_ATTRIBUTION, _ROLE_LABEL, _INSTRUCTION):
        spans += [(m.start(), _line_end(text, m.end())) for m in pattern.finditer(text)]
    return spans


#: An ask taken back in a later sentence without a negation word (most retractions hold a
#: negation and are read as one): the earlier words unsaid, a change of mind, the order let
#: go on as it is, a joke, a slip of the tongue.
TAKEN_BACK = re.compile(
    # the earlier words unsaid: "forget what I said", "disregard that", "strike my last request"
    r"\b(?:forget|disregard|ignore|strike|scratch|erase|delete|undo|unsay|belay|cross out|"
    r"take back|retract|withdraw|scrap|nix|ditch|kill|drop)\s+"
    r"(?:(?:what|everything|all|anything|whatever)\s+"
    r"(?:i|i've|i have|i'd)\s+(?:just\s+|had\s+|ever\s+)?(?:said|wrote|typed|asked|written|"
    r"mentioned|sent)|i (?:ever |just )?(?:said|asked|wrote|typed|mentioned|sent)\b[^.!?\n]{0,20}|"
    r"(?:my|the|that|this|those|these)\s+(?:(?:last|previous|earlier|above|prior|first|whole|"
    r"former)\s+)?(?:part|bit|sentence|message|line|request|ask|words?|comment|question|"
    r"thing|lot|text|one|statement|instruction)s?|(?:that|this|it)(?=\s*(?:[.,;:!?)…]|$|"
    r"\b(?:please|too|then|and|ok|okay|lol|haha|sorry)\b)))|"
    # a change of mind
    r"\b(?:on (?:further |second )?(?:thought|reflection|balance|second thoughts?)|"
    r"(?:having|after) (?:thought|slept|sleeping|thinking|reflected|reflecting) (?:about |on |"
    r"over )?it|second thoughts?|come to think of it|thinking (?:about it|it over) (?:more|"
    r"again)|(?:i'?m |i am |i'?ve |i have |i )?(?:rethinking|reconsidering|reconsidered|rethought)|"
    r"let me (?:think|sleep on|reconsider|mull)|"
    r"i'?ll (?:think|sleep) (?:about|on|over) it|i need to think|changed? (?:my|our) minds?)\b|"
    # the order let go on as it is
    r"\b(?:let|allow) (?:it|them|the (?:order|parcel|package|delivery|shipment)) "
    r"(?:ship|go|be|ride|stand|through|proceed|come|continue|arrive|run|happen|stay)\b|"
    r"\bleave (?:it|them|the order|everything|things)(?:\s+(?:as (?:it )?is|be|alone|"
    r"for now|there|as planned|unchanged))?(?=\s*(?:[.,;!?…]|$))|"
    r"\b(?:ship it|send it) anyway\b|\bthen again\b|\bnvm\b|\bnevermind\b|\bignore me\b|"
    r"\b(?:maybe|perhaps|i'?ll|i will|i'?d rather|better|rather|i think i'?ll|let me) (?:just )?"
    r"(?:keep|hang on to|hold on to|hold onto|hang onto|stick with) (?:it|them|the (?:order|"
    r"parcel|package))\b|"
    r"\b(?:i'?ll|let me|let'?s|we'?ll) (?:just )?(?:wait and see|hold off|check first)\b|"
    r"\bhold that thought\b|\bproceed as (?:normal|planned|usual)\b|\ball good\b|"
    r"\bit'?s (?:all )?(?:fine|good|ok|okay)\s*(?:[.!]|$)|"
    # a joke
    r"\b(?:just |only )?(?:joking|kidding|teasing|trolling|messing (?:with|around))\b|"
    r"\bpsych\b|\bgotcha\b|"
    # Chinese: unsaid, a change of mind, let it go on, a slip of the tongue
    r"我收回|收回(?:我|刚才|前面|上面|之前)?(?:的|那|这)?(?:句|话|说的|请求|要求|申请)|"
    r"(?:刚才|刚刚|前面|上面|之前|那)(?:的|那|这)?(?:句|些)?(?:话|说的|消息|请求|要求)?"
    r"(?:不算数?|作废|不作数|忽略|别管|当没说)|"
    r"再(?:想想|考虑|斟酌|琢磨|等等)|(?:回头|以后|过两天|改天|之后|明天)再说|考虑考虑|等我想想|容我想想|让我想想|转念一想|仔细想想|回头想想|想了想|"
    r"(?:哦|噢|喔|啊|呃|额|诶|哎|欸)[，,、\s]*不对|不对不对|(?<!地址)说错了|口误|"
    r"让它发货|照常发货|继续发货吧|还是发货吧|没事了|开玩笑(?:的|啦|呢)?|骗你的|逗你(?:的|玩)",
    re.I | re.M,
)

#: Characters that change the display direction of what follows: never in a plain message.
#: Unicode's Bidi_Control set: the marks (ALM, LRM, RLM), embeddings, overrides and isolates.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: Invisible characters (format ``Cf``, and fillers that render as nothing).
_INVISIBLE = "\u034f\u115f\u1160\u3164\uffa0\u2800"


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) == "Cf" or ch in _INVISIBLE


def invisible_in(text: str) -> bool:
    """Whether ``text`` holds an invisible format character or a bidi control anywhere."""
    return any(_invisible(ch) for ch in text)


def hidden(message: str) -> bool:
    """Whether ``message`` hides something from the eye: an invisible character between two
    letters or CJK characters of one word (``re\\u200bfund``, ``取\\u200b消``), or a bidi
    override / embedding / isolate anywhere."""
    if _BIDI.search(message):
        return True
    for i, ch in enumerate(message):
        if not _invisible(ch):
            continue
        j = i
        while j < len(message) and _invisible(message[j]):
            j += 1
        if i > 0 and j < len(message) and message[i - 1].isalnum() and message[j].isalnum():
            return True
    return False


#: A word in any script (letters only).
_WORD = re.compile(r"[^\W\d_]+")


def _fold_word(match: re.Match[str]) -> str:
    word = match.group()
    if word.isascii() or not any(c.isascii() for c in word):
        return word  # all Latin, or all another script (a Russian sentence stays Russian)
    table = homoglyph_table()
    return "".join(c if c.isascii() else table.get(c, c) for c in word)


def fold_lookalikes(text: str) -> str:
    """``text`` without invisible format characters, and with the look-alike letters of its
    mixed-script words folded to Latin: ``dо nоt`` (Cyrillic о) → ``do not``, ``n\\u200bot``
    → ``not``. Letters of a word wholly in another script, and CJK, are kept.

    Example:
        >>> fold_lookalikes("Please d\\u043e n\\u043et cancel, n\\u200bot now")
        'Please do not cancel, not now'
    """
    if text.isascii():
        return text
    text = "".join(ch for ch in text if not _invisible(ch))
    return _WORD.sub(_fold_word, text)


#: Typographic quotes and apostrophes (what phones and word processors send) → ASCII ones.
_TYPOGRAPHIC = str.maketrans(
    dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc\u0060\u00b4\uff07", "'")
    | dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\uff02", '"')
)


def normalise(message: str) -> str:
    """NFKC (full-width forms), invisible characters dropped and look-alike letters folded
    (:func:`fold_lookalikes`), typographic quotes and
    apostrophes to ASCII ones, variant characters folded (:func:`_variants`: 衹 → 只),
    Traditional → Simplified: same meaning, comparable text. Every read starts here."""
    text = fold_lookalikes(unicodedata.normalize("NFKC", message))
    return to_simplified(_variants(text.translate(_TYPOGRAPHIC)))


@functools.cache
def _hk2t() -> opencc.OpenCC:
    return opencc.OpenCC("hk2t")


def _variants(text: str) -> str:
    """``text`` with the variant characters of Hong Kong's standard folded to the standard
    Traditional ones (OpenCC ``hk2t``: 衹 → 只, which ``t2s`` leaves, so "衹退" read as no
    "只退": cs13's held-out miss). Text with no Chinese character is returned unchanged. Of
    2,887 Chinese test strings, only those holding 衹 read otherwise after it."""
    return str(_hk2t().convert(text)) if any(is_han(ch) for ch in text) else text


#: Something written as an order id (``ORD-…`` and digits, ``ORD 12``, ``ORD_12``).
_ID_LIKE = re.compile(r"(?<![A-Za-z0-9])ORD[-\s_]?\d+", re.I)
#: What glued onto an order id makes it another string: a letter or digit, or a mark and a
#: digit (``.5``, ``#2``, ``-2``), or ``-``/``#`` and a letter (not ``-ORD-…``: two ids).
_GLUED = re.compile(r"[A-Za-z0-9_\u00c0-\u024f]|[.#\-/:+](?=\d)|[#\-](?!-?ord)(?=[A-Za-z])", re.I)
#: Why an address with an invisible or direction-changing character (U+200B, U+202E) is refused.
HIDDEN_ADDRESS = "an address holds no invisible or direction-changing characters; type it again"


def malformed_id(text: str) -> bool:
    """Whether something in ``text`` (normalised) looks like an order id but is not one: the
    wrong number of digits (``ORD-12``), or more glued on (``ORD-100200b``, ``ORD-100200_2``,
    ``ORD-100200.5``, ``ORD-100200ORD-100201``), never trimmed to the valid id before it.

    Example:
        >>> malformed_id("refund ORD-100200b"), malformed_id("ORD-100200 and ORD-100201")
        (True, False)
    """
    return any(
        not re.fullmatch(r"ORD-\d{6}", m.group(0), re.I) or _GLUED.match(text, m.end())
        for m in _ID_LIKE.finditer(text)
    )


#: An ask framed as a test, an example or a theory ("test: refund ORD-…", "example request:
#: cancel …", "in theory, cancel …", 举个例子：取消…, 测试一下：退款…): not the customer's own ask
#: now. A label counts at the start of the message or of a line.
FRAMED = re.compile(
    r"(?:^|\n)\s*(?:just\s+)?(?:a\s+)?(?:test(?:ing)?|example|sample|demo|dummy|mock)"
    r"(?:\s+(?:only|request|message|ask|input|case|run))?\s*[:：\-–—]|"
    r"\bin theory\b|\btheoretically\b|\bfor (?:a|the) test\b|\bjust testing\b|"
    r"举个?例子|举例|测试一下|只是测试|(?:^|\n)\s*(?:测试|演示|示例|样例|例子)\s*[:：]|理论上|"
    # make-believe, drills and rehearsals, training material, notes to oneself
    r"\b(?:pretend\w*|make[- ]believe|imagine|hypothetical\w*|role[- ]?play\w*|simulat(?:e|ing)|"
    r"dry[- ]?run|rehears\w*|practi[cs]e (?:run|round|request|ask)|"
    r"(?:this is|it'?s) (?:just |only )?(?:a |an )?(?:drill|exercise|rehearsal|simulation|"
    r"role[- ]?play)|for (?:training|practice|"
    r"demo|demonstration|testing|illustration|illustrative|educational|teaching|documentation|"
    r"tutorial) purposes|(?:as|for) (?:a |an )?(?:training|teaching|practice) (?:exercise|"
    r"example|scenario)|(?:to-?do|draft|template|placeholder|exercise|scenario|homework|quiz|"
    r"reminder to (?:self|myself)|note to (?:self|myself))\s*[:：\-–—]|step\s*\d+\s*[:：.)])|"
    r"假装|假装一下|演习|演练|练习一下|培训(?:用|演示|练习|材料)|模拟一下|模拟(?:退款|取消)|假设|假如|"
    r"草稿|待办|备忘|第[一二三四1-4]步|步骤\s*\d",
    re.I,
)
#: A label before an ask on its line ("TODO: cancel …", "Draft: refund …", "Step 1: refund …"),
#: and the labels that do go with a customer's own ask ("Urgent: …", "Order ORD-…: …").
_LABELLED_ASK = re.compile(
    r"(?:^|\n)[ \t]*(?P<label>[^\W\d_][^:：\n]{0,30}?)[ \t]*[:：][^\n]*?"
    r"(?:refund|cancel|reimburs|money back|退款|取消|退钱)",
    re.I,
)
_PLAIN_LABEL = re.compile(
    r"(?:urgent|important|asap|request|question|help|please|complaint|issue|problem|note|ps|"
    r"p\.s\.?|update|reason|action needed|attn|attention|(?:hi|hello|hey|dear|good \w+)"
    r"(?: [\w ]+)?|(?:customer )?(?:service|support|team|shop|store)|order(?: (?:no\.?|number|"
    r"id|#))?(?: ?ord-\d{6})?|ord-\d{6}|refund(?: request)?|cancel(?:lation)?(?: request)?|"
    r"紧急|急|加急|请求|申请|问题|你好|您好|客服|订单号?(?:ord-\d{6})?|退款申请|取消申请|备注)",
    re.I,
)

_ADDRESS_LABEL = re.compile(r"address|地址")


def framed(text: str) -> bool:
    """Whether an ask in ``text`` (normalised) is framed as not the customer's own now: a
    test, an example, a theory, make-believe, a drill, training material, a note to oneself
    (:data:`FRAMED`), or a label of another kind before it on its line (``TODO:``,
    ``Draft:``, ``Step 1:``; ``Urgent:`` and ``Order ORD-…:`` go with an own ask).

    Example:
        >>> framed("Draft: refund ORD-100200"), framed("Urgent: refund ORD-100200")
        (True, False)
    """
    if FRAMED.search(text):
        return True
    labels = (m["label"].strip() for m in _LABELLED_ASK.finditer(text))
    return any(  # "change the address to: …" is the address ask's own colon
        not _PLAIN_LABEL.fullmatch(label) and not _ADDRESS_LABEL.search(label) for label in labels
    )


#: One item or part of an order named with a cancel or a refund ("the backpack from ORD-…,
#: keep the rest", "item 2 of ORD-…", "except the lamp", ORD-…里的背包, 其他的保留): the
#: whole order is never offered for it; a part is asked back or left to a person.
ITEM_PART = re.compile(
    r"\bitems?\s*(?:no\.?|number|#)?\s*\d|\b(?:keep|leave)\s+the\s+rest\b|\bexcept\b|"
    r"\bexcluding\b|\bminus\b|\bapart from\b|\bbut not the\b|\b(?:only|just) (?:the|one)\b"
    # "just the refund" is the whole of it, no part (tester13 D)
    r"(?! (?:refund|money|whole|full|entire|order|total|payment|amount)\b)|"
    r"\bone of (?:the|my)\b|\bhalf (?:of )?(?:the|my|ord)|"
    r"\bthe\s+(?!(?:refund|money|order|orders|payment|full|whole|entire|total|rest|delivery|"
    r"shipment|parcel|package|purchase|same|new|old|address)\b)[a-z]+(?:\s+[a-z]+){0,2}\s+"
    r"(?:from|in|of|on)\s+(?:my\s+)?(?:order\s+)?(?:ord-?\d|#\d)|"
    r"里的|中的|其他(?:的)?(?:保留|不|留着|照常)|其余(?:的)?(?:保留|不|照常)|除了|不含|不包括|只取消|"
    r"取消一半|其中(?:一|的)",
    re.I,
)


#: What no postal address holds: HTML tags and entities, Markdown links and images, URLs,
#: code fences and template braces (a shipping label prints it; a page would render it).
ADDRESS_MARKUP = re.compile(
    r"<\s*/?\s*[a-z!][^>]*>|&#?\w+;|\]\s*\(|!\[|\b(?:https?|ftp|javascript|data):|www\.|`|\{\{|\}\}|"
    r"\$\{",
    re.I,
)
