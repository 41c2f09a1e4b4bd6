"""The claim checker of report narratives: each model sentence is checked against the figure
ledger (:class:`~workflows.excel_report.figures.Figure`) before a reader sees it.

A sentence is kept only when every rule holds (English and Chinese cue words):

* **entity**: each figure it cites is named: the group of a group figure (``Consumer`` for
  ``total `Sales` where `Segment` = `Consumer```), the column of a column figure, the period
  of a period figure, the column and both periods of a change (in order); a period or group
  of the ledger that no cited figure is about may not be named. A row count needs no name.
* **kind**: each cited figure has a word of its kind (share, total, change, count, extreme
  value, average); a kind word the sentence uses ("share") needs a cited figure of that kind.
* **rank**: a superlative ("largest", "最高") needs a cited figure that is first (or last, for
  "smallest") among its siblings: the other groups of the same breakdown, the other periods,
  the other changes; the column's max (min) value, the first top row, the earliest (latest)
  date. "Smallest" of a breakdown needs the whole breakdown in the ledger (shares summing to 1).
* **sign**: a direction ("rose", "下降") needs a cited change of that sign; "more/less than"
  needs the first cited figure to be the larger (smaller).
* **grounded**: a superlative, direction or comparison that cites no figure is dropped; so is
  a sentence naming a capitalised name that is in neither the ledger nor the workbook
  ("Retail" where no such group exists) or a word that is neither English nor the workbook's
  ("insideheading"), a sentence whose number was not a figure (a hole),
  and a sentence that cites an unknown figure id.

Repeated phrases inside a sentence ("over {F1} over {F1} rows") are collapsed before the
check; repeated sentences and equivalent headings ("Key finding", "Key findings") are merged by
:mod:`workflows.excel_report.checked`.

Hand-written on purpose: it is workflow logic over this project's own ledger, and the cue
lists are data a reader can review (no library checks claims against a figure ledger).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from wordfreq import zipf_frequency

from workflows.excel_report.figures import Figure

KINDS = ("share", "total", "change", "count", "extreme", "average", "unknown")

KIND_OF_OPERATION = {
    "group_share": "share",
    "sum": "total",
    "group_sum": "total",
    "period_sum": "total",
    "change": "change",
    "pct_change": "change",
    "count_rows": "count",
    "count": "count",
    "group_count": "count",
    "period_count": "count",
    "error_cells": "unknown",
    "min": "extreme",
    "max": "extreme",
    "top_row": "extreme",
    "earliest": "extreme",
    "latest": "extreme",
    "mean": "average",
    "median": "average",
    "weighted_mean": "average",
    "group_mean": "average",
    "period_mean": "average",
}

_EN = {
    "share": r"shares?|portion|proportion|percent(?:age)? of|accounts? for|makes? up|"
    r"contribut\w*",
    "total": r"totals?|totall?ed|totalling|sum(?:med|s)?|came to|comes? to|amounts? to|"
    r"adds? up to|in all|altogether|overall|combined|revenue of|aggregate",
    "change": r"chang\w*|r[io]se|risen|rising|grew|grow\w*|increas\w*|f[ae]ll|fallen|falling|"
    r"declin\w*|drop\w*|decreas\w*|jump\w*|climb\w*|gain\w*|slipp?\w*|shr[aiu]nk\w*|"
    r"dipp?\w*|year[- ]on[- ]year|from .{1,40}? to|up by|down by",
    "count": r"rows?|records?|entries|entry|counts?|number of|lines?|orders?|transactions?",
    "extreme": r"largest|biggest|greatest|highest|smallest|lowest|least|maximum|minimum|max|"
    r"min|peak\w*|top|bottom|best|worst|earliest|latest|first|last|most recent|oldest|newest|"
    r"ranges? from|range|between|span\w*|extremes?",
    "average": r"average\w*|mean|median|typical\w*|per (?:row|order|record)|on average",
    "unknown": r"unknown|errors?|missing|blank|unreadable|uncached",
}
_ZH = {
    "share": r"占比|占|份额|比例|比重|构成",
    "total": r"合计|总计|总额|总和|共计|总共|累计|总量|总",
    "change": r"变化|变动|增长|上升|增加|提高|上涨|下降|减少|降低|下滑|下跌|回落|同比|环比|较",
    "count": r"行|条|记录|笔|数量|个数|件",
    "extreme": r"最高|最低|最大|最小|最多|最少|最早|最晚|最近|最新|峰值|介于|之间|范围|首位|"
    r"末位|第一",
    "average": r"平均|均值|中位数|人均|均",
    "unknown": r"未知|错误|缺失|无法读取|空",
}
KIND_CUES = {k: re.compile(rf"(?<![A-Za-z])(?:{_EN[k]})(?![A-Za-z])|{_ZH[k]}", re.I) for k in KINDS}
#: Kind words that claim a kind on their own: "share" claims a share even with a total cited.
#: Total words are left out ("share of total Sales", "total number of rows" are fine).
CLAIMING = {
    "share": re.compile(
        r"(?<![A-Za-z])(?:shares?|portion|proportion)(?![A-Za-z])|占比|份额|比重", re.I
    ),
    "change": re.compile(
        r"(?<![A-Za-z])(?:r[io]se|risen|grew|increas\w*|f[ae]ll|fallen|declin\w*|drop\w*|"
        r"decreas\w*|grow\w*|jump\w*|climb\w*)(?![A-Za-z])|增长|上升|增加|上涨|下降|减少|下滑|下跌|回落",
        re.I,
    ),
    "average": re.compile(
        r"(?<![A-Za-z])(?:average\w*|mean|median)(?![A-Za-z])|平均|均值|中位数", re.I
    ),
}

_TOP = (
    r"largest|biggest|greatest|highest|most|top|leading|leads?|led|maximum|max|peak\w*|best|"
    r"first place|dominat\w*|ahead of all"
)
_BOTTOM = r"smallest|lowest|least|fewest|minimum|min|bottom|worst|last place|trails?"
SUPERLATIVE = {
    "top": re.compile(
        rf"(?<![A-Za-z])(?:{_TOP})(?![A-Za-z])|最高|最大|最多|最好|领先|居首|第一|之首|峰值", re.I
    ),
    "bottom": re.compile(
        rf"(?<![A-Za-z])(?:{_BOTTOM})(?![A-Za-z])|最低|最小|最少|最差|垫底|末位", re.I
    ),
}
DATE_EDGE = {
    "top": re.compile(
        r"(?<![A-Za-z])(?:latest|last|most recent|newest)(?![A-Za-z])|最晚|最近|最新", re.I
    ),
    "bottom": re.compile(r"(?<![A-Za-z])(?:earliest|first|oldest)(?![A-Za-z])|最早", re.I),
}
DIRECTION = {
    "up": re.compile(
        r"(?<![A-Za-z])(?:r[io]se|risen|rising|grew|grow(?:s|ing|th)?|increas\w*|jump\w*|"
        r"climb\w*|gain\w*|up|higher|surg\w*|improv\w*|rebound\w*)(?![A-Za-z])|"
        r"增长|上升|增加|提高|上涨|回升|攀升",
        re.I,
    ),
    "down": re.compile(
        r"(?<![A-Za-z])(?:f[ae]ll|fallen|falling|declin\w*|drop\w*|decreas\w*|down|lower|"
        r"shr[aiu]nk\w*|slipp?\w*|dipp?\w*|slump\w*|contract\w*)(?![A-Za-z])|"
        r"下降|减少|降低|下滑|下跌|回落|萎缩",
        re.I,
    ),
}
COMPARE = {
    "more": re.compile(
        r"(?<![A-Za-z])(?:more|larger|bigger|greater|higher|above|exceed\w*|outpac\w*)\s+"
        r"(?:\w+\s+)?than(?![A-Za-z])|(?:高于|多于|大于|超过)",
        re.I,
    ),
    "less": re.compile(
        r"(?<![A-Za-z])(?:less|fewer|smaller|lower|below)\s+(?:\w+\s+)?than(?![A-Za-z])|"
        r"(?:低于|少于|小于)",
        re.I,
    ),
}
ORDINAL = re.compile(r"(?<![A-Za-z])(second|third|2nd|3rd)(?![A-Za-z])|第二|第三", re.I)
_ORDINAL_RANK = {"first": 1, "second": 2, "third": 3}
#: Where a cited figure was in the sentence (its display and id were replaced by this).
FIG = "\ue010"
_FILTER_EQ = re.compile(r"`([^`]*)`\s*=\s*`([^`]*)`")
_FILTER_IN = re.compile(r"`([^`]*)`\s+in\s+`([^`]*)`")
_FROM_TO = re.compile(r"from `([^`]*)` to `([^`]*)`")
_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][A-Za-z&'’.-]*[A-Za-z]")

#: Capitalised words that are no name: sentence starters and report words.
_COMMON_TEXT = """
    a about above across after all almost also among an and any are around as at average
    based be because before below between both but by came change changes column columns
    compared count data date dates during each earliest entries entry every fell figure
    figures finding findings first for from grew growth has have here highest highlight
    highlights however if in insight insights it its key largest last latest least less
    lowest mean median more most much nearly no not note notes number of on one only or
    other over overall overview per percent period periods rank record records report rose
    row rows section sections see share shares since smallest so some summary table
    tables than that the their them then there these they this those three through to top
    total totals trend trends two under up value values was we were what when where which
    while with year years you your
    """
COMMON_WORDS = frozenset(_COMMON_TEXT.split())
#: A word: a run of letters and digits, or of CJK characters (so "Sales合计" is two words).
_WORD = re.compile(r"[^\W\u4e00-\u9fff]+|[\u4e00-\u9fff]+")


def _norm(text: str) -> str:
    """Casefolded words joined by single spaces (punctuation and backticks dropped)."""
    return " ".join(_WORD.findall(text.casefold()))


def _contains(haystack: str, name: str) -> bool:
    """True when the normalised ``haystack`` holds ``name`` as whole words (CJK: anywhere);
    an English plural or singular of the last word counts."""
    needle = _norm(name)
    if not needle:
        return False
    if re.search(r"[\u4e00-\u9fff]", needle):
        return needle in haystack
    forms = {needle, needle + "s", needle[:-1] if needle.endswith("s") else needle}
    return any(re.search(rf"(?<!\w){re.escape(f)}(?!\w)", haystack) for f in forms)


@dataclass(frozen=True)
class Subject:
    """What a figure is about, read from its provenance and label.

    Attributes:
        kind: One of :data:`KINDS`.
        column: The column it describes (None for a table's row count).
        group: The group value of a group figure (``Consumer``).
        dimension: The grouping column of a group figure (``Segment``).
        periods: The period(s): one for a period figure, (from, to) for a change.
        rank: 1..3 for a top row, else None.
    """

    kind: str
    column: str | None
    group: str | None
    dimension: str | None
    periods: tuple[str, ...]
    rank: int | None


def subject(figure: Figure) -> Subject:
    """The :class:`Subject` of ``figure``."""
    p = figure.provenance
    group = dimension = None
    periods: tuple[str, ...] = ()
    if p.filter:
        eq, within = _FILTER_EQ.search(p.filter), _FILTER_IN.search(p.filter)
        if eq:
            dimension, group = eq.group(1), eq.group(2)
        elif within:
            periods = (within.group(2),)
        elif p.filter.endswith(" empty"):
            dimension, group = p.filter.split("`")[1], "empty"
    if p.operation in ("change", "pct_change"):
        found = _FROM_TO.search(figure.label)
        periods = (found.group(1), found.group(2)) if found else ()
    rank = None
    if p.operation == "top_row":
        rank = _ORDINAL_RANK.get(figure.label.split(" ", 1)[0], 1)
    column = figure.column if p.operation != "count_rows" else None
    if p.operation in ("group_count", "group_share") and "rows with" in figure.label:
        column = None  # a count of rows per group: about the group, not a measure
    if p.operation == "period_count":
        column = None
    return Subject(KIND_OF_OPERATION[p.operation], column, group, dimension, periods, rank)


class Ledger:
    """The figures of one analysis, with what the checker needs of each (siblings, names).

    Args:
        figures: Figure id → figure (the analysis's :meth:`~Analysis.by_id`).
        names: Other names a sentence may use: the workbook's file, sheet, table and column
            names and the text values of its columns (lower-case compared).
    """

    def __init__(self, figures: Mapping[str, Figure], names: Iterable[str] = ()) -> None:
        self.figures = dict(figures)
        self.subjects = {fid: subject(f) for fid, f in self.figures.items()}
        words: set[str] = set()
        for text in [*names, *(f.label for f in self.figures.values())]:
            words.update(_norm(text).split())
        self.vocabulary = frozenset(words)
        self.periods = frozenset(p for s in self.subjects.values() for p in s.periods)
        self.groups = frozenset(s.group for s in self.subjects.values() if s.group)
        self.cjk_names = frozenset(w for w in words if re.fullmatch(r"[\u4e00-\u9fff]+", w))

    def siblings(self, fid: str) -> list[Figure]:
        """Figures of the same series as ``fid``: the same operation over the same cells and
        grouping column (all groups of a breakdown, all periods, all changes)."""
        f, s = self.figures[fid], self.subjects[fid]
        return [
            g
            for gid, g in self.figures.items()
            if g.provenance.operation == f.provenance.operation
            and g.provenance.cells == f.provenance.cells
            and g.table_id == f.table_id
            and g.column == f.column
            and self.subjects[gid].dimension == s.dimension
        ]

    @cached_property
    def complete_breakdowns(self) -> frozenset[tuple[str, str | None, str | None]]:
        """(cells, column, dimension) of breakdowns whose shares sum to 1: every group is in
        the ledger, so the last of them is the smallest."""
        sums: dict[tuple[str, str | None, str | None], float] = {}
        for fid, f in self.figures.items():
            if f.provenance.operation == "group_share" and isinstance(f.value, int | float):
                key = (f.provenance.cells, f.column, self.subjects[fid].dimension)
                sums[key] = sums.get(key, 0.0) + float(f.value)
        return frozenset(k for k, v in sums.items() if abs(v - 1.0) < 1e-6)

    def position(self, fid: str) -> tuple[bool, bool]:
        """(is the largest, is the smallest) of ``fid`` among its siblings, as far as the
        ledger can tell (a breakdown's smallest only when the breakdown is complete)."""
        f, s = self.figures[fid], self.subjects[fid]
        op = f.provenance.operation
        if op in ("max", "latest"):
            return True, False
        if op in ("min", "earliest"):
            return False, True
        if op == "top_row":
            return s.rank == 1, False
        if op in ("sum", "mean", "median", "count_rows", "count", "weighted_mean", "error_cells"):
            return False, False
        values = [float(g.value) for g in self.siblings(fid) if isinstance(g.value, int | float)]
        if len(values) < 2 or not isinstance(f.value, int | float):
            return False, False
        value = float(f.value)
        largest = value >= max(values)
        smallest = value <= min(values)
        if s.group is not None and smallest:
            key = (f.provenance.cells, f.column, s.dimension)
            shares_key = key in self.complete_breakdowns or any(
                k[1] == f.column and k[2] == s.dimension for k in self.complete_breakdowns
            )
            smallest = shares_key
        return largest, smallest


def _entity_reason(text: str, fid: str, s: Subject) -> str | None:
    """Why the sentence fails to name what ``fid`` is about, or None (the reason names no
    workbook text: it goes into the report's notes)."""
    if s.group is not None:
        return None if _contains(text, s.group) else f"cites {fid} without naming its group"
    if s.column is not None and not _contains(text, s.column):
        return f"cites {fid} without naming its column"
    if s.periods and not all(_contains(text, p) for p in s.periods):
        return f"cites {fid} without naming its period (both ends of a change)"
    return None


def _period_reason(text: str, cited: list[str], ledger: Ledger) -> str | None:
    """A period or group the sentence names must be one a cited figure is about ("from 2021
    to 2021" for a change from 2021 to 2022 fails; so does "Sales in North add up to" the
    total of all regions)."""
    mine = {ledger.subjects[fid].group for fid in cited}
    columns = {_norm(f.column) for f in ledger.figures.values() if f.column}
    for group in ledger.groups - mine:
        key = _norm(group)
        if key in COMMON_WORDS or key in columns or not _contains(text, group):
            continue
        if not any(_contains(_norm(m), group) for m in mine if m):  # "East" inside "North East"
            return f"names the group {group}, which no cited figure is about"
    allowed = {p for fid in cited for p in ledger.subjects[fid].periods}
    for period in ledger.periods - allowed:
        if _contains(text, period):
            return f"names the period {period}, which no cited figure is about"
    for fid in cited:
        periods = ledger.subjects[fid].periods
        if len(periods) == 2 and periods[0] != periods[1]:
            first, last = (_norm(p) for p in periods)
            at_first, at_last = text.find(first), text.find(last)
            if at_first >= 0 and at_last >= 0 and at_first > at_last:
                return f"names the periods of {fid} in the wrong order"
    return None


def _kind_reasons(norm: str, raw: str, claims: str, cited: list[str], ledger: Ledger) -> str | None:
    """Each cited figure needs a word of its kind (names included: "Sales total"); each
    claiming kind word outside the names needs a cited figure of that kind."""
    kinds = {ledger.subjects[fid].kind for fid in cited}
    for fid in cited:
        s = ledger.subjects[fid]
        if s.kind == "total" and not any(KIND_CUES[k].search(claims) for k in KINDS):
            continue  # "Consumer sales of {F26}": a measure's amount reads as its total
        if not KIND_CUES[s.kind].search(raw) and not (s.rank and ORDINAL.search(raw)):
            return f"no word says what {fid} is (a {s.kind} figure)"
    for kind, cue in CLAIMING.items():
        found = cue.search(claims)
        if found and kind not in kinds:
            if kind == "change" and "extreme" in kinds and "range" in norm:
                continue
            return f'says "{found.group(0)}" but cites no {kind} figure'
    return None


def _supports(end: str, fid: str, raw: str, ledger: Ledger) -> bool:
    """True when ``fid`` is the ``end`` (``top`` or ``bottom``) of its series; a second or
    third top row supports "largest" only with its ordinal ("second largest")."""
    rank = ledger.subjects[fid].rank
    if rank is not None:
        return end == "top" and (rank == 1 or bool(ORDINAL.search(raw)))
    largest, smallest = ledger.position(fid)
    return largest if end == "top" else smallest


def _ordinal_reason(raw: str, cited: list[str], ledger: Ledger) -> str | None:
    """ "Second largest" needs a cited figure that is second: a second top row, or the
    second of its series."""
    found = ORDINAL.search(raw)
    if not found:
        return None
    word = found.group(0).casefold()
    want = 2 if word in ("second", "2nd", "第二") else 3
    for fid in cited:
        rank = ledger.subjects[fid].rank
        if rank is None and ledger.figures[fid].provenance.operation not in ("max", "min"):
            series = [
                float(g.value) for g in ledger.siblings(fid) if isinstance(g.value, int | float)
            ]
            value = ledger.figures[fid].value
            if isinstance(value, int | float):
                rank = 1 + sum(v > float(value) for v in series)
        if rank == want:
            return None
    return f'says "{found.group(0)}" but no cited figure is {found.group(0)} of its series'


def _rank_reason(raw: str, cited: list[str], ledger: Ledger) -> str | None:
    if reason := _ordinal_reason(raw, cited, ledger):
        return reason
    for end, cue in SUPERLATIVE.items():
        found = cue.search(raw)
        if found and not any(_supports(end, fid, raw, ledger) for fid in cited):
            which = "largest" if end == "top" else "smallest"
            return f'says "{found.group(0)}" but no cited figure is the {which} of its series'
    ops = {ledger.figures[f].provenance.operation for f in cited}
    for end, cue in DATE_EDGE.items():
        found = cue.search(raw)
        want = "latest" if end == "top" else "earliest"
        if found and ops & {"earliest", "latest"} and want not in ops:
            return f'says "{found.group(0)}" but cites the other end of the dates'
    return None


def _sign_reason(raw: str, cited: list[str], ledger: Ledger) -> str | None:
    changes = [
        float(ledger.figures[f].value)
        for f in cited
        if ledger.subjects[f].kind == "change" and isinstance(ledger.figures[f].value, int | float)
    ]
    for way, cue in DIRECTION.items():
        found = cue.search(raw)
        if not found or COMPARE["more" if way == "up" else "less"].search(raw):
            continue
        if not changes:
            if found.group(0).casefold() in ("up", "down", "lower", "higher"):
                continue  # "up to", "broken down", without a change: no direction claimed
            return f'says "{found.group(0)}" but cites no change'
        if not any((v > 0) if way == "up" else (v < 0) for v in changes):
            sign = "positive" if way == "up" else "negative"
            return f'says "{found.group(0)}" but the cited change is not {sign}'
    values = [ledger.figures[f].value for f in cited]
    numbers = [float(v) for v in values if isinstance(v, int | float)]
    for way, cue in COMPARE.items():
        found = cue.search(raw)
        if not found:
            continue
        if len(numbers) < 2:
            return f'compares ("{found.group(0)}") without citing both figures'
        a, b = numbers[0], numbers[1]
        if (way == "more" and not a > b) or (way == "less" and not a < b):
            size = "larger" if way == "more" else "smaller"
            return f'says "{found.group(0)}" but the first cited figure is not {size}'
    return None


_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")
_CJK_OWNER = re.compile(r"([\u4e00-\u9fff]{2,})的")


def _unknown_cjk(raw: str, ledger: Ledger) -> str | None:
    """A Chinese name that is in neither the ledger nor the workbook: any CJK run of a
    mostly English sentence, and the owner before 的 in a Chinese one ("零售的销售额")."""
    latin = len(re.findall(r"[A-Za-z]", raw))
    cjk = len(re.findall(r"[\u4e00-\u9fff]", raw))
    runs = _CJK_RUN.findall(raw) if latin > 3 * cjk else _CJK_OWNER.findall(raw)
    cues = [*KIND_CUES.values(), *SUPERLATIVE.values(), *DIRECTION.values(), *COMPARE.values()]
    for run in runs:
        if any(cue.fullmatch(run) for cue in cues):
            continue
        if not any(run.endswith(name) or name.endswith(run) for name in ledger.cjk_names):
            return f'names "{run}", which is not in the workbook'
    return None


def _garbled(raw: str, ledger: Ledger) -> str | None:
    """A Latin word that is neither English (wordfreq's list, the dictionary the moderation
    lexicon uses too) nor in the workbook: glued or broken words ("insideheading")."""
    for word in re.findall(r"[A-Za-z]{3,}", raw):
        folded = word.casefold()
        if folded not in ledger.vocabulary and zipf_frequency(folded, "en") == 0:
            return f'writes "{word}", which is no word'
    return None


def _unknown_name(raw_without_figures: str, ledger: Ledger) -> str | None:
    if reason := _unknown_cjk(raw_without_figures, ledger) or _garbled(raw_without_figures, ledger):
        return reason
    for word in _CAPITALISED.findall(raw_without_figures):
        parts = _norm(word).split()
        if not parts or all(p in COMMON_WORDS or p in ledger.vocabulary for p in parts):
            continue
        return f'names "{word}", which is not in the workbook'
    return None


NEGATIVE = re.compile(
    r"(?<![A-Za-z])(?:loss|losses|negative|deficit|shortfall)(?![A-Za-z])|亏损|为负|负值", re.I
)
#: Phrases that hold a superlative word but claim no rank.
_NO_RANK = re.compile(r"(?<![A-Za-z])at (?:least|most)(?![A-Za-z])|至少|至多|最多不超过", re.I)


def _without_names(raw: str, cited: list[str], ledger: Ledger) -> str:
    """``raw`` without the cited figures' column, group and period names: a column named
    "Average Price" or a group named "Top" claims nothing."""
    names: set[str] = set()
    for fid in cited:
        s = ledger.subjects[fid]
        names.update(n for n in (s.column, s.group, s.dimension, *s.periods) if n)
    for name in sorted(names, key=len, reverse=True):
        raw = re.sub(re.escape(name), " ", raw, flags=re.I)
    return _NO_RANK.sub(" ", raw)


def check_claim(text: str, cited: list[str], ledger: Ledger) -> str | None:
    """Why the sentence ``text`` is false or unsupported, or None when it may be shown.

    Args:
        text: One sentence, with each cited figure's value replaced by :data:`FIG` and no
            other number in it (the caller drops a sentence with a hole first).
        cited: The ids of the figures it cites (inline, or a finding's ``figure_ids``).
        ledger: The analysis's figures.

    Returns:
        A one-line reason naming the rule and the figure, or None.
    """
    raw = text.replace(FIG, " ")
    cited = [fid for fid in dict.fromkeys(cited) if fid in ledger.figures]
    if not cited:
        bare = _NO_RANK.sub(" ", raw)
        for table in (SUPERLATIVE, DIRECTION, COMPARE):
            for cue in table.values():
                found = cue.search(bare)
                if found and found.group(0).casefold() not in ("up", "down", "top"):
                    return f'says "{found.group(0)}" without citing a figure'
        return _unknown_name(raw, ledger)
    norm = _norm(raw)
    for fid in cited:
        reason = _entity_reason(norm, fid, ledger.subjects[fid])
        if reason:
            return reason
    if reason := _period_reason(norm, cited, ledger):
        return reason
    claims = _without_names(raw, cited, ledger)
    negative = NEGATIVE.search(claims)
    if negative and not any(
        isinstance(ledger.figures[f].value, int | float) and float(ledger.figures[f].value) < 0
        for f in cited
    ):
        return f'says "{negative.group(0)}" but no cited figure is negative'
    return (
        _kind_reasons(_norm(claims), raw, claims, cited, ledger)
        or _rank_reason(claims, cited, ledger)
        or _sign_reason(claims, cited, ledger)
        or _unknown_name(raw, ledger)
    )


_TOKEN_REPEAT_MAX = 8


def collapse_repeats(text: str) -> str:
    """Remove a word sequence repeated right after itself: ``"over {F1} over {F1} rows"`` →
    ``"over {F1} rows"``; ``"共 {F1} 行 共 {F1} 行"`` → ``"共 {F1} 行"``; a run of two or
    more CJK characters repeated (``"销售额销售额"``) is kept once."""
    tokens = text.split()
    i = 0
    while i < len(tokens):
        for n in range(min(_TOKEN_REPEAT_MAX, (len(tokens) - i) // 2), 0, -1):
            if [t.casefold() for t in tokens[i : i + n]] == [
                t.casefold() for t in tokens[i + n : i + 2 * n]
            ]:
                del tokens[i + n : i + 2 * n]
                break
        else:
            i += 1
    return re.sub(r"([\u4e00-\u9fff]{2,}?)\1+", r"\1", " ".join(tokens))
