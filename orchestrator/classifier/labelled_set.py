"""The labelled request set: real requests from ``../shared/data`` with the route they should take.

How it is built (reproducible: no randomness outside stable hashes, so the same input files
always give the same set, and a new row never moves an old row between splits):

* **customer_service** — every text of ``customer_service/*.csv`` except CLINC150's
  out-of-scope rows: BANKING77 and Bitext utterances, CLINC150 in-scope utterances (150
  intents of a virtual assistant), waimai food-delivery reviews (Chinese) and both questions
  of every ATEC Alipay pair (Chinese, de-duplicated).
  Also everyday customer requests written for this set (:data:`CS_WRITTEN`: a cold meal, a
  courier, an angry customer, a membership, a hotel or a phone bill) and one customer text in
  three wrapped as a long polite e-mail or an angry message (:data:`REQUEST_WRAPPERS`,
  :data:`COMPLAINT_WRAPPERS`).
* **fallback** — CLINC150 rows with ``intent == "oos"`` (out-of-scope for every route), its
  assistant intents, its intents that ask for another kind of business's product or service
  (``CLINC_OTHER_BUSINESS_INTENTS``: a flight, a hotel, an insurance plan, a credit score...),
  out-of-scope questions written for this set (some name a service word); one in three
  comes in a neutral polite wrapper too, so that politeness tells no route.
* **content_moderation** — posts of ``moderation/*.csv`` (Davidson tweets, Jigsaw comments,
  COLD Chinese posts; every post, offensive or not) *submitted for review*: each post is
  wrapped in a review request such as ``Please review this post before it goes live: …`` or
  ``请审核这条帖子：…``, in the post's language. One wrapper in six is no wrapper at all: the
  bare post arriving on the ``moderation_queue`` channel, as a moderation tool would send it
  (the bare posts that their dataset labels offensive come with no channel: abuse typed into
  any box is for moderation). The other rows carry no channel either: a channel that only some
  routes' rows carry would be a label the learned tier reads.
* **excel_report** — a request that comes with a spreadsheet: an ask text ("Summarise the
  attached workbook by month", "请根据附件表格生成月度报表") in English or Chinese with one real
  file of ``spreadsheets/`` as the attachment. One in five carries no attachment and names the
  file in the text instead (``… (file: sales.xlsx)``).

**Split.** Each row goes to ``tune`` or ``test`` by a SHA-256 of ``source|text`` (50/50).
Wrappers and ask texts are split too: held-out requests use only wrappers and ask texts that
the tune split never contains, so a rule or threshold fitted on ``tune`` cannot have seen the
phrasing of a ``test`` request. ``test`` is the held-out split: the evaluation and the benchmark
read it, and threshold fitting never does.

**Size.** At most ``cap`` rows per source file and split (400 by default), chosen by the same
hash, so each source weighs about the same and a run stays quick.
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from orchestrator.classifier.labelled_phrases import (
    CLINC_CS_DOMAINS,
    CLINC_CS_INTENTS,
    CLINC_OTHER_BUSINESS_INTENTS,
    COMPLAINT_WRAPPERS,
    CS_WRITTEN,
    EXCEL_ASKS,
    MODERATION_WRAPPERS,
    OOS_SERVICE_TEMPLATES,
    OTHER_BUSINESS_WRITTEN,
    REQUEST_WRAPPERS,
    SERVICE_TOPICS,
    WRAPPED_POST_SOURCES,
    WRAPPED_REQUEST_SOURCES,
    ZH_OUT_OF_SCOPE,
    Lang,
    Split,
)
from orchestrator.datasets import TEXT_COLUMNS, moderation_labels
from orchestrator.exceptions import UserError
from orchestrator.request import MAX_TEXT_CHARS, Attachment, Request
from orchestrator.routes import FALLBACK, Route

# The labelled set is the built-in workflows' training data, built from their datasets
# (customer_service/, moderation/, spreadsheets/ of the data folder): it names their routes
# here, as data. A user's route is learned from its own examples (``classifier fit --examples``).
_CS = Route("customer_service")
_MOD = Route("content_moderation")
_XL = Route("excel_report")

#: The phrasing tables, re-exported (tests and tools read them from here).
__all__ = [
    "CLINC_CS_DOMAINS",
    "CLINC_CS_INTENTS",
    "CLINC_OTHER_BUSINESS_INTENTS",
    "COMPLAINT_WRAPPERS",
    "CS_WRITTEN",
    "EXCEL_ASKS",
    "MODERATION_WRAPPERS",
    "OOS_SERVICE_TEMPLATES",
    "OTHER_BUSINESS_WRITTEN",
    "REQUEST_WRAPPERS",
    "SERVICE_TOPICS",
    "WRAPPED_POST_SOURCES",
    "WRAPPED_REQUEST_SOURCES",
    "ZH_OUT_OF_SCOPE",
    "LabelledRequest",
    "build_labelled_set",
    "family_split",
    "load_split",
    "split_of",
    "written_rows",
]


class LabelledRequest(BaseModel):
    """One request of the labelled request set and the route it should take.

    Attributes:
        id: ``source:row`` (plus a suffix for generated variants); unique in a set.
        text: The request text.
        attachments: Attachment file names.
        channel: Channel of the request, or None.
        route: The right route.
        lang: ``en`` or ``zh``.
        source: Data file the text came from (``davidson_hate_offensive_sample.csv``...).
        split: ``tune`` (fitting allowed) or ``test`` (held out).
        template: Wrapper or ask-text id for generated requests, else None.
        family: Phrasing family: the wrapper or ask text, the intent of a templated source
            (BANKING77, Bitext, CLINC), else the row itself. A family lies wholly in one split.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    attachments: tuple[str, ...] = ()
    channel: str | None = None
    route: Route
    lang: Lang
    source: str
    split: Split
    template: str | None = None
    family: str = ""

    def to_request(self) -> Request:
        """The :class:`Request` to classify (metadata carries ``source`` = the id)."""
        return Request(
            text=self.text,
            channel=self.channel,
            attachments=tuple(Attachment(filename=name) for name in self.attachments),
            metadata={"source": self.id},
        )


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:8], "big")


def split_of(source: str, text: str) -> Split:
    """``test`` for half the rows, chosen by a stable hash of ``source|text``."""
    return "test" if _hash(source, text) % 2 else "tune"


def _rows(path: Path, columns: tuple[str, ...] = TEXT_COLUMNS) -> Iterator[tuple[int, dict]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            if not any(c in (reader.fieldnames or []) for c in columns):
                raise UserError(f"{path}: no text column; expected one of {columns}")
            for i, row in enumerate(reader):
                yield i + 2, row
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: cannot read as UTF-8 CSV: {exc}") from exc


def _text(row: dict, columns: tuple[str, ...] = TEXT_COLUMNS) -> str:
    for column in columns:
        value = (row.get(column) or "").strip()
        if value:
            return value
    return ""


_CJK = re.compile(r"[\u3400-\u9fff]")


def _is_zh(text: str) -> bool:
    cjk = len(_CJK.findall(text))
    return cjk >= 2 and cjk * 4 >= len(text.replace(" ", ""))


#: Column that names a row's intent, per customer-service file; rows of one intent are one
#: phrasing family (BANKING77, Bitext and CLINC phrase each intent from shared templates).
_INTENT_COLUMNS = ("intent", "category")


def family_split(family: str) -> Split:
    """``test`` for half the phrasing families, by a stable hash of the family id."""
    return "test" if _hash("family", family) % 2 else "tune"


def _customer_service(folder: Path) -> Iterator[LabelledRequest]:
    for path in sorted(folder.glob("*.csv")):
        seen: set[str] = set()
        for row_no, row in _rows(path, (*TEXT_COLUMNS, "sentence2")):
            texts = [_text(row)]
            if "sentence2" in row:  # ATEC: both questions of a pair are real questions
                texts = [(row.get("sentence1") or "").strip(), (row.get("sentence2") or "").strip()]
            intent = next((row[c] for c in _INTENT_COLUMNS if row.get(c)), "")
            oos = intent == "oos"
            clinc = path.name.startswith("clinc150") and not oos
            other = clinc and intent in CLINC_OTHER_BUSINESS_INTENTS
            assistant = bool(
                clinc
                and not other
                and row.get("domain") not in CLINC_CS_DOMAINS
                and intent not in CLINC_CS_INTENTS
            )
            if intent:
                family = f"{path.name}:{intent}"
                split = family_split(family)
                if oos:  # CLINC's oos rows share no template: split by row
                    family = f"{path.name}:oos:{row_no}"
                    split = split_of(path.name, texts[0])
            else:  # natural text (waimai reviews, ATEC pairs): each row (pair) is its own family
                family = f"{path.name}:{row_no}"
                split = split_of(path.name, texts[0])
            for k, text in enumerate(texts):
                if not text or text in seen or len(text) > MAX_TEXT_CHARS:
                    continue
                seen.add(text)
                fallback = oos or assistant or other
                kind = ":oos" if oos else ":assistant" if assistant else ""
                yield LabelledRequest(
                    id=f"{path.name}:{row_no}" + (f".{k + 1}" if len(texts) > 1 else ""),
                    text=text,
                    route=FALLBACK if fallback else _CS,
                    lang="zh" if _is_zh(text) else "en",
                    source=path.name + (":other_business" if other else kind),
                    split=split,
                    family=family,
                )


def _oos_service_words() -> Iterator[LabelledRequest]:
    for lang, splits in OOS_SERVICE_TEMPLATES.items():
        topics = SERVICE_TOPICS[lang]
        for split, templates in splits.items():
            for t, template in enumerate(templates):
                key = "food" if "{food}" in template else "x"
                pool = sorted(topics[key], key=lambda x: _hash("topic", template, x))
                for k, topic in enumerate(pool[:8]):
                    text = template.format(**{key: topic})
                    yield LabelledRequest(
                        id=f"oos_service:{lang}.{split}.{t}.{k}",
                        text=text[:1].upper() + text[1:] if k % 3 == 0 else text,
                        route=FALLBACK,
                        lang=lang,
                        source=f"oos_service_word/{lang}",
                        split=split,
                        template=f"oos.svc.{lang}.{split}.{t}",
                        family=f"oos.svc.{lang}.{split}.{t}",
                    )


def written_rows(
    tables: dict[Lang, dict[Split, dict[str, tuple[str, ...]]]],
    route: Route,
    name: str,
    prefix: str,
    *,
    lang_named: bool = True,
) -> Iterator[LabelledRequest]:
    """The rows of texts written for this set (language -> split -> phrasing family ->
    texts), each of ``route``: id ``{name}:{lang}.{split}.{family}.{i}``, source
    ``{name}/{lang}``, template ``{prefix}.{lang}.{split}.{family}``, family
    ``{prefix}.{lang}.{family}``. ``lang_named=False`` leaves the language out of the id and
    the source (the Chinese out-of-scope table, written before the others had languages; its
    ids stay as they were, since the picks and wrappers hash them)."""
    for lang, splits in tables.items():
        head, source = (f"{name}:{lang}.", f"{name}/{lang}") if lang_named else (f"{name}:", name)
        for split, families in splits.items():
            for family, texts in families.items():
                for i, text in enumerate(texts):
                    yield LabelledRequest(
                        id=f"{head}{split}.{family}.{i}",
                        text=text,
                        route=route,
                        lang=lang,
                        source=source,
                        split=split,
                        template=f"{prefix}.{lang}.{split}.{family}",
                        family=f"{prefix}.{lang}.{family}",
                    )


def _wrapped_requests(rows: list[LabelledRequest]) -> Iterator[LabelledRequest]:
    for row in rows:
        if row.source not in WRAPPED_REQUEST_SOURCES or _hash("req wrap?", row.id) % 3:
            continue
        kinds = [("req", REQUEST_WRAPPERS)]
        if row.route == _CS:
            kinds.append(("complaint", COMPLAINT_WRAPPERS))
        name, table = kinds[_hash("req kind", row.id) % len(kinds)]
        wrappers = table[row.lang][row.split]
        w = _hash("req wrap", row.id, row.text) % len(wrappers)
        family = f"{name}.{row.lang}.{row.split}.{w}"
        yield LabelledRequest(
            id=f"wrapped_request:{row.id}",
            text=wrappers[w].format(req=row.text),
            route=row.route,
            lang=row.lang,
            source=f"wrapped_request/{row.route}/{row.lang}",
            split=row.split,
            template=family,
            family=family,
        )


def _wrapped_posts(cs_rows: list[LabelledRequest]) -> Iterator[LabelledRequest]:
    for row in cs_rows:
        if row.source not in WRAPPED_POST_SOURCES or _hash("wrap?", row.id) % 3:
            continue  # one customer text in three is also submitted as a post
        wrappers = MODERATION_WRAPPERS[row.lang][row.split]
        usable = [(i, wr) for i, wr in enumerate(wrappers) if wr is not None]
        w, wrapper = usable[_hash("wrap", row.id, row.text) % len(usable)]
        yield LabelledRequest(
            id=f"wrapped:{row.id}",
            text=wrapper.format(post=row.text),
            route=_MOD,
            lang=row.lang,
            source=f"wrapped_customer_text/{row.lang}",
            split=row.split,
            template=f"mod.{row.lang}.{row.split}.{w}",
            family=f"mod.{row.lang}.{row.split}.{w}",
        )


def _moderation(folder: Path) -> Iterator[LabelledRequest]:
    for path in sorted(folder.glob("*.csv")):
        for row_no, row in _rows(path):
            post = _text(row)
            if not post:
                continue
            lang: Lang = "zh" if _is_zh(post) else "en"
            split = split_of(path.name, post)
            wrappers = MODERATION_WRAPPERS[lang][split]
            # one post in six arrives bare (the None entry), the rest in one of the wrappers
            if _hash("bare?", path.name, post) % 6 == 0:
                w = wrappers.index(None)
            else:
                usable = [i for i, x in enumerate(wrappers) if x is not None]
                w = usable[_hash("wrap", path.name, post) % len(usable)]
            wrapper = wrappers[w]
            text = post if wrapper is None else wrapper.format(post=post)
            # no channel, as the customer-service and out-of-scope rows have none: a channel
            # that only some routes' rows carry is a label the learned tier reads (it sent
            # every request without one away from moderation and reports)
            channel: str | None = None
            if wrapper is None and not _offensive(row):
                # a bare harmless post is for moderation only because it comes from the
                # moderation queue; a bare offensive one needs no channel (abuse typed into any
                # box is for moderation), so the tier learns that from the text
                channel = "moderation_queue"
            yield LabelledRequest(
                id=f"{path.name}:{row_no}",
                text=text,
                channel=channel,
                route=_MOD,
                lang=lang,
                source=path.name,
                split=split,
                template=f"mod.{lang}.{split}.{w}",
                family=f"mod.{lang}.{split}.{w}",
            )


#: How a request that comes without an attachment names its file in the text.
_NAMED_FILE: dict[Lang, tuple[str, ...]] = {
    "en": ("{ask} (file: {name})", "{name}: {ask}", "{ask} See {name}.", "Re {name} - {ask}"),
    "zh": ("{ask}（文件：{name}）", "{name}：{ask}", "{ask}，文件是 {name}", "关于{name}，{ask}"),
}


def _offensive(row: dict) -> bool:
    """Whether a moderation dataset row is labelled offensive (flagged) by its dataset."""
    return (moderation_labels(row, set(row)) or {}).get("flagged", False)


def _excel(folder: Path, per_split: int) -> Iterator[LabelledRequest]:
    files = sorted(
        p.name for p in folder.iterdir() if p.suffix.lower() in {".xlsx", ".xls", ".csv"}
    )
    if not files:
        return
    for split in ("tune", "test"):
        for lang in ("en", "zh"):
            asks = EXCEL_ASKS[lang][split]
            for i in range(per_split // 2):
                a = _hash("ask", split, lang, str(i)) % len(asks)
                name = files[_hash("file", split, lang, str(i)) % len(files)]
                in_text = _hash("mode", split, lang, str(i)) % 5 == 0
                text = asks[a]
                if in_text:  # the file named in the text, in one of a few ways
                    forms = _NAMED_FILE[lang]
                    form = forms[_hash("form", split, lang, str(i)) % len(forms)]
                    text = form.format(ask=asks[a], name=name)
                yield LabelledRequest(
                    id=f"spreadsheets:{split}.{lang}.{i}",
                    text=text,
                    attachments=() if in_text else (name,),
                    route=_XL,
                    lang=lang,
                    source=f"spreadsheets/{lang}",
                    split=split,
                    template=f"xl.{lang}.{split}.{a}",
                    family=f"xl.{lang}.{split}.{a}",
                )


def build_labelled_set(data_dir: Path, *, cap: int = 400) -> list[LabelledRequest]:
    """Build the labelled request set from the shared data folder.

    Args:
        data_dir: Folder with ``customer_service/``, ``moderation/`` and ``spreadsheets/``.
        cap: Most rows per source and split (chosen by hash); ``0`` means no cap.

    Returns:
        Rows of both splits, ordered by source then hash (stable across runs).

    Raises:
        UserError: A folder is missing or a CSV cannot be read.
    """
    data_dir = Path(data_dir)
    for kind in ("customer_service", "moderation", "spreadsheets"):
        if not (data_dir / kind).is_dir():
            raise UserError(
                f"{data_dir / kind} is missing; point --data-dir (ORCH_DATA_DIR) at the folder "
                "that holds customer_service/, moderation/ and spreadsheets/"
            )
    cs = list(_customer_service(data_dir / "customer_service"))
    oos = [
        *written_rows(
            {"zh": ZH_OUT_OF_SCOPE}, FALLBACK, "zh_out_of_scope", "oos", lang_named=False
        ),
        *_oos_service_words(),
        *written_rows(OTHER_BUSINESS_WRITTEN, FALLBACK, "other_business_written", "ob"),
    ]
    rows = [
        *cs,
        *_moderation(data_dir / "moderation"),
        *_wrapped_posts(cs),
        *_wrapped_requests([*cs, *oos]),
        *_excel(data_dir / "spreadsheets", per_split=cap or 400),
        *oos,
        *written_rows(CS_WRITTEN, _CS, "cs_written", "cs"),
    ]
    groups: dict[tuple[str, str], list[LabelledRequest]] = {}
    for row in rows:
        groups.setdefault((row.source, row.split), []).append(row)
    out: list[LabelledRequest] = []
    for key in sorted(groups):
        group = sorted(groups[key], key=lambda r: _hash("pick", r.id, r.text))
        out.extend(group[:cap] if cap else group)
    return out


def load_split(
    data_dir: Path, split: Split | Literal["all"], *, cap: int = 400
) -> list[LabelledRequest]:
    """The rows of one split (``all`` for both)."""
    rows = build_labelled_set(data_dir, cap=cap)
    return rows if split == "all" else [r for r in rows if r.split == split]
