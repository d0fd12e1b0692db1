#!/usr/bin/env bash
# Thirty-first session, call 12 (H200): ncu of the backward's main program at B1 H16 2k d128 (dQ on wgmma, its atomics paired),
# stall samples per SASS instruction kept.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c12-summary.txt
timeout 300 ncu -k "regex:flash_attention_bwd$" -c 1 --set full -o /tmp/prof -f ./bin/tilego run flash-attention-bwd --batch 1 --heads 16 --seq-q 2048 --dim 128 --layout bshd --repeats 1 --check=false > $OUT/c12-ncu-run.log 2>&1; echo "ncu exit $? at $(( $(date +%s) - T0 )) s" | tee -a $S
ncu -i /tmp/prof.ncu-rep --page details > $OUT/c12-ncu-details.txt 2>&1
ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > /tmp/sass.csv 2>&1; gzip -c /tmp/sass.csv > $OUT/c12-sass.csv.gz
python3 scripts/ncu_stalls.py /tmp/sass.csv > $OUT/c12-ncu-stalls.txt 2>&1; head -30 $OUT/c12-ncu-stalls.txt | tee -a $S
grep -E "Duration|Elapsed Cycles|SM Frequency|DRAM Throughput|Registers Per|Compute \(SM\) Throughput|Achieved Occupancy|L2 Hit" $OUT/c12-ncu-details.txt | head -12 | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
