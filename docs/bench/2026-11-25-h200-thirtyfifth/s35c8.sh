#!/usr/bin/env bash
# Thirty-fifth session, call 8: the scheduler's piece cost with Early (the combine's share of a piece now
# mostly under the split kernel's last parts): bin/tilego-c4 and -c5 are this tree with MLAPieceCost 4 and 5
# (built from copies with that one line changed), against 6, alternating pairs, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c8-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096" "--batch 64 --heads 64 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 100 python3 scripts/pairs.py --rounds 3 c6="./bin/tilego $R" c5="./bin/tilego-c5 $R" c4="./bin/tilego-c4 $R" 2>&1 | tail -4 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
