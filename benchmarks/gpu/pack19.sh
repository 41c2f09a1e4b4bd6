#!/bin/bash
# Pack ../shared/gpu/stage.sh's payload (vLLM 0.24.0 + deps) and the orchestrator's wheels that the
# device lacks (.whl, see benchmarks/gpu/run19.sh) into one xz tarball split in ~14 MB parts .x1..xN
# (the repository alone is ~49 MB of the 64 MiB a command may carry). Run from the repo root after
# stage.sh and after filling .whl (pip download --no-deps ... for cp312 manylinux).
set -euo pipefail
if [ "${1:-}" = src ]; then  # only the committed sources, for run19.sh (.src19, carried)
  grep -qx '/.src19/' .git/info/exclude || echo '/.src19/' >> .git/info/exclude
  rm -rf .src19 && mkdir -p .src19
  git archive --format=tar HEAD benchmarks orchestrator serving skills workflows \
    ':(exclude)serving/checkpoints' | gzip -9 > .src19/src.tar.gz
  git rev-parse HEAD > .src19/commit
  du -sh .src19; exit 0
fi
W=${STAGE_WORK:-/tmp/vllm_stage_work}
rm -rf /tmp/site19 && mkdir -p /tmp/site19
# .whl (the orchestrator's own wheels) is optional: issue 52's serving-only runs need none
for w in "$W"/payload/*.whl "$W"/payload/deps/*.whl $(ls .whl/*.whl 2>/dev/null); do
  unzip -q -o "$w" -d /tmp/site19
done
tar -C /tmp/site19 -cf - . | xz -T2 -6 > /tmp/site19.tar.xz
rm -f /tmp/s19part.*
# PART_BYTES: each part rides with one command beside the working tree (64 MiB in all)
split -b "${PART_BYTES:-14200000}" -d -a 1 /tmp/site19.tar.xz /tmp/s19part.
sha256sum /tmp/site19.tar.xz | awk '{print $1}' > /tmp/s19.sha
grep -qx '/.x\[0-9\]/' .git/info/exclude || echo '/.x[0-9]/' >> .git/info/exclude
rm -rf .x[0-9]; i=1
for p in /tmp/s19part.*; do mkdir -p .x$i; cp "$p" /tmp/s19.sha .x$i/; mv .x$i/s19.sha .x$i/sha; i=$((i+1)); done
du -sh .x*
