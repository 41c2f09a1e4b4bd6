"""Issue 7 on the lent GPU: the 21B-A3B shape on vLLM 0.24.0, engine routing vs replay, benchmarks.

Subcommands (``python -m benchmarks.gpu CMD`` from the repository root; the older
``PYTHONPATH=. python benchmarks/gpu_run.py CMD`` still works). State under ``--state``
(``$GPURUN_STATE``, default ``/tmp/gpurun``), results under ``--out`` (``$OUT``), data under
``--data`` (``$GPURUN_DATA``, default ``.gpudata``):

``build`` (:mod:`.build`)
    Build the random-weight checkpoint in the full ``baidu/ERNIE-4.5-21B-A3B-PT`` shape
    (28 layers, 64 experts, top-6, 2 shared, bf16) with the project's builder, on the GPU.
``hold`` (:mod:`.hold`)
    Start two servers with the project's launcher and ``gpu_profile``: routed experts **on**
    (port 8100, the profile as is) and **off** (port 8101, the same flags without
    ``--enable-return-routed-experts``), each with ``--gpu-memory-utilization 0.42``; keep them
    until ``<state>/stop`` exists. Started detached (``setsid``), it outlives one command.
    ``--servers on`` starts only the first.
``measure --phases ...`` (:mod:`.cli`; the load generator is :mod:`.load`)
    ``agree`` (:mod:`.agree`): send real customer-service requests to the on-server and keep the
    bodies (token ids + routed_experts) for the replay; also record small fixtures and check
    the project's ``VLLMClient`` on the same server. ``decode`` (:mod:`.decode`): time decode +
    aggregate + telemetry write. ``b128``, ``b32``, ``b8`` (:mod:`.bench`): routed experts off
    vs on at that concurrency (warm-up, then three alternating repetitions of 1024 requests).
    ``orch`` (:mod:`.orch`): the project's full path vs a plain client sending the same model
    calls (without the triage json_schema on both paths when ``diag`` found the server
    answering 500 to it). ``diag`` (:mod:`.diag`): which structured-output request variants
    the server accepts. Phases that do not fit the time budget are skipped and left for the
    next command. ``--quick``: small workloads (a smoke test of the plumbing).
``replay`` (:mod:`.replay`)
    Stop the servers, replay the ``agree`` token ids through the same checkpoint in
    transformers on the GPU (bf16), and compare expert ids and gate margins.

The modules import the project lazily, phase by phase, because the GPU machine gets only what
each phase needs (the build step has no SQLAlchemy or LangGraph); every project name used is
public.
"""
