#!/usr/bin/env bash
# Eighteenth session, call 5: the sweep from 4k to 16k tokens, GQA/B1H16 and GEMM with peers (tilego's launches L2-flushed as the peers'); then the runtime, jit, bench and cuda_backend (non-guarded) test binaries on this code.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c5 TESTS=0 SUITES=fa-sweep,extra,gemm SHAPE='seq_q=(4096|8192|16384) |m=8192 n=8192' timeout 360 bash scripts/gpu-suite.sh run > /tmp/c5-suite.log 2>&1
echo "4k-16k sweep, extra, gemm with peers: exit $?" | tee -a $S
cp /tmp/c5/table.txt $OUT/c5-table.txt; cp /tmp/c5/tilego.jsonl $OUT/c5-tilego.jsonl; cp /tmp/c5/peers.jsonl $OUT/c5-peers.jsonl
run() { # name timeout args...
  n=$1; to=$2; shift 2; t0=$(date +%s)
  timeout $to "$@" > /tmp/t-$n.log 2>&1
  echo "$n: exit $? $(grep -c -- '--- PASS' /tmp/t-$n.log) pass $(grep -c -- '--- FAIL' /tmp/t-$n.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-$n.log | tail -1)" | tee -a $S
  grep -- '--- FAIL' /tmp/t-$n.log | head -5 | tee -a $S
}
run runtime 30 ./bin/runtime.test -test.v
run jit 30 ./bin/jit.test -test.v
run bench 60 ./bin/bench.test -test.v
run cuda_backend 110 ./bin/cuda_backend.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$'
cat /tmp/c5/table.txt
