"""The model's narrative, checked sentence by sentence before it reaches a report.

:func:`check_narrative` splits the draft (title, summary, sections) and the findings into
sentences and keeps a sentence only when

1. it has no hole: every number it wrote is a figure (or a period or group name of the
   ledger) and every id it cites exists (:mod:`~workflows.excel_report.narrative`); it holds
   no placeholder or markup fragment (``{order_id}``), and, title aside, it is a sentence of
   at least three words (not "high" or "Total");
2. the claim checker finds nothing false or unsupported in it
   (:func:`~workflows.excel_report.claims.check_claim`);
3. it was not already said (repeated sentences are merged, so are sections whose headings say
   the same: "Key finding" and "Key findings"; a section headed like the report's own "Key
   findings" joins the findings).

Repeated phrases inside a sentence are collapsed first ("over {F1} over {F1} rows").
When no sentence of the summary, the sections and the findings survives, the report shows the
figures-only narrative (:func:`figures_narrative`, written by code from the ledger) and says
so; the counts of kept and dropped sentences are shown in every model report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from orchestrator.spreadsheet import Workbook
from skills.interpret_data import Interpretation
from skills.write_report import ReportDraft
from workflows.excel_report.claims import FIG, Ledger, check_claim, collapse_repeats, subject
from workflows.excel_report.figures import Figure
from workflows.excel_report.narrative import SafeText, sanitise

#: A sentence ends at ``.``, ``!`` or ``?`` before a space, or after a CJK stop.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；;])")
#: Headings that name the report's own findings section.
_FINDINGS_HEADINGS = frozenset({"key finding", "finding", "key result", "要点", "关键发现", "发现"})


class DroppedSentence(BaseModel):
    """A model sentence that was not shown, where it was and why."""

    model_config = ConfigDict(frozen=True)

    where: str
    text: str
    reason: str
    numbers: list[str] = []


class ShownSentence(BaseModel):
    """A model sentence that passed, as shown (plain text, values inserted by code)."""

    model_config = ConfigDict(frozen=True)

    where: str
    text: str
    figure_ids: list[str]


class CheckedFinding(BaseModel):
    """A finding after the check: its kept sentences and the figures they rest on."""

    model_config = ConfigDict(frozen=True)

    statement: SafeText
    figure_ids: list[str]


class CheckedNarrative(BaseModel):
    """What survives of the model's narrative.

    Attributes:
        title, summary: Kept text (None when nothing of it survived).
        sections: (heading, body) pairs with a kept body; equivalent headings merged.
        findings: Findings with a kept sentence (sections headed like "Key findings" too).
        sentences: Model sentences checked (title, summary, bodies, findings).
        kept: Sentences shown.
        dropped: Sentences not shown because they failed a check, with the reason.
        merged: Sentences not shown because they repeat a shown one.
        shown: The sentences shown, each with the figures it rests on.
        figures_only: True when no sentence of the summary, sections or findings survived:
            the report shows :func:`figures_narrative` instead, and says so.
    """

    model_config = ConfigDict(frozen=True)

    title: SafeText | None = None
    summary: SafeText | None = None
    sections: list[tuple[SafeText, SafeText]] = []
    findings: list[CheckedFinding] = []
    sentences: int = 0
    kept: int = 0
    dropped: list[DroppedSentence] = []
    merged: int = 0
    shown: list[ShownSentence] = []
    figures_only: bool = False


def split_sentences(text: str) -> list[str]:
    """``text`` as sentences (English stops before a space, CJK stops anywhere)."""
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def workbook_names(workbook: Workbook, per_column: int = 200) -> list[str]:
    """Names a sentence may use besides the ledger's: the file, sheet, table and column
    names and up to ``per_column`` distinct text values of each column."""
    names = [workbook.filename, *(s.name for s in workbook.sheets)]
    for table in workbook.tables():
        names.append(table.name)
        for col in table.columns:
            names.append(col.name)
            texts = {v for v in col.values if isinstance(v, str)}
            names += sorted(texts)[:per_column]
    return names


def report_language(workbook: Workbook) -> str:
    """``zh`` when most column names of the workbook hold a CJK character, else ``en``."""
    names = [c.name for t in workbook.tables() for c in t.columns]
    cjk = sum(bool(re.search(r"[\u4e00-\u9fff]", n)) for n in names)
    return "zh" if names and cjk * 2 > len(names) else "en"


def ledger_names(figures: Mapping[str, Figure]) -> set[str]:
    """Periods and group values of the ledger: names a sentence may write with digits."""
    names: set[str] = set()
    for figure in figures.values():
        s = subject(figure)
        names.update(p for p in s.periods)
        if s.group:
            names.add(s.group)
    return names


def _check_text(figure: SafeText, figures: Mapping[str, Figure]) -> str:
    """The sentence's plain text with each cited figure's ``display (Fn)`` replaced by
    :data:`~workflows.excel_report.claims.FIG`."""
    plain = figure.plain
    for fid in sorted(figure.cited, key=lambda f: -len(figures[f].display)):
        plain = plain.replace(f"{figures[fid].display} ({fid})", f" {FIG} ")
    return plain


def _words(text: str) -> int:
    """Words of ``text``: Latin words, and CJK characters two to a word."""
    latin = len(re.findall(r"[^\W\d_\u4e00-\u9fff]+", text))
    return latin + len(re.findall(r"[\u4e00-\u9fff]", text)) // 2


def _key(text: str) -> str:
    return " ".join(re.findall(r"[\w\u4e00-\u9fff]+", text.casefold()))


class NarrativeChecker:
    """One narrative's check: the ledger, the names kept, and what was seen so far."""

    def __init__(self, figures: Mapping[str, Figure], names: Iterable[str]) -> None:
        self.figures = dict(figures)
        self.keep = ledger_names(self.figures)
        self.ledger = Ledger(self.figures, [*names, *self.keep])
        self.seen: set[str] = set()
        self.sentences = self.kept = self.merged = 0
        self.dropped: list[DroppedSentence] = []
        self.shown: list[ShownSentence] = []

    def sentence(self, text: str, where: str, cites: Sequence[str] = ()) -> SafeText | None:
        """One model sentence, kept (sanitised) or None (dropped or merged, recorded)."""
        self.sentences += 1
        safe = sanitise(collapse_repeats(text), self.figures, keep=self.keep)
        reason = None
        cited = safe.cited or list(cites)
        if safe.unknown_citations:
            reason = f"cites figures that do not exist: {', '.join(safe.unknown_citations)}"
        elif safe.removed_numbers:
            reason = f"wrote {len(safe.removed_numbers)} number(s) that are no figure"
        elif re.search(r"[{}<>]", safe.plain):
            reason = "holds a placeholder or markup fragment"
        elif where != "title" and _words(safe.plain) < 3:
            reason = "a fragment, not a sentence"
        else:
            reason = check_claim(_check_text(safe, self.figures), cited, self.ledger)
        if reason is not None:
            self.dropped.append(
                DroppedSentence(
                    where=where, text=text[:300], reason=reason, numbers=safe.removed_numbers
                )
            )
            return None
        key = _key(safe.plain)
        if not key or key in self.seen:
            self.merged += bool(key)
            return None
        self.seen.add(key)
        self.kept += 1
        self.shown.append(ShownSentence(where=where, text=safe.plain, figure_ids=cited))
        return safe

    def text(self, text: str, where: str, cites: Sequence[str] = ()) -> SafeText | None:
        """Every sentence of ``text`` checked; the kept ones joined (None when none is)."""
        kept = [s for part in split_sentences(text) if (s := self.sentence(part, where, cites))]
        return join(kept) if kept else None

    def heading(self, text: str) -> SafeText:
        """A heading: shown when it claims nothing false and has no hole; else empty (the
        report then writes "Section")."""
        safe = sanitise(collapse_repeats(text), self.figures, keep=self.keep)
        if safe.removed_numbers or safe.unknown_citations or safe.cited:
            return SafeText(markdown="", plain="")
        if check_claim(safe.plain, [], self.ledger) is not None:
            return SafeText(markdown="", plain="")
        return safe


def join(parts: Sequence[SafeText]) -> SafeText:
    """Sentences joined into one text (CJK sentences without a space)."""
    markdown = plain = ""
    for part in parts:
        sep = "" if not plain or plain.endswith(("。", "！", "？", "；")) else " "
        markdown += sep + part.markdown
        plain += sep + part.plain
    cited = list(dict.fromkeys(fid for p in parts for fid in p.cited))
    return SafeText(markdown=markdown, plain=plain, cited=cited)


def heading_key(text: str) -> str:
    """A heading's words, casefolded, each English plural made singular: "Key findings" and
    "Key finding" share a key."""
    words = _key(text).split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def check_narrative(
    draft: ReportDraft,
    interpretation: Interpretation,
    figures: Mapping[str, Figure],
    names: Iterable[str] = (),
) -> CheckedNarrative:
    """Check every model sentence of ``draft`` and ``interpretation`` against ``figures``.

    Args:
        draft: The write_report answer (title, summary, sections).
        interpretation: The interpret answer (findings with their figure ids).
        figures: The analysis's figures by id.
        names: Workbook names a sentence may use (file, sheets, tables, columns, text
            values); a capitalised name in neither these nor the ledger fails the check.

    Returns:
        The :class:`CheckedNarrative`; never raises on model text.
    """
    checker = NarrativeChecker(figures, names)
    title = checker.text(draft.title, "title")
    summary = checker.text(draft.summary, "summary")
    findings: list[CheckedFinding] = []
    for i, finding in enumerate(interpretation.findings, start=1):
        kept = checker.text(finding.statement, f"finding {i}", finding.figure_ids)
        if kept is not None:
            findings.append(
                CheckedFinding(statement=kept, figure_ids=kept.cited or finding.figure_ids)
            )
    merged: dict[str, tuple[SafeText, list[SafeText]]] = {}
    for i, section in enumerate(draft.sections, start=1):
        heading = checker.heading(section.heading)
        body = checker.text(section.body, f"section {i}")
        if body is None:
            continue
        key = heading_key(heading.plain)
        if key in _FINDINGS_HEADINGS:
            findings.append(CheckedFinding(statement=body, figure_ids=body.cited))
            continue
        merged.setdefault(key, (heading, []))[1].append(body)
    sections = [(heading, join(bodies)) for heading, bodies in merged.values()]
    figures_only = summary is None and not sections and not findings
    return CheckedNarrative(
        title=title,
        summary=summary,
        sections=sections,
        findings=findings,
        sentences=checker.sentences,
        kept=checker.kept,
        dropped=checker.dropped,
        merged=checker.merged,
        shown=checker.shown,
        figures_only=figures_only,
    )


#: The figures-only narrative's sentences: ``{v}`` is a figure's value and id, ``{c}`` a
#: column, ``{g}`` a group, ``{a}``/``{b}`` periods, ``{verb}`` the direction of a change.
TEMPLATES = {
    "en": {
        "rows": "The table has {v} rows.",
        "total": "Total {c} is {v}.",
        "share": "{g} has the largest share, at {v}.",
        "change": "{c} {verb} by {v} from {a} to {b}.",
        "verbs": ("rose", "fell", "changed"),
    },
    "zh": {
        "rows": "共 {v} 行数据。",
        "total": "{c} 合计为 {v}。",
        "share": "{g} 占比最高，为 {v}。",
        "change": "{c} 从 {a} 到 {b} {verb} {v}。",
        "verbs": ("增长", "下降", "变化"),
    },
}


def _narrative_facts(figures: Sequence[Figure]) -> list[tuple[str, Figure, dict[str, str]]]:
    """(template key, figure, names) of each sentence of the figures-only narrative."""
    facts: list[tuple[str, Figure, dict[str, str]]] = []
    by_op: dict[str, list[Figure]] = {}
    for figure in figures:
        by_op.setdefault(figure.provenance.operation, []).append(figure)
    if rows := by_op.get("count_rows"):
        facts.append(("rows", rows[0], {}))
    totals = [f for f in by_op.get("sum", []) if f.column]
    if totals:
        facts.append(("total", totals[0], {"c": totals[0].column or ""}))
    if shares := by_op.get("group_share"):
        first = shares[0]
        series = [
            f
            for f in shares
            if (f.provenance.cells, f.column) == (first.provenance.cells, first.column)
            and isinstance(f.value, int | float)
        ]
        if series:
            top = max(series, key=lambda f: float(f.value))
            facts.append(("share", top, {"g": subject(top).group or ""}))
    if changes := by_op.get("change"):
        change = changes[-1]
        periods = subject(change).periods
        if len(periods) == 2 and change.column:
            names = {"c": change.column, "a": periods[0], "b": periods[1]}
            facts.append(("change", change, names))
    return facts


def figures_narrative(
    figures: Sequence[Figure], lang: str = "en", code: Callable[[str], str] = str
) -> list[SafeText]:
    """The figures-only narrative, written by code from the ledger: the first table's row
    count, the first column total, the largest share of the first breakdown and the last
    change between periods, each with its figure id (:data:`TEMPLATES`, English, or Chinese
    for ``zh``). ``code`` renders a workbook name for Markdown (the renderer's inert code
    span). Every sentence passes :func:`~workflows.excel_report.claims.check_claim` (a unit
    test holds it to that)."""
    words = TEMPLATES.get(lang, TEMPLATES["en"])
    out = []
    for key, figure, names in _narrative_facts(figures):
        value = float(figure.value) if isinstance(figure.value, int | float) else 0.0
        up, down, flat = words["verbs"]
        verb = up if value > 0 else down if value < 0 else flat
        shown = f"{figure.display} ({figure.id})"
        template = str(words[key])
        plain = template.format(v=shown, verb=verb, **names)
        markdown = template.format(v=shown, verb=verb, **{k: code(v) for k, v in names.items()})
        out.append(SafeText(plain=plain, markdown=markdown, cited=[figure.id]))
    return out
