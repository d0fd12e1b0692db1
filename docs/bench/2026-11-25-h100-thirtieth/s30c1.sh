#!/usr/bin/env bash
# Thirtieth session, call 1 (H100): the prepared group rule (bin/tilego: groups of at least H heads for 64-row
# blocks in BSHD) against HEAD (bin/tilego-ab) at d64 causal 512-4k: the bench with the peers (AB=1), then
# tilego run pairs of the 64-row configs, alternating.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s)
OUT=$OUT/ab AB=1 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048|4096) .*dim=64 .*causal=true' bash scripts/gpu-suite.sh run > $OUT/ab-run.txt 2>&1
tail -30 $OUT/ab-run.txt
S=$OUT/pairs.txt
Z="stages=2 threads=128 ws=false pingpong=false overlap=false prefetch=false direct=false persistent=false"
for i in 1 2 3; do
for pt in "32 512 64" "16 1024 64" "16 1024 128" "8 2048 128" "4 4096 128"; do set -- $pt
for bin in tilego-ab tilego; do
  timeout 60 ./bin/$bin run flash-attention --batch $1 --heads 32 --seq-q $2 --dim 64 --causal --layout bshd --splits 1 --repeats 50 --json --check=$([ $i = 1 ] && echo true || echo false) --config "m=64 n=$3 $Z" > /tmp/r.json 2>/tmp/r.err
  python3 -c "import json; r=json.load(open('/tmp/r.json')); print('%-9s c%-5s n%-3s ms %.4f tf %.1f ok %s' % ('$bin', '$2', '$3', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "$bin $pt failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
