#!/usr/bin/env bash
# Twenty-ninth session, call 11 (H200): longestFirst's head groups at the default and at all H heads of a batch
# entry (bin/tilego-x: TILEGO_XGROUP, a probe build) at the 4k causal points' grids, two rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c11-summary.txt
Z="stages=2 pingpong=false prefetch=false direct=false persistent=false"
for i in 1 2; do
for pt in "32 64 m=64_n=128_threads=128_ws=false_overlap=false" "16 128 m=128_n=128_threads=256_ws=true_overlap=true" "8 256 m=128_n=80_threads=256_ws=true_overlap=true"; do set -- $pt
for g in "" $1; do
  TILEGO_XGROUP=$g timeout 60 ./bin/tilego-x run flash-attention --batch 4 --heads $1 --seq-q 4096 --dim $2 --causal --layout bshd --splits 1 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) --config "$Z ${3//_/ }" > /tmp/r.json 2>/tmp/r.err
  python3 -c "import json; r=json.load(open('/tmp/r.json')); print('d%-3s causal 4k group %-3s ms %.4f tf %.1f ok %s' % ('$2', '$g', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "$pt $g failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
