#!/usr/bin/env bash
# Nineteenth session, call 10: the guarded TMA, deferred and cluster GPU tests (TestGPUPersistent passed in call 4), then autotune's, on main.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c10-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
run() { # name timeout args...
  n=$1; to=$2; shift 2; t0=$(date +%s)
  timeout $to "$@" > /tmp/t-$n.log 2>&1
  echo "$n: exit $? $(grep -c -- '--- PASS' /tmp/t-$n.log) pass $(grep -c -- '--- FAIL' /tmp/t-$n.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-$n.log | tail -1)" | tee -a $S
  grep -- '--- FAIL' /tmp/t-$n.log | head -5 | tee -a $S
}
run guarded 480 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUTMA|TestGPUDeferred|TestGPUCluster)$'
run autotune 90 ./bin/autotune.test -test.v
