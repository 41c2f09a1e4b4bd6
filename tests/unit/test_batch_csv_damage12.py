"""A damaged CSV never loses requests silently (tester12 B).

An unclosed double quote used to run to the end of the file, gluing every line after it into
one request; a row whose unquoted comma split its text ran the first piece and dropped the
rest. Now the first is a one-line error naming the line where the quote opened; the second is
joined back when the text is the last column (what the commas split off can only be its
rest), else a failed row naming its line. Text after a closing quote is read as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.batch.inputs import ColumnMapping, open_input
from orchestrator.exceptions import UserError

MAPPING = ColumnMapping(text="message", id="id")

#: (file text, the line the unclosed quote opened on)
UNCLOSED = [
    ('id,message\n1,"unterminated quote\n2,where is my order\n3,a,b\n', 2),
    ('id,message\n1,fine\n2,"open here\n3,more\n4,x\n5,"y" z\n', 3),  # closes mid-cell
    ('id,message\n1,fine\n2,the last one "quoted\n3,"never closed', 4),
    ('id,message\r\n1,"多行\r\n还没关\r\n2,第二行\r\n', 2),
    ('\ufeffid,message\n1,ok\n2,"它说""好""\n3,丢了\n', 3),
]


@pytest.mark.parametrize(("text", "line"), UNCLOSED)
def test_an_unclosed_quote_is_one_error_naming_its_line(
    tmp_path: Path, text: str, line: int
) -> None:
    path = tmp_path / "in.csv"
    path.write_text(text, encoding="utf-8", newline="")
    with pytest.raises(UserError) as info:
        list(open_input(path, MAPPING).rows())
    message = str(info.value)
    assert f"opened on line {line} " in message and "\n" not in message


#: (file text, {row id: expected text or a problem naming the line})
READ = [
    (  # text after a closing quote: read leniently, as before; the last column's rest joined
        'id,message\n1,"Fragile" sticker torn, refund please\n2,where is it\n',
        {"1": ("text", "Fragile sticker torn, refund please"), "2": ("text", "where is it")},
    ),
    (
        'id,message\n1,"Fragile" sticker torn\n2,"a ""quoted"" word, and a comma"\n',
        {"1": ("text", "Fragile sticker torn"), "2": ("text", 'a "quoted" word, and a comma')},
    ),
    (  # an unquoted comma in the last column: the rest of the text, joined back
        "id,message\n1,where is my order\n2,refund it, it broke, twice\n3,thanks\n",
        {
            "1": ("text", "where is my order"),
            "2": ("text", "refund it, it broke, twice"),
            "3": ("text", "thanks"),
        },
    ),
    (  # an unquoted comma before the last column: the row fails, the others run
        "message,id\nwhere is my order,1\nrefund it, it broke,2\nthanks,3\n",
        {
            "1": ("text", "where is my order"),
            "it broke": ("problem", "line 3 has 3 cells but the header names 2 columns"),
            "3": ("text", "thanks"),
        },
    ),
    (  # trailing empty cells are no split; a quoted multi-line text is one cell
        'id,message,\n1,hello,,\n2,"two\nlines"\n3,退款，谢谢\n',
        {"1": ("text", "hello"), "2": ("text", "two\nlines"), "3": ("text", "退款，谢谢")},
    ),
]


@pytest.mark.parametrize(("text", "want"), READ)
def test_each_row_is_read_or_fails_naming_its_line(
    tmp_path: Path, text: str, want: dict[str, tuple[str, str]]
) -> None:
    path = tmp_path / "in.csv"
    path.write_text(text, encoding="utf-8", newline="")
    rows = {r.row_id: r for r in open_input(path, MAPPING).rows()}
    assert set(rows) == set(want)
    for row_id, (kind, expected) in want.items():
        row = rows[row_id]
        if kind == "text":
            assert row.text == expected and row.problem is None
        else:
            assert row.problem is not None and expected in row.problem


def test_a_sheet_may_hold_cells_beside_its_table(tmp_path: Path) -> None:
    """Only a CSV row must match its header: a workbook's notes right of the table stay."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["id", "message"])
    sheet.append(["1", "where is my order", "a note"])
    path = tmp_path / "in.xlsx"
    book.save(path)
    (row,) = open_input(path, MAPPING).rows()
    assert row.text == "where is my order" and row.problem is None
