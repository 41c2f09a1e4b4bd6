"""Report files of two workbooks with one name in different folders do not overwrite each other
(a batch over a folder tree: ``q1/sales.xlsx`` and ``q2/sales.xlsx``), and a rerun on the same
workbook writes over its own report."""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook as XlWorkbook

from orchestrator.spreadsheet import read_workbook
from workflows.excel_report.offline import figures_only_report
from workflows.excel_report.render import report_stem


def _sheet(path: Path, region: str, amounts: list[int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    book = XlWorkbook()
    sheet = book.active
    sheet.append(["region", "amount"])
    for amount in amounts:
        sheet.append([region, amount])
    book.save(path)
    return path


def test_same_name_in_two_folders_gets_two_reports(tmp_path: Path) -> None:
    first = _sheet(tmp_path / "q1" / "sales.xlsx", "north", [10, 20, 30])
    second = _sheet(tmp_path / "q2" / "sales.xlsx", "south", [400, 500, 600])
    out = tmp_path / "reports"
    _, a = figures_only_report(read_workbook(first), out)
    _, b = figures_only_report(read_workbook(second), out)
    assert a.markdown != b.markdown and a.xlsx != b.xlsx
    assert a.markdown.name.startswith("sales.") and a.markdown.name.endswith(".report.md")
    assert "| total `amount` | 60 |" in a.markdown.read_text(encoding="utf-8").replace("\\", "")
    assert "| total `amount` | 1,500 |" in b.markdown.read_text(encoding="utf-8").replace("\\", "")
    assert len(list(out.glob("*.report.md"))) == 2


def test_a_rerun_writes_over_its_own_report(tmp_path: Path) -> None:
    path = _sheet(tmp_path / "sales.xlsx", "north", [1, 2, 3])
    out = tmp_path / "reports"
    _, a = figures_only_report(read_workbook(path), out)
    _, b = figures_only_report(read_workbook(path), out)
    assert a.markdown == b.markdown
    assert sorted(p.name for p in out.iterdir()) == sorted((a.markdown.name, a.xlsx.name))


def test_report_stem_is_safe_and_stable() -> None:
    stem = report_stem("/data/Q1 sales: final?.xlsx")
    assert stem == report_stem("/data/Q1 sales: final?.xlsx")
    assert stem != report_stem("/other/Q1 sales: final?.xlsx")
    name, digest = stem.rsplit(".", 1)
    assert len(digest) == 8 and all(c in "0123456789abcdef" for c in digest)
    assert "/" not in name and ":" not in name and "?" not in name
