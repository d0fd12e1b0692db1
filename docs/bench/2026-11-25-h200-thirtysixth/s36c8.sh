#!/usr/bin/env bash
# Thirty-sixth session, call 8: are the partials Merge reads at a part's end still in L2? Call 4's program
# (b) with the merger's partners' partials and LSEs prefetched into L2 (prefetch.global.L2, warpgroup 1)
# at its piece's second-last page (pf2) or sixth-last (pf6): bin/src36/split_merge_b_pf2.cu, _pf6.cu.
# Pairs at h_q 128 kv8k, L2 flushed, outputs checked in round 1.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c8-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
X=bin/src36
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="run mla-decode $pt --splits 0 --repeats 30 --json --flush-l2"
  M="./bin/tilego $R --config 'merge=true early=false'"
  timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego $R" b="TILEGO_SOURCE=mla_decode=$X/split_merge_b.cu $M" \
    pf2="TILEGO_SOURCE=mla_decode=$X/split_merge_b_pf2.cu $M" pf6="TILEGO_SOURCE=mla_decode=$X/split_merge_b_pf6.cu $M" 2>&1 | grep -E "^(base|b |pf2|pf6|round 1)" | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
