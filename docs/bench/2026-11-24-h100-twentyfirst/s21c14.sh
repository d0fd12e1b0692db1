#!/usr/bin/env bash
# Twenty-first session, call 14: what drawing the walk's tiles costs at d256 512 non-causal (twentieth session: 0.969× the dealt walk on this config). ncu at the GPU's own clocks, one launch each, dealt (TILEGO_DRAW=0) and drawn (=1) alternated twice: duration, SM active cycles mean and busiest, L2 hit rate, DRAM bytes.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c14-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
C="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
M=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second
for i in 1 2; do for d in 0 1; do
  TILEGO_DRAW=$d timeout 120 ncu --clock-control none --metrics $M -k regex:flash -c 1 ./bin/tilego run flash-attention --batch 32 --heads 8 --seq-q 512 --dim 256 --layout bshd --config "$C" --repeats 1 > /tmp/n.txt 2>&1
  echo "draw=$d run $i: $(grep -E 'gpu__time_duration.sum|sm__cycles_active.avg|sm__cycles_active.max|lts__t_sector_hit_rate|dram__bytes_read|dram__bytes_write|per_second' /tmp/n.txt | awk '{print $1"="$(NF)" "$(NF-1)}' | tr '\n' ' ')" | tee -a $S
  grep -E "checked|ok|error" /tmp/n.txt | head -2 >> $S
done; done
