"""Numbers and dates stored as text: one parser for the .xlsx, .xls and .csv paths.

Spreadsheets exported by other systems hold numbers as text (``"1,234"``, ``"$2,500.00"``,
``"€300"``, ``"1 250,00 €"``, ``"(1,200)"``, ``"12,5 %"``) and dates as text (``"2024-03-01"``,
``"01.03.2024"``, ``"3/2/2025"``, ``"Feb 10, 2025"``, ``"1 Mar 2024"``). Whether ``1.234`` is
one thousand or one point two, and whether ``03/04/2024`` is March or April, cannot be told
from one cell, so the decision is made **per column** from all of its values
(:func:`convert_column`):

* **Numbers.** A value with both separators (``1.234,50`` / ``1,234.50``), a decimal comma
  (``12,5``), a space as thousands separator (``1 250,00``) or a dot followed by other than
  three digits is evidence for one convention (European: ``.`` or space groups, ``,``
  decimals; US: ``,`` groups, ``.`` decimals). A column with evidence for both is left as
  text. ``1,234`` alone is read with the US convention (a comma before exactly three digits is
  a thousands separator in both conventions' group form; a European decimal would be
  ``1,2340``-like evidence elsewhere in the column). Accounting negatives ``(1,200)``, a
  leading or trailing minus, currency symbols and ISO codes before or after, and a trailing
  ``%`` (the value becomes a fraction, as Excel stores percentages) are understood. Size
  units scale the value exactly (Decimal): ``万`` 1e4, ``亿`` 1e8, ``千`` 1e3, ``百万``/``千万``,
  ``K``/``k`` 1e3, ``M``/``mn``/``million`` 1e6, ``B``/``bn``/``billion`` 1e9 (``¥1.2万`` is
  12,000, ``$1.2M`` 1,200,000); a lowercase ``m``/``b`` counts only beside a currency
  (``1.5m`` is a length). The column's note says when units were applied. A header or title
  note such as ``单位：万元`` is not applied here. Integers
  with a leading zero (``007``) are codes and stay text.
* **Dates.** ISO ``yyyy-mm-dd`` (and ``yyyy/mm/dd``) is unambiguous. For ``a/b/yyyy`` forms
  the column decides: a first field over 12 proves day first, a second field over 12 proves
  month first; a ``.`` separator (``01.03.2024``) and day-first names (``1 Mar 2024``) are
  evidence for day first, month-first names (``Feb 10, 2025``) for month first. Without any
  evidence, or with evidence both ways, ambiguous cells are left out and the reason is given.

A column is converted when at least 90% of its text values parse under one reading; the
rest stay text and are listed with the reason. Sources: Excel's own text-to-number rules
(``VALUE()``) and the CLDR number patterns for the grouping and decimal symbols.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Literal

NumberStyle = Literal["us", "eu"]
DateOrder = Literal["dmy", "mdy"]

CURRENCY_SYMBOLS = "$€£¥￥₹₩₽₺₪฿₫₱₴₦₸₾₼₮₲₵₡₭₨৳"
_CODES = r"USD|EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|HKD|SEK|NOK|DKK|PLN|INR|KRW|RUB|BRL|MXN|TWD|SGD|NZD"
#: The other ISO 4217 currency codes in use (and three withdrawn lately: ANG, BGN, ZWL), read
#: in capitals only, less those that are words or names too (ALL, AMD, BAM, BOB, CUP, GEL,
#: MAD, MOP, PEN, PHP, SOS, TOP: ``PHP 8`` is a language version; ``₱`` still reads), and
#: local symbols made of letters (``Rp``, ``RM``, ``Kč``, ``Ft``, ``лв``).
_ISO_CODES = (
    r"AED|AFN|AOA|ARS|AWG|AZN|ANG|BBD|BDT|BGN|BHD|BIF|BMD|BND|BSD|BTN|BWP|BYN|BZD|CDF|"
    r"CLP|COP|CRC|CVE|CZK|DJF|DOP|DZD|EGP|ERN|ETB|FJD|FKP|GHS|GIP|GMD|GNF|GTQ|GYD|HNL|"
    r"HTG|HUF|IDR|ILS|IQD|IRR|ISK|JMD|JOD|KES|KGS|KHR|KMF|KPW|KWD|KYD|KZT|LAK|LBP|LKR|"
    r"LRD|LSL|LYD|MDL|MGA|MKD|MMK|MNT|MRU|MUR|MVR|MWK|MYR|MZN|NAD|NGN|NIO|NPR|OMR|PAB|"
    r"PGK|PKR|PYG|QAR|RON|RSD|RWF|SAR|SBD|SCR|SDG|SHP|SLE|SRD|SSP|STN|SVC|SYP|SZL|THB|"
    r"TJS|TMT|TND|TRY|TTD|TZS|UAH|UGX|UYU|UZS|VED|VES|VND|VUV|WST|XAF|XCD|XCG|XOF|XPF|"
    r"YER|ZAR|ZMW|ZWG|ZWL|Rp|RM|Kč|Ft|лв"
)
#: Chinese names of currencies (``人民币1,234.50元``, ``100美元``), Simplified and Traditional,
#: and the symbol each stands for.
_NAMED = {
    "人民币": "¥",
    "人民幣": "¥",
    "美元": "$",
    "美金": "$",
    "欧元": "€",
    "歐元": "€",
    "英镑": "£",
    "英鎊": "£",
    "日元": "円",
    "日圓": "円",
    "日币": "円",
    "日幣": "円",
    "港币": "HK$",
    "港幣": "HK$",
    "港元": "HK$",
}
_NAMES = "|".join(sorted(_NAMED, key=len, reverse=True))
#: Currency markers: symbols, ISO codes, and prefixed dollars and yuan (``US$``, ``HK$``,
#: ``NT$``, ``A$``, ``CN¥``, ``RMB¥``), ``Rs.``, ``元``, ``円``...
_CUR = (
    rf"(?:(?:US|HK|NT|AU|CA|NZ|MX|SG|[ACRS])\$|(?:CN|RMB|JP)[¥￥]|[{CURRENCY_SYMBOLS}]|"
    rf"(?:{_CODES})\b|(?-i:{_ISO_CODES})(?![^\W\d_])|(?:{_NAMES}|kr|zł|元|円|Rs\.?|Fr\.))"
)
#: Size units (``1.2万``, ``1.5亿``, ``$1.2M``, ``300K``, ``2.5bn``) and their multipliers.
MULTIPLIERS = {
    "万亿": 10**12,
    "千万": 10**7,
    "百万": 10**6,
    "亿": 10**8,
    "萬": 10**4,
    "億": 10**8,
    "万": 10**4,
    "千": 10**3,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "mn": 10**6,
    "bn": 10**9,
    "k": 10**3,
    "m": 10**6,
    "b": 10**9,
}
_MULT = "(?:" + "|".join(sorted(MULTIPLIERS, key=len, reverse=True)) + r")(?![A-Za-z])"
_NUMBER_TEXT = re.compile(
    rf"""^(?P<cur0>{_CUR})?\s*(?P<open>\()?\s*(?P<sign1>[-+−])?\s*(?P<cur1>{_CUR})?\s*
    (?P<sign2>[-+−])?\s*(?P<num>\d[\d.,'’\u00a0\u202f ]*\d|\d|[.,]\d+)
    \s*(?P<mult>{_MULT})?\s*(?P<pct>%)?\s*(?P<cur2>{_CUR})?\s*(?P<sign3>[-−])?\s*(?P<close>\))?\s*(?P<cur3>{_CUR})?$""",
    re.VERBOSE | re.IGNORECASE,
)
#: One currency under its several markers (``US$``/``USD``/``$`` are one unit for a column).
_SAME_CURRENCY = {
    "USD": "$",
    "US$": "$",
    "EUR": "€",
    "GBP": "£",
    "CNY": "¥",
    "RMB": "¥",
    "CN¥": "¥",
    "RMB¥": "¥",
    "元": "¥",
    "JPY": "円",
    "JP¥": "円",
    "INR": "₹",
    "RS": "₹",
    "RS.": "₹",
    "KRW": "₩",
    **_NAMED,
}
#: What an accounting format or an export writes for "no value": a dash, ``$ -``, ``n/a``.
_PLACEHOLDER = re.compile(
    rf"^\s*(?:{_CUR})?\s*(?:[-–—‒]+|n/?a|null|none|nil)\s*(?:{_CUR})?\s*$", re.IGNORECASE
)
_SCIENTIFIC = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
_ISO = re.compile(r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$")
_NUMERIC_DATE = re.compile(r"^(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})$")
_MONTHS = {
    m: i
    for i, names in enumerate(
        (
            ("jan", "january", "janv", "janvier", "ene", "enero", "januar", "gen", "gennaio"),
            ("feb", "february", "fév", "fev", "février", "febrero", "februar", "febbraio"),
            ("mar", "march", "mars", "marzo", "märz", "mär"),
            ("apr", "april", "avr", "avril", "abr", "abril", "aprile"),
            ("may", "mai", "mayo", "maggio"),
            ("jun", "june", "juin", "junio", "juni", "giu", "giugno"),
            ("jul", "july", "juil", "juillet", "julio", "juli", "lug", "luglio"),
            ("aug", "august", "août", "aout", "ago", "agosto"),
            ("sep", "sept", "september", "septembre", "septiembre", "set", "settembre"),
            ("oct", "october", "octobre", "octubre", "okt", "oktober", "ott", "ottobre"),
            ("nov", "november", "novembre", "noviembre"),
            ("dec", "december", "déc", "décembre", "dic", "diciembre", "dez", "dezember"),
        ),
        start=1,
    )
    for m in names
}
_MONTH = r"([A-Za-zÀ-ÿ]{3,10})\.?"
_DAY_NAME = re.compile(rf"^(\d{{1,2}})(?:st|nd|rd|th)?[\s\-/]+{_MONTH}[\s\-/,]+(\d{{4}})$")
_NAME_DAY = re.compile(rf"^{_MONTH}[\s\-/]+(\d{{1,2}})(?:st|nd|rd|th)?,?[\s\-/]+(\d{{4}})$")
_CJK_DATE = re.compile(r"^(\d{4})年(\d{1,2})月(\d{1,2})日$")


@dataclass(frozen=True, slots=True)
class ParsedNumber:
    """A number read from text: value (a fraction for ``%``), unit and display format."""

    value: int | float
    unit: str | None
    number_format: str
    scale: str | None = None  # the size unit applied (``万``, ``M``), None when none


def _clean_currency(symbol: str | None) -> str | None:
    if not symbol:
        return None
    return symbol.upper() if symbol.isalpha() and symbol.isascii() else symbol


def number_evidence(text: str) -> set[NumberStyle]:
    """The conventions a number text is valid in (``{"us", "eu"}`` when ambiguous, ``set()``
    when it is not a number).

    Example:
        >>> sorted(number_evidence("1.234,50")), sorted(number_evidence("1,234"))
        (['eu'], ['eu', 'us'])
    """
    text = unicodedata.normalize("NFKC", text).strip()
    if _SCIENTIFIC.match(text):
        return {"us", "eu"}
    match = _NUMBER_TEXT.match(text)
    if not match:
        return set()
    return {style for style in ("us", "eu") if _digits(match["num"], style) is not None}


_CURRENCY_ALONE = re.compile(rf"^\s*(?:{_CUR})\s*$", re.IGNORECASE)


def currency_name(text: str) -> str | None:
    """The currency a cell names on its own (``USD``, ``€``, ``人民币``, ``HK$``), in
    :func:`currency`'s one name per currency; None for any other text.

    Example:
        >>> currency_name("usd"), currency_name("人民幣"), currency_name("Paris")
        ('$', '¥', None)
    """
    return currency(text.strip()) if _CURRENCY_ALONE.match(text) else None


def currency(symbol: str | None) -> str | None:
    """One name per currency (``USD``, ``US$`` → ``$``; ``元``, ``CNY`` → ``¥``)."""
    if not symbol:
        return None
    return _SAME_CURRENCY.get(symbol.upper(), symbol)


def _grouped(parts: list[str], style: NumberStyle) -> bool:
    """Digit groups of a thousands-grouped number: ``1,234,567``, or the Indian lakh
    grouping ``1,20,000`` (twos, then a last three) in the US convention."""
    if not (1 <= len(parts[0]) <= 3) or len(parts[-1]) != 3:
        return False
    middle = parts[1:-1]
    if all(len(p) == 3 for p in middle):
        return True
    return style == "us" and len(parts[0]) <= 2 and all(len(p) == 2 for p in middle)


def _digits(num: str, style: NumberStyle) -> str | None:
    """``num`` as a plain ``1234.5`` string under ``style``; None when invalid there."""
    num = num.replace("\u00a0", " ").replace("\u202f", " ").replace("’", "'")
    group, decimal = (",", ".") if style == "us" else (".", ",")
    groups = {group, " ", "'"} if style == "eu" else {group, "'"}
    if num.count(decimal) > 1:
        return None
    whole, _, frac = num.partition(decimal)
    if any(ch in frac for ch in ",. '"):
        return None
    seps = [ch for ch in whole if not ch.isdigit()]
    if seps:
        if len(set(seps)) > 1 or seps[0] not in groups:
            return None
        parts = whole.split(seps[0])
        if not _grouped(parts, style):
            return None
        whole = "".join(parts)
    if not whole and not frac:
        return None
    return f"{whole or '0'}.{frac}" if frac else whole


def parse_number(text: str, style: NumberStyle = "us") -> ParsedNumber | None:
    """Read one number stored as text under ``style``; None when it is not one.

    Example:
        >>> parse_number("(1,200)").value, parse_number("-$40.00").unit
        (-1200, '$')
        >>> parse_number("1 250,00 €", "eu").value, parse_number("12,5 %", "eu").value
        (1250.0, 0.125)
        >>> parse_number("007") is None  # a code, not a number
        True
    """
    stripped = unicodedata.normalize("NFKC", text).strip()  # full-width digits, ￥
    if _SCIENTIFIC.match(stripped):
        return ParsedNumber(float(stripped), None, "0.00E+00")
    match = _NUMBER_TEXT.match(stripped)
    if not match:
        return None
    if bool(match["open"]) != bool(match["close"]):
        return None
    signs = [s for s in (match["sign1"], match["sign2"], match["sign3"]) if s]
    if len(signs) > 1 or (signs and match["open"]):
        return None
    markers = [m for m in (match["cur0"], match["cur1"], match["cur2"], match["cur3"]) if m]
    if len({currency(m) for m in markers}) > 1:
        return None  # two currencies in one value
    digits = _digits(match["num"], style)
    if digits is None:
        return None
    whole = digits.split(".")[0]
    if len(whole) > 1 and whole.startswith("0") and not match["num"].startswith("0" + "."):
        return None  # 007, 00123: identifiers
    scale = match["mult"]
    if scale:
        if match["pct"] or (scale in ("m", "b") and not markers):
            return None  # 5%万 is nonsense; 1.5m is a length, not 1.5 million
        digits = _scaled(digits, scale)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    value: int | float = int(digits) if decimals == 0 and len(digits) < 16 else float(digits)
    if match["open"] or (signs and signs[0] in "-−"):
        value = -value
    unit = _clean_currency(markers[0] if markers else None)
    if match["pct"]:
        if unit:
            return None
        value = round(value / 100, decimals + 2)  # 12.5% is 0.125 exactly, not 0.12500000001
        fmt = "0" + ("." + "0" * decimals if decimals else "") + "%"
        return ParsedNumber(value, "%", fmt)
    grouped = scale or any(not ch.isdigit() for ch in match["num"].split(".,"[style == "eu"])[0])
    body = ("#,##0" if grouped or unit else "0") + ("." + "0" * decimals if decimals else "")
    if unit:
        before = match["cur0"] or match["cur1"]
        fmt = f'"{unit}"{body}' if before else f'{body} "{unit}"'
        return ParsedNumber(value, unit, fmt, scale)
    return ParsedNumber(value, None, body if body != "0" else "General", scale)


def _scaled(digits: str, scale: str) -> str:
    """``digits`` (``1.2``) times the size unit ``scale`` (``万``), exactly (Decimal, never a
    float product): ``12000``; a fraction keeps only its significant decimals."""
    factor = MULTIPLIERS[scale if not scale.isascii() else scale.lower()]
    product = (Decimal(digits) * factor).normalize()
    return f"{product:f}"


@dataclass(frozen=True, slots=True)
class _DateForm:
    """A date text split into fields; ``order`` says what the text itself proves."""

    a: int
    b: int
    year: int
    proves: DateOrder | None  # from the text alone (a field over 12, or a month name)
    hint: DateOrder | None  # weaker evidence (a "." separator, a name's position)
    when: datetime | None = None  # set for forms that need no order (ISO, CJK)


def _year(text: str) -> int:
    year = int(text)
    return year + (2000 if year < 70 else 1900) if len(text) == 2 else year


def _date_form(text: str) -> _DateForm | None:
    s = text.strip()
    if m := _ISO.match(s):
        try:
            when = datetime(
                int(m[1]), int(m[2]), int(m[3]), int(m[4] or 0), int(m[5] or 0), int(m[6] or 0)
            )
        except ValueError:
            return None
        return _DateForm(0, 0, when.year, None, None, when)
    if m := _CJK_DATE.match(s):
        try:
            return _DateForm(0, 0, 0, None, None, datetime(int(m[1]), int(m[2]), int(m[3])))
        except ValueError:
            return None
    if m := _NUMERIC_DATE.match(s):
        a, b, year = int(m[1]), int(m[3]), _year(m[4])
        proves: DateOrder | None = "dmy" if a > 12 else "mdy" if b > 12 else None
        hint: DateOrder | None = "dmy" if m[2] == "." else None
        return _DateForm(a, b, year, proves, hint)
    if m := _DAY_NAME.match(s):
        month = _MONTHS.get(m[2].lower())
        if month is None:
            return None
        return _DateForm(int(m[1]), month, int(m[3]), "dmy", "dmy")
    if m := _NAME_DAY.match(s):
        month = _MONTHS.get(m[1].lower())
        if month is None:
            return None
        return _DateForm(month, int(m[2]), int(m[3]), "mdy", "mdy")
    return None


def _form_date(form: _DateForm, order: DateOrder) -> datetime | None:
    if form.when is not None:
        return form.when
    day, month = (form.a, form.b) if order == "dmy" else (form.b, form.a)
    try:
        return datetime(form.year, month, day)
    except ValueError:
        return None


def parse_date(text: str, order: DateOrder | None = None) -> datetime | None:
    """Read one date stored as text; ``order`` resolves ``a/b/yyyy`` forms.

    Without ``order``, only forms that prove their own order are read.

    Example:
        >>> parse_date("2024-03-01").date(), parse_date("Feb 10, 2025").date()
        (datetime.date(2024, 3, 1), datetime.date(2025, 2, 10))
        >>> parse_date("03/04/2024") is None, parse_date("03/04/2024", "dmy").month
        (True, 4)
    """
    form = _date_form(text)
    if form is None:
        return None
    if form.when is not None:
        return form.when
    chosen = order or form.proves
    if chosen is None:
        return None
    return _form_date(form, chosen)


@dataclass(slots=True)
class ColumnConversion:
    """What :func:`convert_column` decided for one column's text values.

    Attributes:
        kind: ``number``, ``date`` or None (left as text).
        values: Per input text, the parsed value or None (left as text).
        formats: Per input text, the number format of the parsed value.
        note: What was inferred (``day first, from 13/01/2025``) or why cells were left out.
        reason: Why the column was left as text (None when converted).
        left_out: Input positions left as text inside a converted column.
        blank: Input positions that say "no value" (``-``, ``$ -``, ``n/a``): empty cells.
        currencies: Per input text, its currency, when the column holds several (its values
            must not be added up together); None when it holds one or none.
    """

    kind: Literal["number", "date"] | None
    values: list[int | float | datetime | None] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    note: str | None = None
    reason: str | None = None
    left_out: list[int] = field(default_factory=list)
    blank: list[int] = field(default_factory=list)
    currencies: list[str | None] | None = None


def _share_ok(parsed: int, total: int) -> bool:
    return total > 0 and parsed * 10 >= total * 9


def _styles(
    texts: list[str], evidence: dict[int, set[NumberStyle]]
) -> tuple[dict[int, NumberStyle], str]:
    """The convention of each numeric text, and the note that says how it was decided.

    One convention for the column when its values agree. When some values prove the US
    convention and others the European one (``$1,234.50`` beside ``1.234,50 €``), each value
    that proves its own is read so, and an ambiguous one (``1,234``) takes the convention of
    the values in its currency; when those disagree too, it is left out (and said).
    """
    proofs: dict[NumberStyle, str] = {}
    for i, e in evidence.items():
        if len(e) == 1:
            proofs.setdefault(next(iter(e)), texts[i])
    if len(proofs) < 2:
        style: NumberStyle = "eu" if "eu" in proofs else "us"
        where = f" (from {proofs[style]!r})" if proofs else ""
        note = (
            "text read as numbers, European convention" if style == "eu" else "text read as numbers"
        ) + where
        return {i: style for i in evidence}, note
    by_currency: dict[str | None, Counter[NumberStyle]] = {}
    for i, e in evidence.items():
        if len(e) == 1:
            unit = currency(_marker(texts[i]))
            by_currency.setdefault(unit, Counter())[next(iter(e))] += 1
    styles: dict[int, NumberStyle] = {}
    unsure: list[str] = []
    for i, e in evidence.items():
        if len(e) == 1:
            styles[i] = next(iter(e))
            continue
        local = by_currency.get(currency(_marker(texts[i])))
        if local and len(local) == 1:
            styles[i] = next(iter(local))
        elif (grouped := _money_grouping(texts[i])) is not None:
            styles[i] = grouped
        else:
            unsure.append(texts[i])  # its currency's values disagree too: left out
    note = (
        f"text read as numbers in two conventions, each value by its own separators (US "
        f"from {proofs['us']!r}, European from {proofs['eu']!r})"
    )
    if unsure:
        note += (
            f"; {len(unsure)} value(s) that read either way left out ({unsure[0]!r}: "
            "thousands or decimals cannot be told)"
        )
    return styles, note


def _money_grouping(text: str) -> NumberStyle | None:
    """The convention of an amount that reads either way: none needed when it has no
    separator (``¥300``); with a currency, one kind of separator before exactly three last
    digits groups thousands (``¥1,200`` is 1,200, not 1.2: money has 0 or 2 decimals)."""
    match = _NUMBER_TEXT.match(unicodedata.normalize("NFKC", text).strip())
    if match is None:
        return None
    num = match["num"]
    if num.isdigit():
        return "us"
    seps = {ch for ch in num if not ch.isdigit()}
    if _marker(text) and len(seps) == 1 and re.search(r"\d[.,]\d{3}$", num):
        return "us" if seps == {","} else "eu"
    return None


def _marker(text: str) -> str | None:
    match = _NUMBER_TEXT.match(unicodedata.normalize("NFKC", text).strip())
    if not match:
        return None
    return match["cur0"] or match["cur1"] or match["cur2"] or match["cur3"]


def _convert_numbers(texts: list[str]) -> ColumnConversion | None:
    blank = [i for i, t in enumerate(texts) if _PLACEHOLDER.match(unicodedata.normalize("NFKC", t))]
    real = [i for i in range(len(texts)) if i not in set(blank)]
    evidence = {i: number_evidence(texts[i]) for i in real}
    numeric = {i: e for i, e in evidence.items() if e}
    if not numeric or not _share_ok(len(numeric), len(real)):
        return None
    styles, note = _styles(texts, numeric)
    parsed = {i: parse_number(texts[i], styles[i]) if i in styles else None for i in real}
    good = [p for p in parsed.values() if p is not None]
    if not _share_ok(len(good), len(real)):
        return ColumnConversion(
            None, reason=f"only {len(good)} of {len(real)} values read as numbers"
        )
    units = {c for p in good if (c := currency(p.unit)) is not None}
    if len(units) > 1 and "%" in units:
        return ColumnConversion(
            None, reason=f"values in different units ({', '.join(sorted(units))})"
        )
    if blank:
        note += f"; {len(blank)} dash or n/a value(s) read as empty"
    scaled = [i for i in real if (got := parsed[i]) is not None and got.scale]
    if scaled:
        scales = sorted({got.scale for i in scaled if (got := parsed[i]) and got.scale})
        first = parsed[scaled[0]]
        note += (
            f"; size units applied ({', '.join(scales)}) to {len(scaled)} value(s): "
            f"{texts[scaled[0]]!r} read as {first.value if first else ''}"
        )
    values: list[int | float | datetime | None] = [
        got.value if (got := parsed.get(i)) else None for i in range(len(texts))
    ]
    out = ColumnConversion(
        "number",
        values=values,
        formats=[
            got.number_format if (got := parsed.get(i)) else "General" for i in range(len(texts))
        ],
        note=note,
        left_out=[i for i in real if parsed[i] is None],
        blank=blank,
    )
    if len(units) > 1:  # several currencies: each value keeps its own (never summed together)
        out.currencies = [
            currency(got.unit) if (got := parsed.get(i)) else None for i in range(len(texts))
        ]
        out.note = f"{note}; values in {len(units)} currencies ({', '.join(sorted(units))})"
    return out


def _convert_dates(texts: list[str]) -> ColumnConversion | None:
    forms = [_date_form(t) for t in texts]
    known = [f for f in forms if f is not None]
    if not _share_ok(len(known), len(texts)):
        return None
    proofs = {
        f.proves: t
        for f, t in zip(forms, texts, strict=True)
        if f is not None and f.proves and f.when is None and _NUMERIC_DATE.match(t.strip())
    }
    hints = {f.hint: t for f, t in zip(forms, texts, strict=True) if f is not None and f.hint}
    note: str | None = None
    order: DateOrder | None
    if len(proofs) == 2:
        return ColumnConversion(
            None,
            reason=f"dates written both day first ({proofs['dmy']!r}) and month first "
            f"({proofs['mdy']!r})",
        )
    if proofs:
        order, witness = next(iter(proofs.items()))
        note = f"{'day' if order == 'dmy' else 'month'} first, from {witness!r}"
    elif len(hints) == 1:
        order, witness = next(iter(hints.items()))
        note = (
            f"read {'day' if order == 'dmy' else 'month'} first from the column's other "
            f"evidence ({witness!r})"
        )
    else:
        order = None
    values: list[int | float | datetime | None] = []
    left: list[int] = []
    for i, form in enumerate(forms):
        when = None
        if form is not None:
            if form.when is not None or order is not None:
                when = _form_date(form, order or "dmy")
            elif form.proves is not None:
                when = _form_date(form, form.proves)
        values.append(when)
        if when is None:
            left.append(i)
    ambiguous = [texts[i] for i in left if forms[i] is not None]
    if ambiguous:
        note = (note + "; " if note else "") + (
            f"{len(ambiguous)} ambiguous date(s) left out ({ambiguous[0]!r}: day or month "
            "first cannot be told from the column)"
        )
    if not _share_ok(len(texts) - len(left), len(texts)):
        return ColumnConversion(None, reason=note or "dates that cannot be read unambiguously")
    return ColumnConversion(
        "date",
        values=values,
        formats=[
            "yyyy-mm-dd"
            if not isinstance(v, datetime) or v.time() == datetime.min.time()
            else "yyyy-mm-dd hh:mm"
            for v in values
        ],
        note=note,
        left_out=left,
    )


def convert_column(texts: list[str]) -> ColumnConversion:
    """Decide how to read a column's text values (see the module docstring).

    Args:
        texts: The column's text cells (stripped, non-empty), in row order.

    Returns:
        A :class:`ColumnConversion`; ``kind`` None means the column stays text (``reason``
        says why when the values looked like numbers or dates, else it is None: plain text).

    Example:
        >>> c = convert_column(["05/01/2025", "13/01/2025"])
        >>> c.kind, [v.day for v in c.values], c.note
        ('date', [5, 13], "day first, from '13/01/2025'")
    """
    if not texts:
        return ColumnConversion(None)
    return _convert_numbers(texts) or _convert_dates(texts) or ColumnConversion(None)


def cell_value(text: str) -> tuple[int | float | datetime, str, Literal["number", "date"]] | None:
    """A single text cell as ``(value, number format, kind)`` when it reads as a number or an
    ISO/CJK date on its own; None otherwise.

    This is the per-cell step both paths share (the CSV backend types its fields with it, as
    Excel does on opening a CSV). ``1,234`` reads with the US convention here; the column step
    (:func:`convert_column`, run on every column's original texts) reads it again with the
    column's convention, so one cell never decides for its column.

    Example:
        >>> cell_value("12.5%")
        (0.125, '0.0%', 'number')
        >>> cell_value("1.234,50")[0], cell_value("03/04/2024")
        (1234.5, None)
    """
    stripped = text.strip()
    for style in ("us", "eu"):
        parsed = parse_number(stripped, style)
        if parsed is not None:
            return parsed.value, parsed.number_format, "number"
    if _ISO.match(stripped) or _CJK_DATE.match(stripped):
        when = parse_date(stripped)
        if when is not None:
            timed = when.time() != datetime.min.time() or len(stripped) > 10
            return when, "yyyy-mm-dd hh:mm" if timed else "yyyy-mm-dd", "date"
    return None


def is_date_value(value: object) -> bool:
    """True for a date or datetime (helper for callers that type cells)."""
    return isinstance(value, date)
