#!/usr/bin/env bash
# Twenty-ninth session, call 8 (H200): d64 causal 1k (B16 H32, m=64 n=128, 3 blocks an SM) with longestFirst's
# head groups of 4, 8 (the default), 16, 24 and 32 heads (bin/tilego-x: TILEGO_XGROUP, a probe build), rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c8-summary.txt; T0=$(date +%s)
A="flash-attention --batch 16 --heads 32 --seq-q 1024 --dim 64 --causal --layout bshd"
for i in 1 2 3; do
for g in "" 4 16 24 32; do
  TILEGO_XGROUP=$g timeout 60 ./bin/tilego-x run $A --splits 1 --repeats 50 --json --check=$([ $i = 1 ] && echo true || echo false) --config "m=64 n=128 stages=2 threads=128 ws=false pingpong=false overlap=false prefetch=false direct=false persistent=false" > /tmp/r.json 2>/tmp/r.err
  python3 -c "import json; r=json.load(open('/tmp/r.json')); print('group %-3s ms %.4f tf %.1f ok %s' % ('$g', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "$g failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
