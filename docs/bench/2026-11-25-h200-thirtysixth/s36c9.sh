#!/usr/bin/env bash
# Thirty-sixth session, call 9: Merge (the partials read element by element into the merger's
# multiply-adds: call 4's "b", now the compiler's) against the default where Early is off (more requests
# than parts): b128 h_q 128 kv4k/8k/16k, s_q 2 kv4k at b64 and b128. Alternating pairs, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c9-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for pt in "--batch 128 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 4096" "--batch 128 --heads 128 --mean-kv 16384" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096" "--batch 128 --heads 128 --seq-q 2 --mean-kv 4096"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" merge="./bin/tilego $R --config 'merge=true early=false'" 2>&1 | grep -E "^(base|merge|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
