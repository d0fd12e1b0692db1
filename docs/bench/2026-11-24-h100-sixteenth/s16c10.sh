#!/usr/bin/env bash
# Sixteenth session, call 10: the GPU tests on the final code generator, each binary's counts written as it ends.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c10-summary.txt
t0=$(date +%s)
timeout 270 ./bin/cuda_backend.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$' > /tmp/t-cb.log 2>&1
echo "cuda_backend: exit $? $(grep -c -- '--- PASS' /tmp/t-cb.log) pass $(grep -c -- '--- FAIL' /tmp/t-cb.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-cb.log | tail -1)" | tee -a $S
grep -- '--- FAIL' /tmp/t-cb.log | head -5 | tee -a $S
t0=$(date +%s)
timeout 200 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$' > /tmp/t-g.log 2>&1
echo "guarded tma/ws/deferred/persistent/cluster: exit $? $(grep -c -- '--- PASS' /tmp/t-g.log) pass $(grep -c -- '--- FAIL' /tmp/t-g.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-g.log | tail -1)" | tee -a $S
grep -- '--- FAIL' /tmp/t-g.log | head -5 | tee -a $S
t0=$(date +%s)
timeout 90 ./bin/bench.test -test.v > /tmp/t-b.log 2>&1
echo "bench: exit $? $(grep -c -- '--- PASS' /tmp/t-b.log) pass $(grep -c -- '--- FAIL' /tmp/t-b.log) fail ($(( $(date +%s) - t0 )) s)" | tee -a $S
