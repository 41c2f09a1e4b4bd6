"""Harbor Assistant's spreadsheet reports and moderation panel: the upload checked (a
spreadsheet, under the size limit, its name made safe to show), the report's files named after
the workbook and its charts, and a post's moderation verdict with its spans in bold (part of
``ui/app.py``; runs in ``.venv-ui``)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import chainlit as cl
from chainlit.element import Element
from service_client import call, fetch_file, md, safe_name
from turn import PlotlyJson, run_turn

#: The largest spreadsheet taken (bytes; .chainlit/config.toml's max_size_mb says the same).
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
#: Extensions the report workflow reads (orchestrator.spreadsheet).
SPREADSHEETS = frozenset((".xlsx", ".xlsm", ".xls", ".csv", ".tsv"))


async def moderate(post: str) -> None:
    if not post:
        await cl.Message(content="paste the post to moderate (Moderate, or /moderate TEXT)").send()
        return
    route = await panel_route()
    if route is None:
        await cl.Message(content="No route here reviews posts; the panel is off.").send()
        return
    done, _ = await run_turn(post, route=route)
    await cl.Message(content=verdict_text(post, done)).send()


async def panel_route() -> str | None:
    """The route the moderation panel fixes: the declared route whose content is under review
    (``wraps_content``, from the service's ``/api/routes``), or None."""
    status, routes = await call("GET", "/api/routes")
    if status != 200 or not isinstance(routes, list):
        return None
    return next((str(r["name"]) for r in routes if r.get("wraps_content")), None)


def file_problem(files: list[Any]) -> str | None:
    """Why these uploads cannot make a report (one line), or None."""
    names = ", ".join(md(safe_name(f.name)) for f in files)
    sheets = [f for f in files if os.path.splitext(f.name)[1].lower() in SPREADSHEETS]
    if not sheets:
        kinds = "/".join(sorted(SPREADSHEETS))
        return f"**Not a spreadsheet:** {names}. Attach one {kinds} file for a report."
    size = max(_size(f) for f in sheets)
    if size > MAX_UPLOAD_BYTES:
        limit = MAX_UPLOAD_BYTES // (1024 * 1024)
        return f"**Too large:** {names} is {size / 1024 / 1024:.0f} MB; the limit is {limit} MB."
    return None


def _size(element: Any) -> int:
    try:
        return int(element.size) if isinstance(element.size, int) else os.path.getsize(element.path)
    except (OSError, TypeError, ValueError):
        return 0


def why_not(result: dict[str, Any], sheet: Any) -> str:
    """Why the report was not written, naming the workbook as the person named it (the
    workflow names the stored upload, whose name is Chainlit's id for it)."""
    error = str(result.get("error") or "the report could not be written; please try again")
    stored = os.path.basename(str(getattr(sheet, "path", "") or ""))
    if not stored:
        return error
    return re.sub(rf"(?<![\w-]){re.escape(stored)}(?![\w-])", safe_name(sheet.name), error)


async def report(text: str, files: list[Any]) -> None:
    """A spreadsheet's report: its files (named after the workbook) and its charts."""
    problem = file_problem(files)
    if problem:
        await cl.Message(content=problem).send()
        return
    sheets = [f for f in files if os.path.splitext(f.name)[1].lower() in SPREADSHEETS]
    sheet = sheets[0]
    if len(files) > 1:
        others = ", ".join(md(safe_name(f.name)) for f in files if f is not sheet)
        await cl.Message(
            content=f"one spreadsheet per report: reading {md(safe_name(sheet.name))}, "
            f"leaving {others}"
        ).send()
    done, charts = await run_turn(
        text or "Please write a report of this spreadsheet",
        path=sheet.path,
        name=safe_name(sheet.name),
    )
    result = done.get("result") or {}
    stem = os.path.splitext(safe_name(sheet.name))[0]
    elements: list[Element] = []
    missing: list[str] = []
    for key, suffix in (("markdown", ".md"), ("xlsx", ".xlsx")):
        if result.get(key):
            name = os.path.basename(str(result[key]))
            status, content = await fetch_file(name)
            if status == 200:
                elements.append(cl.File(name=f"{stem}-report{suffix}", content=content))
            else:
                missing.append(f"{stem}-report{suffix}")
    note = "report files:" if elements else "no report files: " + md(why_not(result, sheet))
    if missing:
        note += " · could not fetch " + md(", ".join(missing))
    if charts:
        note += f" · {len(charts)} chart{'s' if len(charts) > 1 else ''}:"
    elements += [
        PlotlyJson(name=f"report chart {i}", content=json.dumps(chart), display="inline")
        for i, chart in enumerate(charts, start=1)
    ]
    await cl.Message(content=note, elements=elements).send()


def highlight(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` Markdown-escaped, with each ``(start, end)`` span in bold (overlapping or
    out-of-range spans are skipped)."""
    out, last = [], 0
    for start, end in sorted(spans):
        if start < last or end > len(text) or start >= end:
            continue
        out += [md(text[last:start]), "**", md(text[start:end]), "**"]
        last = end
    out.append(md(text[last:]))
    return "".join(out)


def verdict_text(post: str, done: dict[str, Any]) -> str:
    """The moderation panel's answer: the decision, severity and categories of the verdict
    and the post with its triggering spans in bold; the status and headline when none."""
    result = done.get("result") or {}
    if "decision" not in result:
        return (
            f"**moderation** no verdict: {md(done.get('status'))} {md(done.get('headline') or '')}"
            f"\n\n> {md(post)}"
        )
    spans = [
        (s["start"], s["end"])
        for s in result.get("spans") or []
        if isinstance(s.get("start"), int) and isinstance(s.get("end"), int)
    ]
    categories = ", ".join(
        f"{md(c.get('category'))} {float(c.get('score', 0)):.2f}"
        for c in result.get("categories") or []
    )
    lines = [
        f"**moderation** decision **{md(result['decision'])}** · severity "
        f"{md(result.get('severity'))} · categories {categories or 'none'}",
        f"> {highlight(post, spans)}",
    ]
    if result.get("rationale"):
        lines.append(f"rationale: {md(result['rationale'])}")
    return "\n\n".join(lines)
