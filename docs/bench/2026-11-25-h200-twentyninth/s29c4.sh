#!/usr/bin/env bash
# Twenty-ninth session, call 4 (H200, tree f421269): d64 causal 1k (B16 H32) and d128 16k (B1 H16) configs,
# tilego run without flush, interleaved rounds; the d128 16k tail split (--splits 0, the model's 7) against one.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
Z="ws=false pingpong=false overlap=false prefetch=false direct=false persistent=false"
A="flash-attention --batch 16 --heads 32 --seq-q 1024 --dim 64 --causal --layout bshd"
B="flash-attention --batch 1 --heads 16 --seq-q 16384 --dim 128 --layout bshd"
cfgA=("m=64 n=128 stages=2 threads=128" "m=64 n=128 stages=2 threads=128 prefetch" "m=64 n=64 stages=2 threads=128 prefetch" "m=64 n=112 stages=2 threads=128" "m=64 n=96 stages=2 threads=128" "m=64 n=128 stages=2 threads=128 ws" "m=64 n=160 stages=2 threads=128")
cfgB=("m=128 n=176 stages=2 threads=256 ws overlap pingpong" "m=128 n=176 stages=2 threads=256 ws overlap pingpong cluster=2" "m=128 n=128 stages=2 threads=256 ws overlap pingpong cluster=2" "m=128 n=176 stages=2 threads=256 ws overlap pingpong persistent" "m=128 n=192 stages=2 threads=256 ws overlap pingpong")
for i in 1 2 3; do
  for c in "${cfgA[@]}"; do
    timeout 60 ./bin/tilego run $A --splits 1 --repeats 50 --json --check=$([ $i = 1 ] && echo true || echo false) --config "$Z $c" > /tmp/r.json 2>/tmp/r.err
    python3 -c "import json; r=json.load(open('/tmp/r.json')); print('d64c1k  %-58s ms %.4f tf %.1f ok %s regs %s' % ('$c', r['time_ms'], r['tflops'], r.get('ok'), r.get('regs')))" 2>&1 | tee -a $S || echo "d64c1k $c failed: $(tail -2 /tmp/r.err)" | tee -a $S
  done
  for c in "${cfgB[@]}"; do
    for sp in 1 0; do
    timeout 60 ./bin/tilego run $B --splits $sp --repeats 20 --json --check=$([ $i = 1 ] && echo true || echo false) --config "$Z $c" > /tmp/r.json 2>/tmp/r.err
    python3 -c "import json; r=json.load(open('/tmp/r.json')); print('d128-16k splits=$sp %-58s ms %.4f tf %.1f ok %s' % ('$c', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "d128 $c failed: $(tail -2 /tmp/r.err)" | tee -a $S
    [ "$c" = "${cfgB[0]}" ] || break
    done
  done
  echo "round $i at $(( $(date +%s) - T0 )) s" | tee -a $S
  [ $(( $(date +%s) - T0 )) -gt 420 ] && break
done
