#!/usr/bin/env bash
# Twentieth session, call 2: more rounds of call 1's A/B (A = TILEGO_DRAW=0, dealt; B = drawn), interleaved A B A B A B, at the points that moved: d128 and d256 non-causal 512 and 1k, d64 2k.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
SH='(seq_q=(512|1024) .*dim=(128|256) .*causal=false|seq_q=2048 .*dim=64 .*causal=false)'; M='threads=256.*persistent=true'
for r in 1 2 3; do
  t0=$(date +%s); TILEGO_DRAW=0 timeout 100 ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c2-A$r.jsonl > /dev/null 2>&1; echo "A$r exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
  t0=$(date +%s); timeout 100 ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c2-B$r.jsonl > /dev/null 2>&1; echo "B$r exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
done
python3 bin/ab2.py $OUT c2 | grep best | tee -a $S
python3 bin/ab2.py $OUT c2 > $OUT/c2-ab.txt
