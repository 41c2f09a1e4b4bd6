"""serving.placement: finding the cores a vLLM worker is bound to, and moving a client off them.

Real processes and real affinity masks (no test double): a child whose command line names
vLLM stands in for the worker, and the process that moves is a child too, so that the test
process keeps its own mask.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import psutil
import pytest

from serving.placement import Placement, colocate_engine_core, keep_off_server_cpus, server_cpus

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux CPU affinity and at least 2 allowed cores",
)

ALLOWED = sorted(os.sched_getaffinity(0))


def _sleeper(marker: str) -> subprocess.Popen[bytes]:
    # the marker sits in the command line, as vLLM's module path does in its API server's
    return subprocess.Popen([sys.executable, "-c", f"import time  # {marker}\ntime.sleep(60)"])


@pytest.fixture
def worker() -> Iterator[subprocess.Popen[bytes]]:
    proc = _sleeper("vllm.entrypoints stand-in")
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_a_bound_vllm_process_names_its_cores(worker: subprocess.Popen[bytes]) -> None:
    os.sched_setaffinity(worker.pid, {ALLOWED[0]})
    assert server_cpus([psutil.Process(worker.pid)]) == frozenset({ALLOWED[0]})


def test_an_unbound_vllm_process_binds_nothing(worker: subprocess.Popen[bytes]) -> None:
    os.sched_setaffinity(worker.pid, set(range(psutil.cpu_count() or 1)) & set(ALLOWED))
    if len(os.sched_getaffinity(worker.pid)) < (psutil.cpu_count() or 1):
        pytest.skip("this host's online cores are not all allowed here")
    assert server_cpus([psutil.Process(worker.pid)]) == frozenset()


def test_a_bound_process_that_is_not_vllm_is_ignored() -> None:
    other = _sleeper("some other server")
    try:
        os.sched_setaffinity(other.pid, {ALLOWED[0]})
        assert server_cpus([psutil.Process(other.pid)]) == frozenset()
    finally:
        other.kill()
        other.wait()


def test_a_bound_child_of_a_vllm_process_counts() -> None:
    # the API server's cmdline names vLLM; the worker (a grandchild in vLLM) does not
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "# vllm.entrypoints stand-in\nimport subprocess, sys, time\n"
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(c.pid, flush=True)\ntime.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        os.sched_setaffinity(child, {ALLOWED[-1]})
        assert server_cpus([psutil.Process(parent.pid)]) == frozenset({ALLOWED[-1]})
    finally:
        for p in psutil.Process(parent.pid).children(recursive=True):
            p.kill()
        parent.kill()
        parent.wait()


def _moved_in_child(bound: list[int]) -> dict[str, object]:
    """Run keep_off_server_cpus in a child with two threads; report every thread's mask."""
    code = textwrap.dedent(
        f"""
        import json, os, threading
        from serving.placement import keep_off_server_cpus
        started = threading.Event(); hold = threading.Event()
        t = threading.Thread(target=lambda: (started.set(), hold.wait()))
        t.start(); started.wait()
        p = keep_off_server_cpus(frozenset({bound!r}))
        masks = {{tid: sorted(os.sched_getaffinity(int(tid)))
                  for tid in os.listdir("/proc/self/task")}}
        later = threading.Thread(target=lambda: None)  # a thread started after the move
        later.start(); later.join()
        hold.set(); t.join()
        print(json.dumps({{"moved": p.moved, "after": sorted(p.after), "reason": p.reason,
                           "masks": masks, "describe": p.describe()}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_thread_moves_off_the_bound_cores() -> None:
    result = _moved_in_child([ALLOWED[0]])
    assert result["moved"] is True
    assert result["after"] == ALLOWED[1:]
    masks = result["masks"]
    assert isinstance(masks, dict) and len(masks) >= 2  # the main thread and the held one
    assert all(mask == ALLOWED[1:] for mask in masks.values())
    assert f"off the vLLM worker's {ALLOWED[0]}" in str(result["describe"])


def test_nothing_moves_when_the_worker_holds_every_allowed_core() -> None:
    result = _moved_in_child(ALLOWED)
    assert result["moved"] is False
    assert result["after"] == ALLOWED
    assert "all it may use" in str(result["reason"])


def test_nothing_moves_without_a_bound_worker() -> None:
    placement = keep_off_server_cpus(frozenset())
    assert not placement.moved
    assert placement.after == frozenset(ALLOWED)
    assert "no vLLM worker" in placement.describe()


def test_describe_writes_cpu_lists_as_the_kernel_does() -> None:
    placement = Placement(
        frozenset({0}), before=frozenset(range(8)), after=frozenset({1, 2, 3, 5, 7})
    )
    assert placement.moved
    assert placement.describe() == "client on CPUs 1-3,5,7, off the vLLM worker's 0"


# ---------------------------------------------------------------- the engine core beside its worker

#: A child that names itself as vLLM's processes do (``prctl(PR_SET_NAME)``, what
#: ``setproctitle`` sets as the kernel's ``comm``), starts a thread, writes its pid and sleeps.
_NAMED = (
    "import ctypes, os, threading, time\n"
    "ctypes.CDLL(None).prctl(15, {name!r}.encode(), 0, 0, 0)\n"
    "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    "os.write(1, b'%d\\n' % os.getpid())\ntime.sleep(60)"  # one write: two children share the pipe
)


@pytest.fixture
def server_tree(request: pytest.FixtureRequest) -> Iterator[dict[str, int]]:
    """A stand-in API server (its command line names vLLM) with the children that
    ``request.param`` names (``VLLM::EngineCore``, ``VLLM::Worker``): their pids by name."""
    names: list[str] = request.param
    spawn = "".join(
        f"c = subprocess.Popen([sys.executable, '-c', {_NAMED.format(name=n)!r}])\n" for n in names
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"# vllm.entrypoints stand-in\nimport subprocess, sys, time\n{spawn}time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert parent.stdout is not None
        pids = sorted(int(parent.stdout.readline()) for _ in names)
        by_name = {psutil.Process(pid).name(): pid for pid in pids}
        yield {"server": parent.pid, **by_name}
    finally:
        for p in psutil.Process(parent.pid).children(recursive=True):
            p.kill()
        parent.kill()
        parent.wait()


def _thread_masks(pid: int) -> list[frozenset[int]]:
    return [frozenset(os.sched_getaffinity(t.id)) for t in psutil.Process(pid).threads()]


ENGINE, WORKER = "VLLM::EngineCor", "VLLM::Worker"  # comm keeps 15 characters


@pytest.mark.parametrize("server_tree", [["VLLM::EngineCore", WORKER]], indirect=True)
def test_the_engine_core_moves_onto_its_workers_cores(server_tree: dict[str, int]) -> None:
    os.sched_setaffinity(server_tree[WORKER], {ALLOWED[-1]})
    placement = colocate_engine_core(server_tree["server"])
    assert placement.moved and placement.engine_core_pid == server_tree[ENGINE]
    assert placement.worker_cpus == placement.after == frozenset({ALLOWED[-1]})
    masks = _thread_masks(server_tree[ENGINE])
    assert len(masks) >= 2 and set(masks) == {frozenset({ALLOWED[-1]})}  # every thread
    assert f"on CPUs {ALLOWED[-1]}, beside its worker" in placement.describe()
    # the API server itself stays where it was
    assert frozenset(os.sched_getaffinity(server_tree["server"])) == frozenset(ALLOWED)
    again = colocate_engine_core(server_tree["server"])
    assert not again.moved and again.reason == "already beside its worker"


@pytest.mark.parametrize("server_tree", [["VLLM::EngineCore", WORKER]], indirect=True)
def test_nothing_moves_when_no_worker_is_bound(server_tree: dict[str, int]) -> None:
    if len(ALLOWED) < (psutil.cpu_count() or 1):
        pytest.skip("this host's online cores are not all allowed here")
    placement = colocate_engine_core(server_tree["server"])
    assert not placement.moved and "no vLLM worker bound" in placement.describe()
    assert frozenset(os.sched_getaffinity(server_tree[ENGINE])) == frozenset(ALLOWED)


@pytest.mark.parametrize("server_tree", [[WORKER]], indirect=True)
def test_nothing_moves_without_an_engine_core_process(server_tree: dict[str, int]) -> None:
    os.sched_setaffinity(server_tree[WORKER], {ALLOWED[0]})
    placement = colocate_engine_core(server_tree["server"])
    assert not placement.moved and placement.engine_core_pid is None
    assert placement.reason == "no separate engine core process"


def test_a_server_that_is_gone_moves_nothing() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    placement = colocate_engine_core(gone.pid)
    assert not placement.moved and "not readable" in placement.reason
