#!/usr/bin/env bash
# Twenty-second session, call 13: where the d256 512 walk's warps wait now (the rescale skipped), beside d128 512's walk (two query buffers; call 11: fixed cost a tile 3.4 against 1.2 KV steps): ncu's full set at the GPU's own clock, one launch each, stall samples by SASS instruction (scripts/ncu_stalls.py).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c13-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for spec in "d256:--batch 32 --heads 8 --seq-q 512 --dim 256" "d128:--batch 32 --heads 16 --seq-q 512 --dim 128"; do n=${spec%%:*}; a=${spec#*:}
  timeout 200 ncu --clock-control none --set full --import-source no -k regex:flash -c 1 -o /tmp/prof-$n -f ./bin/tilego run flash-attention --layout bshd $a --repeats 1 --check=false > /tmp/ncu-$n.log 2>&1
  echo "$n ncu: exit $?" | tee -a $S
  ncu -i /tmp/prof-$n.ncu-rep --page source --csv --print-source sass > /tmp/sass-$n.csv 2>/dev/null
  python3 scripts/ncu_stalls.py /tmp/sass-$n.csv --top 40 > $OUT/c13-stalls-$n.txt 2>&1
  ncu -i /tmp/prof-$n.ncu-rep --page details > /tmp/details-$n.txt 2>&1
  grep -E "Duration|Registers Per|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Active Warps Per|L2 Hit Rate|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput" /tmp/details-$n.txt | sed "s/^/$n: /" | tee -a $S
  head -14 $OUT/c13-stalls-$n.txt | tee -a $S
done
