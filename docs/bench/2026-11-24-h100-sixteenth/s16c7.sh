#!/usr/bin/env bash
# Sixteenth session, call 7: ncu of d256 non-causal 512 (b32 h8): the grid's best against the persistent walk (one query buffer, output from registers).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
A="flash-attention --dim 256 --seq-q 512 --batch 32 --heads 8 --layout bshd --repeats 1 --check=false"
i=0
for cfg in "m=128 n=64 stages=2 threads=256 ws overlap" "m=128 n=64 stages=2 threads=256 ws overlap persistent direct"; do
  i=$((i+1))
  ./bin/tilego run $A --config "$cfg" > /dev/null 2>&1
  TILEGO_LINEINFO=1 timeout 200 ncu -k regex:flash -c 1 --set full --import-source no -o /tmp/p$i -f ./bin/tilego run $A --config "$cfg" > /tmp/ncu$i.log 2>&1
  echo "== $cfg: ncu exit $?" | tee -a $OUT/c7-summary.txt
  ncu -i /tmp/p$i.ncu-rep --page details --csv 2>/dev/null | grep -E '"(Duration|Elapsed Cycles|Registers Per Thread|Achieved Occupancy|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|L2 Hit Rate|Executed Ipc Active|Dynamic Shared Memory Per Block)"' | awk -F'","' '{print $(NF-2)": "$NF}' | tr -d '"' | tee -a $OUT/c7-summary.txt
  ncu -i /tmp/p$i.ncu-rep --page source --csv --print-source sass > /tmp/sass$i.csv 2>/dev/null
  python3 scripts/ncu_stalls.py /tmp/sass$i.csv --top 25 > $OUT/c7-stalls$i.txt 2>&1
  head -40 $OUT/c7-stalls$i.txt
  gzip -c /tmp/sass$i.csv > $OUT/c7-sass$i.csv.gz
done
