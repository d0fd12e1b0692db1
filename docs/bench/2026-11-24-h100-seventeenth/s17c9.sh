#!/usr/bin/env bash
# Seventeenth session, call 9 (run inline, warm compile cache): the cuda_backend test binary without the guarded group, on the final code.
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60; mkdir -p $OUT; t0=$(date +%s)
timeout 320 ./bin/cuda_backend.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$' > /tmp/t.log 2>&1
echo "cuda_backend non-guarded: exit $? $(grep -c -- '--- PASS' /tmp/t.log) pass $(grep -c -- '--- FAIL' /tmp/t.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t.log | tail -1)" | tee $OUT/c9-summary.txt
