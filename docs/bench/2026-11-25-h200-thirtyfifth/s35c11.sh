#!/usr/bin/env bash
# Thirty-fifth session, call 11 (the final tree, on an H200): Early (now the default at these points) against
# the same program without it (--config early=false), alternating pairs, L2 flushed: the points the default rule reaches that call 6 did not measure.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c11-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for pt in "--batch 128 --heads 64 --mean-kv 8192" "--batch 128 --heads 32 --mean-kv 8192" "--batch 64 --heads 32 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 100 python3 scripts/pairs.py --rounds 3 off="./bin/tilego $R --config early=false" early="./bin/tilego $R" 2>&1 | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
