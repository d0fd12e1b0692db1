#!/usr/bin/env bash
# Nineteenth session, call 15: call 14's cuDNN side again (call 14 profiled torch's randn kernels: the first three launches are the inputs'), at ncu's base clock and at the GPU's own.
cd "$(dirname "$0")/.."
mkdir -p $OUT; S=$OUT/c15-summary.txt
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,sm__cycles_active.max,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread
for cc in base none; do
  echo "== clock-control $cc: cuDNN" | tee -a $S
  timeout 120 ncu --clock-control $cc --metrics $M --launch-skip 3 -c 2 python3 scripts/ncu_peer.py --impl sdpa-cudnn --batch 32 --heads 8 --seq 512 --dim 256 > /tmp/n2.txt 2>&1
  grep -E "^  [a-zA-Z_].* \(|gpu__|sm__|smsp__|lts__|dram__|launch__" /tmp/n2.txt | sed 's/^\(  .\{0,120\}\).*(\([0-9, ]*\))x(\([0-9, ]*\)).*/\1 grid(\2) block(\3)/' | tail -14 | tee -a $S
done
