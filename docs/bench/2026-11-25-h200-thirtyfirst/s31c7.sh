#!/usr/bin/env bash
# Thirty-first session, call 7 (H200): ncu of MLA's split kernel at b64 h_q 128 kv8k (source page with stall
# samples per SASS instruction kept, to weigh the piece epilogue against the page loop).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c7-summary.txt
timeout 300 ncu -k "regex:mla_decode" -c 1 --set full -o /tmp/prof -f ./bin/tilego run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 1 --check=false > $OUT/c7-ncu-run.log 2>&1; echo "ncu exit $? at $(( $(date +%s) - T0 )) s" | tee -a $S
ncu -i /tmp/prof.ncu-rep --page details > $OUT/c7-ncu-details.txt 2>&1
ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > /tmp/sass.csv 2>&1; gzip -c /tmp/sass.csv > $OUT/c7-sass.csv.gz
python3 scripts/ncu_stalls.py /tmp/sass.csv > $OUT/c7-ncu-stalls.txt 2>&1; head -30 $OUT/c7-ncu-stalls.txt | tee -a $S
grep -E "Duration|Elapsed Cycles|SM Frequency|DRAM Throughput|Registers" $OUT/c7-ncu-details.txt | head | tee -a $S
ls -la $OUT | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
