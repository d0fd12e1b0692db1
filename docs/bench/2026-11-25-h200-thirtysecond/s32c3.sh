#!/usr/bin/env bash
# Thirty-second session, call 3: MLA's piece cost with the register combine (kernels.MLAPieceCost: 6 where a
# request's rows fit one 64-row block, 10 where they take more): lo = 4 / 8, hi = 8 / 12, against this tree,
# alternating pairs, round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for pt in "--batch 64 --heads 64 --mean-kv 8192" "--batch 64 --heads 32 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c3-pairs.txt
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" lo="./bin/tilego-lo run mla-decode $R" hi="./bin/tilego-hi run mla-decode $R" 2>&1 | tee -a $OUT/c3-pairs.txt | tail -4 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
