#!/usr/bin/env bash
# Nineteenth session, call 14: d256 non-causal 512 (B32 H8), the sweep's pick (persistent walk, 128x64, ws, ping-pong, overlap, direct) against cuDNN under ncu, at the locked base clock (ncu's default) and at the GPU's own (--clock-control none): duration, SM clock, issue activity, L2/DRAM, and where the walk's warps wait.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c14-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
A=(--batch 32 --heads 8 --seq-q 512 --dim 256 --layout bshd --config "m=128 n=64 stages=2 threads=256 ws=true pingpong=true overlap=true direct=true persistent=true")
./bin/tilego run flash-attention "${A[@]}" --repeats 50 2>&1 | grep -E "time|speed|ok" | tee -a $S
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,sm__cycles_active.max,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for cc in base none; do
  echo "== clock-control $cc: tilego" | tee -a $S
  timeout 100 ncu --clock-control $cc --metrics $M -k regex:flash -c 2 ./bin/tilego run flash-attention "${A[@]}" --repeats 2 --check=false > /tmp/n1.txt 2>&1
  grep -E "^  [a-z_]+ \(|gpu__|sm__|smsp__|lts__|dram__" /tmp/n1.txt | tail -11 | tee -a $S
  echo "== clock-control $cc: cuDNN" | tee -a $S
  timeout 100 ncu --clock-control $cc --metrics $M --launch-skip 1 -c 2 python3 scripts/ncu_peer.py --impl sdpa-cudnn --batch 32 --heads 8 --seq 512 --dim 256 > /tmp/n2.txt 2>&1
  grep -E "^  [a-zA-Z_].* \(|gpu__|sm__|smsp__|lts__|dram__" /tmp/n2.txt | tail -11 | tee -a $S
done
for cc in base none; do
  timeout 150 ncu --clock-control $cc --set full --import-source no -k regex:flash -c 1 -o /tmp/prof-$cc -f ./bin/tilego run flash-attention "${A[@]}" --repeats 1 --check=false > /dev/null 2>&1
  ncu -i /tmp/prof-$cc.ncu-rep --page source --csv --print-source sass > /tmp/sass-$cc.csv 2>/dev/null
  python3 scripts/ncu_stalls.py /tmp/sass-$cc.csv --top 25 > $OUT/c14-stalls-$cc.txt 2>&1
  echo "== stalls, clock-control $cc" | tee -a $S; head -20 $OUT/c14-stalls-$cc.txt | tee -a $S
done
