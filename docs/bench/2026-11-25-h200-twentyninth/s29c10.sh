#!/usr/bin/env bash
# Twenty-ninth session, call 10 (H100): d64 causal 512 (m=64 n=64), 1k and 2k (m=64 n=128) with longestFirst's
# head groups at the default and at 32 heads (bin/tilego-x: TILEGO_XGROUP, a probe build), two rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c10-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee -a $S
Z="stages=2 threads=128 ws=false pingpong=false overlap=false prefetch=false direct=false persistent=false"
for i in 1 2; do
for pt in "32 512 64" "16 1024 128" "8 2048 128"; do set -- $pt
for g in "" 32; do
  TILEGO_XGROUP=$g timeout 60 ./bin/tilego-x run flash-attention --batch $1 --heads 32 --seq-q $2 --dim 64 --causal --layout bshd --splits 1 --repeats 50 --json --check=$([ $i = 1 ] && echo true || echo false) --config "m=64 n=$3 $Z" > /tmp/r.json 2>/tmp/r.err
  python3 -c "import json; r=json.load(open('/tmp/r.json')); print('d64 causal %-5s group %-3s ms %.4f tf %.1f ok %s' % ('$2', '$g', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "$pt $g failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
