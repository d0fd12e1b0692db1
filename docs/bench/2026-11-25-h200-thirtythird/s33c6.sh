#!/usr/bin/env bash
# Thirty-third session, call 6: ptxas's report (nvcc -Xptxas -v, the options NVRTC gets) for the split kernel
# (base), call 2's hand edit (pslot: P in the page's rope columns, conditional hand-back barriers) and the same
# with unconditional barriers (pslot2: warpgroup 1's hand-back after its rescale every page, one before the
# loop, warpgroup 0's last after it); then pairs at b64 kv8k, round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c6-summary.txt
for v in base pslot pslot2; do
  nvcc -cubin -arch=sm_90a -std=c++17 -I bin/src -Xptxas -v -o /tmp/$v.cubin bin/$v.cu > /tmp/$v.ptxas 2>&1
  echo "== $v: exit $?" | tee -a $S; grep -E "registers|spill|warn|C75" /tmp/$v.ptxas | head -6 | tee -a $S
done
R="--batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --json"
timeout 100 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" pslot2="TILEGO_SOURCE=mla_decode=bin/pslot2.cu ./bin/tilego run mla-decode $R" 2>&1 | tee $OUT/c6-pairs.txt | tail -3 | tee -a $S
