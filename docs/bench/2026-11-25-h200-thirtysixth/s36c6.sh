#!/usr/bin/env bash
# Thirty-sixth session, call 6: where call 4's Merge (partials read element by element into the merge's
# multiply-adds, bin/src36/split_merge_b.cu) spends its 3.8% over the same program with the merge cut out.
# Hand edits of that program (outputs wrong, not checked): noload (the partials' loads replaced by zeros),
# nowait (no WaitCount), noloop (no loop over the other splits). Pairs at b64 h_q 128 kv8k, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src36
R="run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --json --flush-l2"
M="./bin/tilego $R --config 'merge=true early=false'"
timeout 300 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" b="TILEGO_SOURCE=mla_decode=$X/split_merge_b.cu $M" \
  noload="TILEGO_SOURCE=mla_decode=$X/split_merge_b_noload.cu $M --check=false #" \
  nowait="TILEGO_SOURCE=mla_decode=$X/split_merge_b_nowait.cu $M --check=false #" \
  noloop="TILEGO_SOURCE=mla_decode=$X/split_merge_b_noloop.cu $M --check=false #" 2>&1 | grep -E "^(base|b |noload|nowait|noloop|variant)" | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
