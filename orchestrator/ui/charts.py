"""The charts the chat UI shows inline, as Plotly figure JSON (built here, in the project's
environment, with ``plotly``; the Chainlit app only hands the JSON to Chainlit's Plotly element,
so ``.venv-ui`` needs no plotly).

* :func:`expert_figure`: one answer's layer × expert load-share heatmap (numbers only), titled
  with its expert-routing source (engine or replay).
* :func:`report_figures`: the charts of an ``excel_report`` workbook (its ``Chart data`` sheet,
  written by :func:`workflows.excel_report.render.build_xlsx`), as bar or line charts.

Every text that comes from a workbook or a model (category names, titles) goes through
:func:`plot_text`: plotly.js reads a subset of HTML in titles, tick labels and hover text
(``<b>``, ``<br>``, ``<a href=...>``...) and decodes entities, so ``<``, ``>`` and ``&`` are
written as entities: the text shows as typed and is never markup.
"""

from __future__ import annotations

import html
import json
import math
import re
import zipfile
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from openpyxl.utils.exceptions import InvalidFileException

#: The longest label kept on a chart (characters; longer ones end with an ellipsis).
MAX_LABEL = 60
#: The most charts taken from one report workbook.
MAX_REPORT_CHARTS = 4
#: The most categories drawn in one report chart.
MAX_CATEGORIES = 50


def plot_text(value: object, limit: int = MAX_LABEL) -> str:
    """``value`` as plain text for a Plotly title, label or hover: control characters removed,
    cut to ``limit`` characters, then ``& < >`` written as HTML entities, which plotly.js
    shows as the characters and never reads as tags (quotes matter only inside a tag, and
    plotly.js would show ``&quot;`` as it is).

    >>> plot_text('<a href="javascript:x">hi</a> & co')
    '&lt;a href="javascript:x"&gt;hi&lt;/a&gt; &amp; co'
    """
    text = re.sub(r"[\x00-\x1f\x7f]+", " ", str(value)).strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=False)


def _figure_json(figure: go.Figure) -> dict[str, Any]:
    """The figure as validated Plotly JSON (a dict Chainlit's Plotly element renders)."""
    return dict(json.loads(pio.to_json(figure, validate=True)))


#: The heatmap's colours: a dark-blue-to-yellow scale (viridis-like) whose low end stands out
#: on a white page and whose high end on a black one.
HEATMAP_COLORS = [[0.0, "#3b4cc0"], [0.5, "#2ca089"], [1.0, "#f2d13a"]]
#: The heatmap's height: title and axes, plus one row per MoE layer (pixels).
HEATMAP_BASE_PX, HEATMAP_ROW_PX = 110, 30


def expert_figure(grid: dict[str, Any]) -> dict[str, Any] | None:
    """A layer × expert heatmap of one answer's load share.

    Args:
        grid: :func:`orchestrator.ui.service.expert_grid`'s output: ``layers`` (ints),
            ``experts`` (ints), ``share`` (``len(layers) × len(experts)`` fractions in 0..1,
            each row summing to 1) and ``sources`` (expert-routing sources).

    Returns:
        Plotly figure JSON, or None when no call routed through experts.

    Raises:
        ValueError: ``share`` does not have the shape of ``layers`` × ``experts``, or holds a
            value outside 0..1.
    """
    layers = [int(layer) for layer in grid.get("layers", [])]
    experts = [int(expert) for expert in grid.get("experts", [])]
    share = grid.get("share", [])
    if not layers or not experts:
        return None
    if len(share) != len(layers) or any(len(row) != len(experts) for row in share):
        raise ValueError(
            f"share must be {len(layers)} layers × {len(experts)} experts, got "
            f"{len(share)} rows of {sorted({len(row) for row in share})}"
        )
    values = [[float(v) for v in row] for row in share]
    if any(not (0.0 <= v <= 1.0) or math.isnan(v) for row in values for v in row):
        raise ValueError("load shares must be within 0..1")
    source = ", ".join(plot_text(s, 20) for s in grid.get("sources", [])) or "unknown"
    figure = go.Figure(
        go.Heatmap(
            z=values,
            x=[f"E{e}" for e in experts],
            y=[f"L{layer}" for layer in layers],
            zmin=0.0,
            zmax=max(max(row) for row in values) or 1.0,
            colorscale=HEATMAP_COLORS,
            colorbar={"title": {"text": "share"}, "tickformat": ".0%", "thickness": 12},
            hovertemplate="layer %{y} · expert %{x}: %{z:.1%} of the layer's picks<extra></extra>",
            xgap=1,
            ygap=1,
        )
    )
    figure.update_layout(
        title={"text": f"expert load share per MoE layer (source: {source})", "font": {"size": 13}},
        xaxis={"title": {"text": "expert"}, "type": "category", "tickfont": {"size": 9}},
        yaxis={"title": {"text": "layer"}, "type": "category", "autorange": "reversed"},
        # sized to the message: a row per layer, the width of the message column
        height=HEATMAP_BASE_PX + HEATMAP_ROW_PX * len(layers),
        autosize=True,
        margin={"l": 50, "r": 20, "t": 36, "b": 40},
        # readable on the light and the dark theme: no background of its own, mid-grey text
        # and grid, a colour scale whose ends both differ from white and from black
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        font={"color": "#8a8f98"},
    )
    return _figure_json(figure)


def _chart_blocks(path: Path) -> list[tuple[str, list[tuple[str, float]]]]:
    """``(title, [(category, value)...])`` per block of the workbook's ``Chart data`` sheet:
    a title row (``value`` in column B), then one row per category, then a blank row."""
    from openpyxl import load_workbook

    workbook = load_workbook(path, read_only=True, data_only=True)
    try:
        if "Chart data" not in workbook.sheetnames:
            return []
        blocks: list[tuple[str, list[tuple[str, float]]]] = []
        for a, b in workbook["Chart data"].iter_rows(min_col=1, max_col=2, values_only=True):
            if b == "value" and a is not None:
                blocks.append((str(a), []))
            elif blocks and a is not None and isinstance(b, int | float) and math.isfinite(b):
                blocks[-1][1].append((str(a), float(b)))
        return [block for block in blocks if block[1]]
    finally:
        workbook.close()


def report_figures(path: str | Path) -> list[dict[str, Any]]:
    """The charts of a report workbook written by the ``excel_report`` workflow, as Plotly
    figure JSON: a line chart for a series per period (title ``... per period``), a bar chart
    for the others; at most :data:`MAX_REPORT_CHARTS`, each with at most
    :data:`MAX_CATEGORIES` categories. Titles and categories are workbook text, escaped with
    :func:`plot_text`.

    Returns:
        One figure per chart; ``[]`` when the workbook has no ``Chart data`` sheet.

    Raises:
        FileNotFoundError: No file at ``path``.
        ValueError: The file is not a workbook openpyxl can read (its message).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no report workbook at {path}")
    try:
        blocks = _chart_blocks(path)
    except (OSError, KeyError, zipfile.BadZipFile, InvalidFileException) as exc:
        raise ValueError(f"cannot read the charts of {path.name}: {exc}") from exc
    figures = []
    for title, points in blocks[:MAX_REPORT_CHARTS]:
        points = points[:MAX_CATEGORIES]
        labels: list[str] = []
        for label, _ in points:  # distinct: a category axis would merge equal (cut) labels
            text, n = plot_text(label), 1
            while text in labels:
                n += 1
                text = f"{plot_text(label)} ({n})"
            labels.append(text)
        values = [value for _, value in points]
        if title.endswith(" per period"):
            trace: go.Bar | go.Scatter = go.Scatter(
                x=labels,
                y=values,
                mode="lines+markers",
                hovertemplate="%{x}: %{y:,}<extra></extra>",
            )
        else:
            trace = go.Bar(x=labels, y=values, hovertemplate="%{x}: %{y:,}<extra></extra>")
        figure = go.Figure(trace)
        figure.update_layout(
            title={"text": plot_text(title, 120)},
            xaxis={"type": "category"},
            height=320,
            margin={"l": 60, "r": 20, "t": 40, "b": 80},
            template="plotly_white",
        )
        figures.append(_figure_json(figure))
    return figures
