#!/usr/bin/env bash
# Thirty-second session, call 4: the compute-bound piece cost (kernels.MLAPieceCost where a request's rows take
# two or more 64-row blocks): c8 = 8, c7 = 7 against this tree's 10 at the points call 3 did not cover,
# alternating pairs, round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for pt in "--batch 64 --seq-q 2 --mean-kv 4096" "--batch 128 --seq-q 2 --mean-kv 4096" "--batch 64 --mean-kv 16384" "--batch 64 --mean-kv 4096" "--batch 64 --mean-kv 8192"; do
  R="$pt --heads 128 --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c4-pairs.txt
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" c8="./bin/tilego-c8 run mla-decode $R" c7="./bin/tilego-c7 run mla-decode $R" 2>&1 | tee -a $OUT/c4-pairs.txt | tail -4 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
