"""Terminal rendering (rich): request lines and the expert load table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # annotations only: `orchestrator load` needs neither the runtime nor numpy
    from datetime import datetime

    from orchestrator.analysis.load import ExpertLoad
    from orchestrator.config import Settings
    from orchestrator.core.dispatcher import RequestOutcome
    from orchestrator.telemetry import TelemetryReader

SOURCE_NOTE = {
    "replay": "replay = transformers replay of the served token ids: an estimate of the "
    "engine's routing, not its record",
    "engine": "engine = vLLM's own routed_experts record",
    "scripted": "scripted = made up by a test double",
}

_STATUS_STYLE = {
    "succeeded": "green",
    "failed": "bold red",
    "needs_human": "yellow",
    "no_workflow": "magenta",
}


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def request_lines(outcome: RequestOutcome, text: str, source: str | None) -> str:
    """Rich markup for one handled request: route, confidence, reply, top experts."""
    c = outcome.classification
    style = _STATUS_STYLE.get(outcome.status, "white")
    lines = [
        f"[bold]{c.route}[/] conf {c.confidence:.2f} [{style}]{outcome.status}[/] "
        f"[dim]{escape(source or outcome.request_id)}[/]  {escape(_clip(text, 70))!r}",
        f"  → {escape(_clip(outcome.headline, 110))}",
    ]
    if outcome.operator:  # the operator's next step, kept out of the headline
        lines.append(f"  [dim]operator: {escape(outcome.operator)}[/]")
    for call in outcome.calls:
        experts = " · ".join(
            f"L{layer} e{expert} {share:.0%}" for layer, expert, share in call.top_experts
        )
        conf = (
            "n/a" if call.mean_router_confidence is None else f"{call.mean_router_confidence:.2f}"
        )
        lines.append(
            f"  [dim]{call.node}: {call.prompt_tokens}+{call.completion_tokens} tok, "
            f"{call.latency_ms:.0f} ms, top experts {experts}, router conf {conf} "
            f"({call.expert_routing_source.value})[/]"
        )
    return "\n".join(lines)


def _experts(ids: list[int], show: int = 6) -> str:
    """``"3: e7, e2, e20"``, or ``"14: e7, e2, ... +8"`` for long lists; ``"-"`` when empty."""
    if not ids:
        return "-"
    head = ", ".join(f"e{e}" for e in ids[:show])
    return f"{len(ids)}: {head}" + (f" … +{len(ids) - show}" if len(ids) > show else "")


def load_table(load: ExpertLoad, title: str = "Expert load per MoE layer") -> Table:
    """The per-layer expert load table, with hot and dead experts marked."""
    uniform = 1.0 / load.num_experts
    table = Table(
        title=title, caption=" · ".join(SOURCE_NOTE.get(s, s) for s in sorted(load.sources))
    )
    table.add_column("layer", justify="right")
    table.add_column("activations", justify="right")
    table.add_column("balancedness\n(mean/max)", justify="right")
    table.add_column(f"top experts by load share (uniform {uniform:.1%})")
    table.add_column("hot 🔥", style="red")
    table.add_column("dead ✝", style="blue")
    for layer in load.layers:
        top = "  ".join(f"e{e} {s:.1%}" for e, s in layer.top(5))
        hot, dead = _experts(layer.hot), _experts(layer.dead)
        if not layer.judged:
            hot, dead = "too few calls to judge", "-"
        table.add_row(
            str(layer.layer), f"{layer.activations:,}", f"{layer.balancedness:.2f}", top, hot, dead
        )
    return table


def hot_dead_rule(load: ExpertLoad) -> str:
    """The hot and dead rule of ``load``'s verdicts (``orchestrator skew``'s), in one line,
    and how many layers had too little volume to judge."""
    t, experts = load.thresholds, load.num_experts
    unjudged = sum(not layer.judged for layer in load.layers)
    rule = (
        f"hot = {t.confidence:.0%} interval of the share above {t.hot_factor:g}x uniform "
        f"({t.hot_factor / experts:.1%}); dead = its interval below {t.dead_factor:g}x uniform "
        f"({t.dead_factor / experts:.2%}); judged with at least {t.min_expected:g} activations "
        f"per expert and {t.min_calls} calls (the rule of `orchestrator skew`)"
    )
    if unjudged:
        rule += (
            f"; {unjudged} of {len(load.layers)} layers have too few calls to judge: "
            "no verdict, not a healthy one"
        )
    return rule


def print_load(console: Console, load: ExpertLoad) -> None:
    """Print the load table, a one-line summary of what it covers, and the hot/dead rule."""
    sources = ", ".join(f"{n} {s}" for s, n in sorted(load.sources.items()))
    console.print(load_table(load))
    console.print(
        f"{load.calls} calls ({sources}), {load.routed_tokens:,} routed tokens, "
        f"{load.num_experts} routed experts, top-{load.top_k}"
        + (f"; {load.skipped} calls without routing skipped" if load.skipped else "")
    )
    console.print(hot_dead_rule(load))
    if load.pending > 0:
        console.print(
            f"[yellow]{load.pending} calls with expert routing pending "
            "(fill: orchestrator telemetry fill-routing)[/]"
        )


def print_expert_load(
    console: Console,
    store: TelemetryReader,
    settings: Settings,
    *,
    workflow: str | None = None,
    since: datetime | None = None,
    model: str | None = None,
) -> None:
    """Print the expert load table of ``store``'s model calls (of ``workflow``, from ``since``
    on, of served ``model``, when given), judged as ``orchestrator skew`` judges (its default
    thresholds, with ``settings.dead_min_expected`` as the minimum volume, as ``skew`` takes
    it).

    Raises:
        UserError: What :func:`orchestrator.analysis.load.expert_load` raises (no call with
            routing stored, model shapes mixed).
    """
    from orchestrator.analysis.load import expert_load
    from orchestrator.analysis.skew.models import Thresholds

    load = expert_load(
        store,
        workflow=workflow,
        since=since,
        thresholds=Thresholds(min_expected=settings.dead_min_expected),
        model=model,
    )
    print_load(console, load)
