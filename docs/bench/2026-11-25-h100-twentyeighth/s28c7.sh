#!/usr/bin/env bash
# Twenty-eighth session, call 7: d64 causal 1k (B16 H32, issue 4's point at 0.99x cuDNN): the sweep's pick
# (the 64-row grid, 64-key tiles) against 128-key tiles and three stages, through tilego run (no L2 flush),
# three rounds back to back; round 1 checked against float64.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c7-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2 3; do
for cf in "m=64 n=64 stages=2 threads=128" "m=64 n=128 stages=2 threads=128" "m=64 n=64 stages=3 threads=128" "m=64 n=128 stages=3 threads=128" "m=64 n=96 stages=2 threads=128"; do
for sq in 1024 512 2048; do
  [ $(( $(date +%s) - T0 )) -gt 300 ] && break 3
  timeout 60 ./bin/tilego run flash-attention --batch $((16384 / sq)) --heads 32 --seq-q $sq --dim 64 --causal --layout bshd --config "$cf" --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-5s %-36s ms %.4f TFLOP/s %.0f ok %s' % ('$sq', '$cf', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "$cf failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
