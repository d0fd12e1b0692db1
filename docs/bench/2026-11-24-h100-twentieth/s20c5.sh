#!/usr/bin/env bash
# Twentieth session, call 5: the test binaries other than TestGPUPersistent (run in call 4) on the final code: bench, autotune, runtime, jit, then cuda_backend's unguarded tests and TestGPUDeferred/TestGPUTMA as time allows.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); timeout $to "$@" > $OUT/c5-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' $OUT/c5-$name.log) pass $(grep -c -- '--- FAIL' $OUT/c5-$name.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' $OUT/c5-$name.log | tail -1)" | tee -a $S
  grep -A3 -- '--- FAIL' $OUT/c5-$name.log | head -10 | tee -a $S; }
t bench 120 ./bin/bench.test -test.v
t autotune 90 ./bin/autotune.test -test.v
t runtime 60 ./bin/runtime.test -test.v
t jit 40 ./bin/jit.test -test.v
t cuda 230 ./bin/cuda_backend.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$'
gzip -f $OUT/c5-*.log
