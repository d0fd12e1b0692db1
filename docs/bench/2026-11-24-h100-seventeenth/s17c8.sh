#!/usr/bin/env bash
# Seventeenth session, call 8 (warm compile cache): the test binaries call 7 cut off (cuda_backend non-guarded, TestGPUTMA);
# the sweep from 4k to 16k tokens, GQA/B1H16 and GEMM, with peers, on the final code.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c8-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
run() { # name timeout args...
  n=$1; to=$2; shift 2; t0=$(date +%s)
  timeout $to "$@" > /tmp/t-$n.log 2>&1
  echo "$n: exit $? $(grep -c -- '--- PASS' /tmp/t-$n.log) pass $(grep -c -- '--- FAIL' /tmp/t-$n.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-$n.log | tail -1)" | tee -a $S
  grep -- '--- FAIL' /tmp/t-$n.log | head -5 | tee -a $S
}
run cuda_backend 110 ./bin/cuda_backend.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$'
run tma 90 ./bin/cuda_backend.test -test.v -test.run '^TestGPUTMA$'
OUT=/tmp/c8 TESTS=0 SUITES=fa-sweep,extra,gemm SHAPE='seq_q=(4096|8192|16384) |m=8192 n=8192' timeout 370 bash scripts/gpu-suite.sh run > /tmp/c8-suite.log 2>&1
echo "4k-16k sweep, extra, gemm with peers: exit $?" | tee -a $S
cp /tmp/c8/table.txt $OUT/c8-table.txt; cp /tmp/c8/table.md $OUT/c8-table.md; cp /tmp/c8/tilego.jsonl $OUT/c8-tilego.jsonl; cp /tmp/c8/peers.jsonl $OUT/c8-peers.jsonl
tail -3 /tmp/c8-suite.log
cat /tmp/c8/table.txt
