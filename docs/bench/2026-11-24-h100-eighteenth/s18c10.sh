#!/usr/bin/env bash
# Eighteenth session, call 10: on the final code, the cuda_backend test binary without the guarded group (Launch.Time now back to back), then the persistent tests (a new causal shape whose last round is partial).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c10-summary.txt
run() { # name timeout args...
  n=$1; to=$2; shift 2; t0=$(date +%s)
  timeout $to "$@" > /tmp/t-$n.log 2>&1
  echo "$n: exit $? $(grep -c -- '--- PASS' /tmp/t-$n.log) pass $(grep -c -- '--- FAIL' /tmp/t-$n.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-$n.log | tail -1)" | tee -a $S
  grep -- '--- FAIL' /tmp/t-$n.log | head -5 | tee -a $S
}
run cuda_backend 250 ./bin/cuda_backend.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$'
run persistent 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$'
