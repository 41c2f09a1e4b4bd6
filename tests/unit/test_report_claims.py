"""The claim checker of report narratives (issue 44, item 3): every failing kind, with our own
sentences in English and Chinese, over the ledger of a small workbook analysed by the real
reader and analysis (the figures the report would show)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.spreadsheet import read_workbook
from skills.interpret_data import Finding, Interpretation
from skills.write_report import ReportDraft, ReportSection
from workflows.excel_report.analysis import analyse
from workflows.excel_report.checked import (
    NarrativeChecker,
    check_narrative,
    figures_narrative,
    heading_key,
    workbook_names,
)
from workflows.excel_report.claims import Ledger, check_claim, collapse_repeats
from workflows.excel_report.figures import Figure

#: Region sales 500 / 300 / 150 / 50 (shares 50%, 30%, 15%, 5%); yearly sales 2022 < 2023 > 2024.
EN_ROWS = [
    ("North", 200, 40, "2022-03-01"),
    ("North", 300, -35, "2023-05-01"),
    ("South", 100, 20, "2022-06-01"),
    ("South", 200, 15, "2023-07-01"),
    ("East", 100, 12, "2024-02-01"),
    ("East", 50, 8, "2024-03-01"),
    ("West", 25, 3, "2022-09-01"),
    ("West", 25, 4, "2024-10-01"),
]
ZH_ROWS = [
    ("华东", 200, 50, "2022-01-05"),
    ("华东", 400, 30, "2023-02-05"),
    ("华北", 150, -20, "2022-03-05"),
    ("华北", 150, 10, "2023-04-05"),
    ("华南", 60, 5, "2023-05-05"),
    ("华南", 40, 5, "2024-06-05"),
]


def _csv(path: Path, header: str, rows: list[tuple]) -> Path:
    lines = [header] + [",".join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def en(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Figure], Ledger, list[str]]:
    path = _csv(
        tmp_path_factory.mktemp("en") / "sales.csv", "Region,Sales,Profit,Order Date", EN_ROWS
    )
    wb = read_workbook(path)
    figures = analyse(wb).by_id()
    names = workbook_names(wb)
    return figures, Ledger(figures, names), names


@pytest.fixture(scope="module")
def zh(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Figure], Ledger, list[str]]:
    path = _csv(tmp_path_factory.mktemp("zh") / "销售.csv", "地区,销售额,利润,日期", ZH_ROWS)
    wb = read_workbook(path)
    figures = analyse(wb).by_id()
    names = workbook_names(wb)
    return figures, Ledger(figures, names), names


def fid(figures: dict[str, Figure], op: str, column: str | None = None, text: str = "") -> str:
    """The id of the first figure of ``op`` (on ``column``) whose label holds ``text``."""
    for f in figures.values():
        if f.provenance.operation == op and column in (None, f.column) and text in f.label:
            return f.id
    raise AssertionError(f"no {op} {column} {text} in {[f.label for f in figures.values()]}")


def verdict(ledger_fixture, sentence: str, cites: list[str] = ()) -> str | None:
    """Run the whole per-sentence path (sanitise, holes, claims) on ``sentence``; None when
    kept, else the reason."""
    figures, _, names = ledger_fixture
    checker = NarrativeChecker(figures, names)
    kept = checker.sentence(sentence, "test", list(cites))
    if kept is not None:
        return None
    return checker.dropped[-1].reason if checker.dropped else "merged"


def test_true_sentences_are_kept(en) -> None:
    figures = en[0]
    north = fid(figures, "group_share", "Sales", "North")
    total = fid(figures, "sum", "Sales")
    rows = fid(figures, "count_rows")
    up = fid(figures, "change", "Sales", "`2023`")
    for sentence in (
        f"North has the largest share of Sales, at {{{north}}}.",
        f"Total Sales is {{{total}}} over {{{rows}}} rows.",
        f"Sales rose by {{{up}}} from 2022 to 2023.",
        "This report covers the sales of each region.",
    ):
        assert verdict(en, sentence) is None, sentence


def test_the_issue_examples_are_dropped(en) -> None:
    figures = en[0]
    min_profit = fid(figures, "min", "Profit")
    north = fid(figures, "group_share", "Sales", "North")
    # figure about another column, superlative of the wrong end, share verb for an extreme
    assert "without naming its column" in verdict(
        en, f"West has the largest share, at {{{min_profit}}}."
    )
    # a group that is not in the data, cited or not
    assert "without citing" in verdict(en, "Retail has the largest share.")
    assert "without naming its group" in verdict(
        en, f"Retail has the largest share, at {{{north}}}."
    )
    assert "not in the workbook" in verdict(
        en, f"North, ahead of Retail, has the largest share of Sales at {{{north}}}."
    )


@pytest.mark.parametrize(
    ("sentence", "why"),
    [
        ("West has the largest share of Sales, at {west}.", "largest"),  # rank: West is last
        ("North has the smallest share of Sales, at {north}.", "smallest"),
        ("Profit is {max_profit}.", "no word says"),  # kind: an extreme value read as a total
        ("The average Sales is {total}.", "a total figure"),  # kind: a total called an average
        ("Sales fell by {up} from 2022 to 2023.", "not negative"),  # sign
        ("Sales rose by {down} from 2023 to 2024.", "not positive"),
        ("Sales grew strongly.", "without citing"),  # direction with no figure
        ("South sales of {south} are higher than North sales of {north_sum}.", "not larger"),
        ("Sales rose by {up}.", "period"),  # entity: a change names its period
        ("North made a loss of {north_sum} in Sales.", "negative"),
        ("The second largest Sales was {max_sales}.", "second"),  # rank: it is the first
    ],
)
def test_each_false_kind_in_english(en, sentence: str, why: str) -> None:
    figures = en[0]
    ids = {
        "west": fid(figures, "group_share", "Sales", "West"),
        "north": fid(figures, "group_share", "Sales", "North"),
        "south": fid(figures, "group_sum", "Sales", "South"),
        "north_sum": fid(figures, "group_sum", "Sales", "North"),
        "max_profit": fid(figures, "max", "Profit"),
        "max_sales": fid(figures, "max", "Sales"),
        "total": fid(figures, "sum", "Sales"),
        "up": fid(figures, "change", "Sales", "`2023`"),
        "down": fid(figures, "change", "Sales", "`2024`"),
    }
    text = sentence.format(**{k: "{" + v + "}" for k, v in ids.items()})
    reason = verdict(en, text)
    assert reason is not None and why in reason, (text, reason)


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        ("华东占比最高，为 {top}。", True),
        ("华南占比最高，为 {top}。", False),  # entity: the cited share is 华东's
        ("华南占比最高，为 {low}。", False),  # rank: 华南 is the smallest
        ("华南占比最低，为 {low}。", True),
        ("零售占比最高。", False),  # superlative, no figure
        ("销售额合计为 {total}，共 {rows} 行数据。", True),
        ("销售额合计为 {total}，共 {rows} 行数据行数据。", True),  # repetition collapsed
        ("利润平均为 {max_profit}。", False),  # kind: an extreme called an average
        ("销售额从 2022 到 2023 下降 {change}。", False),  # sign: the change is positive
        ("销售额从 2022 到 2023 增长 {change}。", True),
        ("销售额增长了 {change}。", False),  # entity: no period named
    ],
)
def test_each_false_kind_in_chinese(zh, sentence: str, kept: bool) -> None:
    figures = zh[0]
    ids = {
        "top": fid(figures, "group_share", "销售额", "华东"),
        "low": fid(figures, "group_share", "销售额", "华南"),
        "total": fid(figures, "sum", "销售额"),
        "rows": fid(figures, "count_rows"),
        "max_profit": fid(figures, "max", "利润"),
        "change": fid(figures, "change", "销售额"),
    }
    text = sentence.format(**{k: "{" + v + "}" for k, v in ids.items()})
    reason = verdict(zh, text)
    assert (reason is None) is kept, (text, reason)


def test_a_number_that_is_no_figure_drops_the_sentence_not_the_digits(en) -> None:
    total = fid(en[0], "sum", "Sales")
    reason = verdict(en, f"Total Sales is {{{total}}}, up 40% on last year.")
    assert reason is not None and "no figure" in reason
    assert "do not exist" in verdict(en, "Total Sales is {F999}.")


@pytest.mark.parametrize(
    "sentence",
    [
        "over {order_id} over {status} (total {total}).",
        "high",
        "Total",
        "要点",
        "<b>Sales</b> up",
        "Key finding insideheading foundKey.",
    ],
)
def test_fragments_and_placeholders_are_dropped(en, sentence: str) -> None:
    assert verdict(en, sentence) is not None


def test_repeated_phrases_are_collapsed() -> None:
    assert collapse_repeats("Total Sales is {F2} over {F1} over {F1} rows.") == (
        "Total Sales is {F2} over {F1} rows."
    )
    assert collapse_repeats("共 {F1} 行 共 {F1} 行") == "共 {F1} 行"
    assert collapse_repeats("销售额销售额合计") == "销售额合计"
    assert collapse_repeats("a b c") == "a b c"


def test_repeated_sentences_and_headings_are_merged(en) -> None:
    figures, _, names = en
    total = fid(figures, "sum", "Sales")
    north = fid(figures, "group_share", "Sales", "North")
    rows = fid(figures, "count_rows")
    draft = ReportDraft(
        title="Sales by region",
        summary=f"Total Sales is {{{total}}}. Total Sales is {{{total}}}.",
        sections=[
            ReportSection(
                heading="Key finding", body=f"North has the largest share, at {{{north}}}."
            ),
            ReportSection(heading="Key findings", body=f"The table has {{{rows}}} rows."),
        ],
    )
    interpretation = Interpretation(
        findings=[
            Finding(
                statement=f"Total Sales is {{{total}}} over {{{rows}}} over {{{rows}}} rows.",
                figure_ids=[total, rows],
            )
        ]
    )
    checked = check_narrative(draft, interpretation, figures, names)
    assert checked.summary is not None and checked.summary.plain.count("Total Sales") == 1
    assert checked.merged == 1 and not checked.dropped
    # both "Key finding(s)" sections join the report's own Key findings: no heading twice
    assert checked.sections == []
    statements = [f.statement.plain for f in checked.findings]
    assert len(statements) == 3 and "over" in statements[0] and statements[0].count("rows") == 1
    assert heading_key("Key findings") == heading_key("key finding")


def test_when_no_model_sentence_survives_the_figures_only_narrative_stands(en) -> None:
    figures, _, names = en
    min_profit = fid(figures, "min", "Profit")
    draft = ReportDraft(
        title="Report",
        summary=f"West has the largest share, at {{{min_profit}}}.",
        sections=[ReportSection(heading="Growth", body="Sales grew strongly in Retail.")],
    )
    checked = check_narrative(draft, Interpretation(findings=[]), figures, names)
    assert checked.figures_only and checked.kept == 1 and len(checked.dropped) == 2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figures_only_narrative_passes_its_own_checker(en, zh, lang: str) -> None:
    figures, ledger, _ = en if lang == "en" else zh
    sentences = figures_narrative(list(figures.values()), lang)
    assert len(sentences) == 4
    for s in sentences:
        text = s.plain.replace(f"{figures[s.cited[0]].display} ({s.cited[0]})", "\ue010")
        assert check_claim(text, s.cited, ledger) is None, s.plain


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        ("There are {F2} unknown cells in the table.", True),
        ("表中有 {F2} 个未知单元格。", True),
        ("The total is {F2} over {F1} rows.", False),  # a count of unknown cells is no total
        ("成本合计为 {F2}，共 {F1} 行数据。", False),
    ],
)
def test_a_count_of_unknown_cells_is_said_as_such(sentence: str, kept: bool) -> None:
    from workflows.excel_report.figures import Provenance

    def figure(fid: str, label: str, value: int, op: str) -> Figure:
        prov = Provenance(cells="'S'!A2:C9", operation=op)
        return Figure(id=fid, label=label, value=value, display=str(value), table_id="T1",
                      provenance=prov)  # fmt: skip

    figures = {
        "F1": figure("F1", "data rows in table `S A1:C9`", 8, "count_rows"),
        "F2": figure("F2", "cells in `S A1:C9` whose value is unknown", 2, "error_cells"),
    }
    reason = verdict((figures, Ledger(figures), []), sentence)
    assert (reason is None) is kept, (sentence, reason)
