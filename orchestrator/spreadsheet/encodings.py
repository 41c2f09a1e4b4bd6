"""Which codec a delimited text file is written in, and how sure the reader is of it.

Order (:func:`guess_encoding`): a BOM's (UTF-8 as Excel writes "CSV UTF-8", UTF-16 as it
writes "Unicode Text", UTF-32), UTF-16 without a BOM, UTF-8; then the legacy code pages Excel
writes plain "CSV" in on an East Asian Windows (:data:`LEGACY`): GB18030 (GBK), Big5, CP949
(EUC-KR, Korean), Shift_JIS (CP932) and EUC-JP. UTF-8 comes first because GB18030 would also
"decode" many UTF-8 byte sequences into the wrong characters.

Each legacy code page decodes almost any run of high bytes, so one is taken only when the text
reads as its language in it (:func:`_reads_as`): four in five of its characters common ones
(Chinese: GB2312's hanzi after folding Traditional to Simplified, or Big5's frequent set;
Japanese: kana and JIS level-1 kanji), nineteen in twenty for Korean (KS X 1001's Hangul).
Some blocks coincide: EUC-KR's Hangul bytes are GB2312's commonest hanzi, EUC-JP's kanji
bytes are GB2312's hanzi (so EUC-JP also needs kana). Where the text reads well in more than
one, the reading with :data:`EVIDENCE` letters only its language writes (Hangul, kana) wins;
otherwise the one with :data:`SOME_EVIDENCE`, else the first, is taken and the guess is
*unsure* (:attr:`EncodingGuess.unsure`): the reader says so in one line naming
``--encoding`` (:meth:`EncodingGuess.note`), and a batch of requests refuses to guess.
Single-byte code pages (Windows-1252, Latin-1) are not guessed (unreliable on short files):
the file is refused with a hint to pass ``--encoding`` or re-export it as UTF-8.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from orchestrator.spreadsheet.errors import UnsupportedFileError

#: The legacy code pages tried after UTF-8, in order, with the language each is taken for.
LEGACY = {
    "gb18030": "Chinese, GB18030/GBK",
    "cp950": "Traditional Chinese, Big5",
    "cp949": "Korean, EUC-KR/CP949",
    "cp932": "Japanese, Shift_JIS",
    "euc_jp": "Japanese, EUC-JP",
}
#: Letters only one language writes (Hangul, kana) that settle a text readable in several
#: (a Chinese text reads as Hangul only where all its hanzi lie in GB2312's first 25 rows:
#: about 0.63 of each, so 0.63 ** 20 < 1e-4); with SOME_EVIDENCE (0.63 ** 8 ≈ 0.025) that
#: reading is preferred, and the guess stays unsure.
EVIDENCE = 20
SOME_EVIDENCE = 8
#: Characters beyond ASCII judged per reading (the whole head is still decoded strictly).
SAMPLE = 20_000

#: Why text was refused, and what to do (the CSV reader, the sniffer and batch inputs).
LEGACY_TEXT = (
    "the text is neither UTF-8, UTF-16, GB18030 (GBK), Big5, CP949 (Korean) nor Shift_JIS or "
    "EUC-JP (Japanese) as far as its characters show (a single-byte code page such as "
    "Windows-1252?)"
)
LEGACY_HINT = (
    "Pass its code page with --encoding (e.g. --encoding cp1252), or export it again as "
    "'CSV UTF-8' (Excel: File > Save As > CSV UTF-8)"
)

#: Byte-order marks and the codec each names (UTF-32's before UTF-16's, which it starts with).
_BOMS = (
    ((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE), "utf-32"),
    ((codecs.BOM_UTF8,), "utf-8-sig"),
    ((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE), "utf-16"),
)
_HIGH_RUN = re.compile(rb"[\x80-\xff]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_KANA = re.compile(r"[\u3041-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")


@dataclass(frozen=True)
class EncodingGuess:
    """The codec a text file is read with.

    Attributes:
        encoding: A Python codec name (``"utf-8-sig"``, ``"gb18030"``, ``"cp949"``).
        also: Other legacy codecs the bytes read as plausibly, each a different text; empty
            when the choice is sure.
    """

    encoding: str
    also: tuple[str, ...] = ()

    @property
    def unsure(self) -> bool:
        """Whether another codec reads the bytes as plausibly (:attr:`also`)."""
        return bool(self.also)

    def note(self, *, read: bool = True) -> str | None:
        """One line for the user when :attr:`unsure`, naming ``--encoding``; else None.
        ``read``: the file was read with :attr:`encoding` (else it was refused)."""
        if not self.also:
            return None
        codecs_ = (self.encoding, *self.also)
        named = " or as ".join(f"{c} ({LEGACY.get(c, c)})" for c in codecs_)
        done = f"read as {self.encoding}; if the text looks wrong, " if read else ""
        return (
            f"encoding unsure: the bytes read as {named}; {done}pass --encoding with the "
            f"right one ({', '.join(codecs_)}), or save the file as CSV UTF-8"
        )


def single_byte_code_page(head: bytes) -> bool:
    """Whether ``head`` (text that is not UTF-8) reads as a single-byte legacy code page
    (Windows-1252, Latin-1) rather than GB18030, Big5 or CP949.

    GB18030 decodes most Latin-1 text without error, as mojibake (``Müller`` → ``M黮ler``),
    because its trail bytes include ASCII letters. Chinese text puts its characters in runs of
    two or more high bytes; a single-byte code page puts an accented letter, one high byte,
    between ASCII ones. So: most runs of high bytes one byte long → a single-byte code page.
    (Shift_JIS puts ASCII trail bytes inside its text too: it is judged by its letters only.)
    """
    runs = [len(m) for m in _HIGH_RUN.findall(head)]
    return bool(runs) and sum(n == 1 for n in runs) * 2 > len(runs)


def _utf16_without_bom(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` for UTF-16 text saved without a BOM: NUL bytes (the high byte
    of each ASCII character) on a fifth or more of one side of the byte pairs, and at most a
    tenth as many on the other (a character such as U+9000 has a NUL low byte)."""
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if len(head) < 4 or max(even, odd) * 5 < len(head) // 2 or min(even, odd) * 10 > max(even, odd):
        return None
    return "utf-16-le" if odd > even else "utf-16-be"


def _encodes(ch: str, codec: str) -> bytes | None:
    try:
        return ch.encode(codec)
    except UnicodeEncodeError:
        return None


#: The character set each legacy codec's common characters come from.
_BASE = {"gb18030": "gb2312", "cp950": "cp950", "cp949": "euc_kr", "cp932": "cp932"}


def _common(ch: str, codec: str) -> bool:
    """Whether ``ch`` (not ASCII) is a character the language ``codec`` is taken for writes
    commonly: a letter of its script (below), or a symbol of its base character set."""
    code = _encodes(ch, _BASE.get(codec, "cp932"))
    if code is None or len(code) != 2:  # euc_kr spells rare syllables in 8 bytes
        return False
    if not unicodedata.category(ch).startswith("L"):
        return True
    if codec == "gb18030":  # GB2312's hanzi (its kana, Greek and Cyrillic are no Chinese)
        return "\u4e00" <= ch <= "\u9fff"
    if codec == "cp950":  # the 5,401 common hanzi
        return 0xA4 <= code[0] <= 0xC6
    if codec == "cp949":  # KS X 1001's 2,350 syllables (CP949's other 8,822 are rare)
        return bool(_HANGUL.match(ch))
    return bool(_KANA.match(ch)) or 0x889F <= int(code.hex(), 16) < 0x9873  # JIS level 1


def _reads_as(text: str, codec: str) -> bool:
    """Whether ``text`` decoded with the legacy ``codec`` reads as its language: most of its
    characters that are not ASCII common ones (see the module); EUC-JP also needs kana, its
    kanji being GB2312's."""
    wide = "".join(ch for ch in text if ord(ch) >= 0x80)[:SAMPLE]
    if codec == "gb18030":
        from orchestrator.textnorm import to_simplified

        wide = to_simplified(wide)
    common = sum(_common(ch, codec) for ch in wide)
    if codec == "cp949":
        return common * 20 >= len(wide) * 19
    if codec == "euc_jp" and len(_KANA.findall(wide)) * 10 < len(wide):
        return False
    return common * 5 >= len(wide) * 4


def _evidence(text: str, codec: str) -> int:
    """Letters of ``text`` only the language of ``codec`` writes (Hangul, kana)."""
    if codec == "cp949":
        return len(_HANGUL.findall(text))
    return len(_KANA.findall(text)) if codec in ("cp932", "euc_jp") else 0


def _legacy(head: bytes, complete: bool) -> EncodingGuess | None:
    """The legacy code page ``head`` reads as (see the module), or None."""
    readings: dict[str, str] = {}
    for codec in LEGACY:
        if codec not in ("cp932", "euc_jp") and single_byte_code_page(head):
            continue  # Latin-1 text that would read as mojibake
        try:
            text = codecs.getincrementaldecoder(codec)().decode(head, final=complete)
        except UnicodeDecodeError:
            continue
        if _reads_as(text, codec) and text not in readings.values():
            readings[codec] = text
    if not readings:
        return None
    evidence = {c: _evidence(text, c) for c, text in readings.items()}
    best = max(readings, key=lambda c: evidence[c])  # the first of equals: GB18030 before all
    if evidence[best] < SOME_EVIDENCE:
        best = next(iter(readings))
    others = tuple(c for c in readings if c != best)
    sure = evidence[best] >= EVIDENCE and all(evidence[c] < SOME_EVIDENCE for c in others)
    return EncodingGuess(best, () if sure else others)


def guess_encoding(head: bytes, *, complete: bool) -> EncodingGuess | None:
    """The codec that reads ``head`` (a file's first bytes; ``complete`` when they are the
    whole file) as text, and how sure that is (see the module); None when none does.

    Example:
        >>> chinese = "产品,数量,城市\\n苹果,12,北京\\n香蕉,30,上海"
        >>> guess_encoding(chinese.encode("gbk"), complete=True)
        EncodingGuess(encoding='gb18030', also=())
        >>> guess_encoding("产品,数量\\n苹果,12".encode("gbk"), complete=True).also  # Big5 too
        ('cp950',)
        >>> korean = "이름,금액\\n김철수,1200\\n이영희,850\\n박민수,40\\n정다은,7\\n최유리,3"
        >>> guess_encoding(korean.encode("euc_kr"), complete=True)
        EncodingGuess(encoding='cp949', also=('gb18030',))
        >>> guess_encoding("Müller,1".encode("cp1252"), complete=True) is None
        True
    """
    found = next((enc for boms, enc in _BOMS if head.startswith(boms)), None)
    encoding = found or _utf16_without_bom(head) or "utf-8-sig"
    try:
        text = codecs.getincrementaldecoder(encoding)().decode(head, final=complete)
    except UnicodeDecodeError:  # a legacy code page, unless a BOM said otherwise or binary
        return None if found or b"\x00" in head else _legacy(head, complete)
    if encoding.startswith("utf-16-") and _CONTROL.search(text):
        return None  # a guess without a BOM that reads as control characters: binary
    return EncodingGuess(encoding)


def text_encoding(head: bytes, *, complete: bool) -> str | None:
    """The codec :func:`guess_encoding` reads ``head`` with, sure or not; None when none."""
    guess = guess_encoding(head, complete=complete)
    return guess.encoding if guess else None


def detect_encoding(
    path: Path, probe_bytes: int = 1 << 20, *, given: str | None = None
) -> EncodingGuess:
    """The codec of a delimited text file, from its first ``probe_bytes``
    (:func:`guess_encoding`), or ``given`` (the user's ``--encoding``) as it is.

    Raises:
        UnsupportedFileError: No codec reads it as text.
    """
    if given is not None:
        return EncodingGuess(given)
    with path.open("rb") as handle:
        head = handle.read(probe_bytes)
    guess = guess_encoding(head, complete=len(head) < probe_bytes)
    if guess is None:
        raise UnsupportedFileError(path, LEGACY_TEXT, LEGACY_HINT)
    return guess


def codec_name(name: str) -> str:
    """``name`` as Python's codec registry spells it (``EUC-KR`` → ``euc_kr``).

    Raises:
        ValueError: No such codec; the message names a few that are.
    """
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise ValueError(
            f"unknown encoding {name!r}; use a codec name such as utf-8, gb18030, big5, "
            "cp949 (euc-kr), cp932 (shift_jis), euc_jp or cp1252"
        ) from None
