#!/bin/bash
# Issue 52 on the lent H200: routed-experts capture cost per MoE family (benchmarks/gpu/famcost.py).
# Run from the repository root on the device machine. Here, before the run:
#   bash ../shared/gpu/stage.sh                       # vLLM 0.24.0 + deps (only its /tmp work dir is used)
#   PART_BYTES=... bash benchmarks/gpu/pack19.sh      # one xz tarball in parts .x1 .. .xN (no .whl needed)
#   bash benchmarks/gpu/run52.sh src [REV]            # .src52: the committed sources (git archive REV,
#                                                     # default HEAD; name a REV to keep later commits out)
# Device commands, each within 30 s of the previous one (the machine is kept 30 s between commands):
#   1 (carry .x1 .src52):        mkdir -p /tmp/x19 && cp .x1/s19part.* .x1/sha .src52/* /tmp/x19/
#   2 .. N-1 (carry .xK):        cp .xK/s19part.* /tmp/x19/
#   N (carry .xN):               cp .xN/s19part.* /tmp/x19/ && DEADLINE_S=... bash benchmarks/gpu/run52.sh start
#   later (no carry):            bash benchmarks/gpu/run52.sh poll
# `start` installs the payload into /tmp/site, starts the detached driver (setsid: it outlives the
# command) with FAMILIES (default ernie45,qwen3_moe,deepseek_v2) until DEADLINE_S seconds from now,
# and waits like `poll`. `poll` waits until the driver is done or LIMIT_S (default 560) seconds
# have passed, then copies results.json, driver.txt and the servers' log tails to $OUT.
set -uo pipefail
STEP=${1:?usage: run52.sh src|start|poll}
if [ "$STEP" = src ]; then  # here, on the CPU machine
  REV=$(git rev-parse --verify "${2:-HEAD}^{commit}") || exit 2
  grep -qx '/.src52/' .git/info/exclude 2>/dev/null || echo '/.src52/' >> .git/info/exclude
  rm -rf .src52 && mkdir -p .src52
  git archive --format=tar "$REV" benchmarks orchestrator serving \
    ':(exclude)serving/checkpoints' ':(exclude)benchmarks/results' | gzip -9 > .src52/src.tar.gz
  echo "$REV" > .src52/commit
  du -sh .src52; exit 0
fi
LIMIT=${LIMIT_S:-560}
mkdir -p "${OUT:=/tmp/out52}" /tmp/fam52
export PYTHONPATH=/tmp/plugin52:/tmp/src52:/tmp/site PYTHONUNBUFFERED=1 VLLM_USE_FLASHINFER_SAMPLER=0 \
  VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 NCCL_NVLS_ENABLE=0 \
  TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if [ "$STEP" = start ]; then
  if [ ! -f /tmp/site/.ok19 ]; then
    cat $(ls /tmp/x19/s19part.* | sort -t. -k2 -n) > /tmp/s19.tar.xz
    if [ "$(sha256sum /tmp/s19.tar.xz | awk '{print $1}')" != "$(cat /tmp/x19/sha)" ]; then
      echo "payload incomplete: $(ls /tmp/x19)"; exit 3
    fi
    mkdir -p /tmp/site && tar -C /tmp/site -xJf /tmp/s19.tar.xz || exit 4
    rm -f /tmp/s19.tar.xz && touch /tmp/site/.ok19 && echo "site installed at ${SECONDS}s"
  fi
  mkdir -p /tmp/src52 && tar -C /tmp/src52 -xzf /tmp/x19/src.tar.gz && echo "sources: $(cat /tmp/x19/commit)"
  cd /tmp/src52 || exit 5
  python3 -m serving.vllm_plugin /tmp/plugin52
  python3 -c "import vllm, torch, transformers, importlib.metadata as m; print('vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__, [e.value for e in m.entry_points(group='vllm.general_plugins')])"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  (setsid nohup python3 -m benchmarks.gpu.famcost run --families "${FAMILIES:-ernie45,qwen3_moe,deepseek_v2}" \
    --deadline $(( $(date +%s) + ${DEADLINE_S:?seconds the driver may run} )) ${FAM_ARGS:-} \
    > /tmp/fam52/driver.txt 2>&1 < /dev/null &)
  sleep 2
fi
cd /tmp/src52 || exit 5
python3 -m benchmarks.gpu.famcost poll --until $(( $(date +%s) + LIMIT - SECONDS )) --out "$OUT"
tail -25 /tmp/fam52/driver.txt
echo "command done in ${SECONDS}s"
