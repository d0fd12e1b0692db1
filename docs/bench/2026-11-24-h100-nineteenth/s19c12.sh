#!/usr/bin/env bash
# Nineteenth session, call 12: why the tail split (--splits 5) ran d128 16k non-causal 10% faster than the single program in call 11: both again, then ncu (real clocks) of each kernel: duration, SM clock, L2 hit rate, DRAM bytes.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c12-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
A=(--batch 1 --heads 16 --seq-q 16384 --dim 128 --layout bshd --config "m=128 n=176 stages=2 threads=256 ws=true pingpong=true overlap=true")
one() { r=$(timeout 60 ./bin/tilego run flash-attention "${A[@]}" --splits $1 --repeats ${2:-30} --json 2>&1 | tail -1); echo "splits $1: $(echo "$r" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.4f ms %.1f TFLOP/s ok=%s" % (r["time_ms"], r["tflops"], r["ok"]))')" | tee -a $S; }
for n in 1 5 1 5 3 2; do one $n; done
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__cycles_active.avg,sm__cycles_active.max
for n in 1 5; do
  echo "== ncu, splits $n" | tee -a $S
  timeout 120 ncu --clock-control none --metrics $M -c 4 ./bin/tilego run flash-attention "${A[@]}" --splits $n --repeats 2 --check=false > /tmp/ncu-$n.txt 2>&1
  grep -E "flash_attention|gpu__time|cycles_elapsed|hit_rate|dram__bytes|sm__throughput|grid_size|cycles_active" /tmp/ncu-$n.txt | tail -40 | tee -a $S
done
