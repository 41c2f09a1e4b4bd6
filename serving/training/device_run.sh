#!/usr/bin/env bash
# One call on the lent GPU machine: train, pack the checkpoint for the trip back, then answer
# the held-out prompts (greedy, no grammar) in the time left.
#
#   bash serving/training/device_run.sh DATA_DIR TRAIN_SECONDS GEN_SECONDS [train.py flags...]
#
# DATA_DIR holds tokenizer/, train.jsonl.gz and test.jsonl.gz (`orchestrator train prepare`,
# then gzip both files). Writes $OUT/ckpt.tar.part-* (the checkpoint, split below the 16 MiB
# per-file limit of the trip back), $OUT/test_outputs.jsonl and $OUT/train.log. Reassemble with
# `cat ckpt.tar.part-* | tar -x -C DEST`.
set -euo pipefail
data=$1; seconds=$2; gen_seconds=$3; shift 3
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
python3 serving/training/train.py --data "$data" --out /tmp/ckpt --max-seconds "$seconds" \
  --steps 20000 "$@" 2>&1 | tee "$OUT/train.log"
tar -C /tmp/ckpt -cf /tmp/ckpt.tar .
split -b 15000000 /tmp/ckpt.tar "$OUT/ckpt.tar.part-"
timeout "$gen_seconds" python3 serving/training/generate.py /tmp/ckpt "$data/test.jsonl.gz" \
  "$OUT/test_outputs.jsonl" 2>&1 | tail -3 || echo "generation stopped at ${gen_seconds}s"
ls -la "$OUT"
