#!/bin/bash
# Issue 19 on the lent H200 (run from the repository root on the device machine).
#
# The repository alone is ~50 MB (a trained checkpoint is tracked), so the vLLM 0.24.0 payload of
# ../shared/gpu/stage.sh plus the orchestrator's own missing wheels travel as one xz tarball in
# ~14 MB parts (.x1 ... .xN, ignored; six on 2026-12-01d), one part per command. The exact
# sequence of the last run is in benchmarks/results/gpu_2026-12-01d.md ("Reproduce"):
#   here:  bash benchmarks/gpu/pack19.sh; bash benchmarks/gpu/pack19.sh src  (after stage.sh)
#   device, command 1 (carry .x1 .cs19): copy the part and the customer-service data
#   device, commands 2..N-1 (carry .xK):  cp .xK/s19part.* /tmp/x19/
#   device, command N (carry .xN .whl2 .src19):  cp .xN/s19part.* /tmp/x19/ && bash run19.sh phase1
#   device, later commands (no carry):   bash benchmarks/gpu/run19.sh mid|phase2
# CAP_REPS=5: five rotated repetitions in the cap* phases (capture19.rotated_orders); 0: three.
# 2026-12-01c: CAP_MODES=off,sampled,sampled10 picks the cap* modes; ORCH_RATE=0.25 runs the orch
# phase with sampled capture; any step other than phase1/phase2 (e.g. `mid`) measures like
# phase2 but leaves the servers up for a later command. PHASES1 replaces phase1's probe,cap128.
# 2026-12-01b: `bash benchmarks/gpu/pack19.sh src` writes .src19 (carry it with command 6).
# Each command within 30 s of the previous one (the machine is kept 30 s between commands).
set -uo pipefail
STEP=${1:?usage: run19.sh phase1|phase2}
LIMIT=${LIMIT_S:-570}
mkdir -p "${OUT:=/tmp/out19}"
if [ ! -f /tmp/site/.ok19 ]; then
  cat $(ls /tmp/x19/s19part.* | sort -t. -k2 -n) > /tmp/s19.tar.xz
  if [ "$(sha256sum /tmp/s19.tar.xz | awk '{print $1}')" != "$(cat /tmp/x19/sha)" ]; then
    echo "payload incomplete: $(ls /tmp/x19)"; exit 3
  fi
  mkdir -p /tmp/site
  tar -C /tmp/site -xJf /tmp/s19.tar.xz || python3 -c "import tarfile; tarfile.open('/tmp/s19.tar.xz').extractall('/tmp/site')" || exit 4
  rm -f /tmp/s19.tar.xz && touch /tmp/site/.ok19
  echo "site installed at ${SECONDS}s"
fi
# wheels found missing after the tarball was packed (carried as .whl2 with the phase1 command)
if [ -d .whl2 ] && [ ! -f /tmp/site/.ok19b ]; then
  ok=1
  for w in .whl2/*.whl; do python3 -m zipfile -e "$w" /tmp/site || ok=0; done
  [ "$ok" = 1 ] && touch /tmp/site/.ok19b
fi
# a copy of the sources that later syncs of the working tree cannot disturb (the servers import
# serving.vllm_plugin from it when they start). With .src19/src.tar.gz (carried; made here by
# `bash benchmarks/gpu/pack19.sh src`: `git archive HEAD`, so other engineers' uncommitted edits
# in the shared tree do not travel) the committed sources are used; else the working tree's.
if [ ! -d /tmp/src/serving ]; then
  mkdir -p /tmp/src
  if [ -f .src19/src.tar.gz ]; then
    tar -C /tmp/src -xzf .src19/src.tar.gz && echo "sources: $(cat .src19/commit)"
  else
    cp -r benchmarks orchestrator serving skills workflows /tmp/src/
  fi
fi
export PYTHONPATH=/tmp/plugin19:/tmp/src:/tmp/site PYTHONUNBUFFERED=1 VLLM_USE_FLASHINFER_SAMPLER=0 \
  VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 NCCL_NVLS_ENABLE=0 \
  TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 GPURUN_DATA=/tmp/gpurun_data \
  GPURUN_STATE=/tmp/gpurun
cd /tmp/src
[ -d /tmp/plugin19 ] || python3 -m serving.vllm_plugin /tmp/plugin19
mkdir -p /tmp/gpurun
if [ "$STEP" = phase1 ]; then
  python3 -c "import vllm, importlib.metadata as m; print('vllm', vllm.__version__, [e.value for e in m.entry_points(group='vllm.general_plugins')])"
  [ -f /tmp/gpurun/ckpt/config.json ] || python3 -m benchmarks.gpu build
  (setsid nohup python3 -m benchmarks.gpu hold --util 0.42 --max-life-s 1500 > /tmp/gpurun/hold.log 2>&1 < /dev/null &)
  python3 -m benchmarks.gpu measure --phases "${PHASES1:-probe,cap128}" --wait-s 400 \
    --cap-reps "${CAP_REPS:-0}" ${CAP_MODES:+--cap-modes "$CAP_MODES"} --orch-c 128 --orch-n 512 \
    --orch-profile --orch-sample-rate "${ORCH_RATE:-1}" --budget-s $((LIMIT - SECONDS))
else
  python3 -m benchmarks.gpu measure --phases "${PHASES2:-probe,cap128,orch,cap32,stream,agree19}" --orch-c 128 \
    --orch-n 512 --orch-profile --agree-n 16 --wait-s 30 --cap-reps "${CAP_REPS:-0}" \
    ${CAP_MODES:+--cap-modes "$CAP_MODES"} --orch-sample-rate "${ORCH_RATE:-1}" \
    --budget-s $((LIMIT - SECONDS))
  [ "$STEP" = phase2 ] && touch /tmp/gpurun/stop
fi
cp /tmp/gpurun/results.json "$OUT/" 2>/dev/null
cp /tmp/gpurun/hold.log "$OUT/" 2>/dev/null
for s in on off; do
  f=/tmp/gpurun/server_$s.log
  [ -f "$f" ] && { grep -v "Received request\|Added request\|Finished request\|qutlass" "$f" | tail -150; \
    grep -m 3 "moe-orchestrator" "$f"; grep -c "Received request" "$f"; } > "$OUT/server_$s.txt"
done
echo "done in ${SECONDS}s"
