"""A delimited text file in an East Asian legacy code page is read in its own, or the reader
says it is unsure and names ``--encoding`` (app15, brief 2b).

A CSV in EUC-KR (Korean) read as GB18030 mojibake without a word: Korean's Hangul bytes are
GB2312's commonest hanzi. Shift_JIS was refused as "a legacy code page", and EUC-JP Japanese
with kana read as GB18030 too. Texts of my own, several shapes (names, goods, prose), each
encoding Excel or a Unix tool writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.batch.inputs import ColumnMapping, open_input
from orchestrator.cli import app
from orchestrator.exceptions import UserError
from orchestrator.spreadsheet import read_workbook
from orchestrator.spreadsheet.errors import UnsupportedFileError
from orchestrator.spreadsheet.raw import ReadLimits

KOREAN = (
    "고객,상품,금액,메모\n김철수,무선 이어폰,45000,배송이 늦어서 환불을 요청합니다\n"
    "이영희,노트북 거치대,23000,색상이 사진과 달라요\n박민수,책상 램프,18000,잘 받았습니다\n"
)
JAPANESE = (
    "顧客,商品,金額,備考\n山田太郎,ワイヤレスイヤホン,4500,配送が遅れています\n"
    "佐藤花子,ノートパソコン,120000,色が写真と違います\n鈴木一郎,キーボード,8000,ありがとう\n"
)
KANJI_NAMES = "氏名,部署,金額\n山田太郎,営業部,12000\n佐藤花子,経理部,8500\n鈴木一郎,総務部,4300\n"
TRADITIONAL = "客戶,產品,金額\n陳大文,無線滑鼠,850\n林美玲,筆記型電腦,32000\n黃志明,機械鍵盤,2400\n"
SIMPLIFIED = "客户,产品,金额,备注\n张伟,无线鼠标,85,已经收到\n王芳,笔记本电脑,5200,颜色不对\n"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (KOREAN, "euc_kr"),
        (KOREAN, "cp949"),
        (
            "이름,부서\n" + "".join(f"{n},영업팀\n" for n in ("김민준", "이서연", "박지호")),
            "euc_kr",
        ),
        (JAPANESE, "shift_jis"),
        (JAPANESE, "cp932"),
        (JAPANESE, "euc_jp"),
        (KANJI_NAMES, "shift_jis"),
        ("商品,数量\r\nりんご,3\r\nバナナ,4\r\n", "shift_jis"),  # refused before
        ("商品名,金額\r\n山田太郎様,1200\r\n発送済み,300\r\n", "cp932"),
        (TRADITIONAL, "big5"),
        (SIMPLIFIED, "gbk"),
        (TRADITIONAL, "gb18030"),
    ],
)
def test_a_legacy_csv_reads_as_its_own_language(tmp_path: Path, text: str, encoding: str) -> None:
    path = tmp_path / "list.csv"
    path.write_bytes(text.encode(encoding))
    wb = read_workbook(path)
    (table,) = wb.tables()
    assert [c.name for c in table.columns] == text.splitlines()[0].split(",")
    cells = [str(v) for c in table.columns for v in c.values]
    assert all(cell in text for cell in cells)
    assert not any("unsure" in w for w in wb.warnings), wb.warnings


@pytest.mark.parametrize(
    ("text", "encoding", "also"),
    [
        ("이름,금액\n김철수,1200\n", "euc_kr", "gb18030"),  # 5 Hangul: GB2312 hanzi too
        ("产品,金额\n苹果,12\n", "gbk", "cp949"),  # 6 hanzi: Hangul too
        ("产品,数量\n苹果,12\n", "gbk", "cp950"),  # Big5 too
    ],
)
def test_an_unsure_guess_is_said_and_named(
    tmp_path: Path, text: str, encoding: str, also: str
) -> None:
    """Too few characters to tell: read, with one line naming --encoding; the user's
    --encoding then reads it as given; a batch of requests refuses to guess."""
    path = tmp_path / "short.csv"
    path.write_bytes(text.encode(encoding))
    (unsure,) = [w for w in read_workbook(path).warnings if "unsure" in w]
    assert "--encoding" in unsure and also in unsure and "\n" not in unsure
    given = read_workbook(path, ReadLimits(encoding=encoding))
    assert given.sheets[0].tables[0].columns[0].name == text.split(",")[0]
    assert not any("unsure" in w for w in given.warnings)
    with pytest.raises(UserError, match="--encoding"):
        list(open_input(path, ColumnMapping(text=text.split(",")[0])).rows())


def test_a_single_byte_code_page_is_refused_naming_encoding(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    text = "nom;ville\nFrançois;Besançon\nHélène;Orléans\n"
    path.write_bytes(text.encode("cp1252"))
    with pytest.raises(UnsupportedFileError, match="--encoding"):
        read_workbook(path)
    wb = read_workbook(path, ReadLimits(encoding="cp1252"))
    assert wb.sheets[0].tables[0].columns[0].values == ["François", "Hélène"]


def test_the_commands_take_encoding(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_bytes("이름,금액\n김철수,1200\n".encode("euc_kr"))
    shown = CliRunner().invoke(app, ["report", str(path), "--inspect", "--encoding", "EUC-KR"])
    assert (
        shown.exit_code == 0 and "encoding euc_kr" in shown.output and "unsure" not in shown.output
    )
    for command in (["report", str(path), "--inspect"], ["batch", str(path), "--text-column", "x"]):
        bad = CliRunner().invoke(app, [*command, "--encoding", "klingon"])
        assert bad.exit_code == 2 and "--encoding: unknown encoding 'klingon'" in bad.output
