#!/usr/bin/env bash
# Thirtieth session, call 2 (H200, tree with the group rule): the sweep at 512-2k tokens and GEMM 8192^3 with
# the peers; then d128 16k's tail split (--splits 0, the cost model's choice) against the single program
# (--splits 1) in alternating pairs, unflushed.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee $S
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep,gemm SHAPE='seq_q=(512|1024|2048) |m=8192' timeout 400 bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $? in $(( $(date +%s) - T0 )) s" | tee -a $S
for f in tilego.jsonl peers.jsonl table.txt logs.tgz; do cp /tmp/sw/$f $OUT/c2-$f; done
cat /tmp/sw/summary.txt; tail -40 /tmp/sw/table.txt | tee -a $S
B="flash-attention --batch 1 --heads 16 --seq-q 16384 --dim 128 --layout bshd"
C="m=128 n=176 stages=2 threads=256 ws=true overlap=true pingpong=true prefetch=false direct=false persistent=false"
for i in 1 2 3 4 5 6; do
for sp in 1 0; do
  timeout 60 ./bin/tilego run $B --splits $sp --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) --config "$C" > /tmp/r.json 2>/tmp/r.err
  python3 -c "import json; r=json.load(open('/tmp/r.json')); print('d128 16k splits=%s ms %.4f tf %.1f ok %s steps %s' % ('$sp', r['time_ms'], r['tflops'], r.get('ok'), r.get('steps')))" 2>&1 | tee -a $S || echo "splits $sp failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
