#!/usr/bin/env bash
# Thirtieth session, call 7 (H200): the guarded GPU tests (TMA, deferred, persistent, cluster) on the tree with
# the group rule, their causal cases first (the rule changes only causal tile orders), as far as the time goes.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_HANG_S=60; mkdir -p $OUT
timeout 190 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$/.*/.*causal' > /tmp/t.log 2>&1
echo "exit $? (124: time ran out)" | tee $OUT/c7-summary.txt
echo "passed $(grep -c -- '--- PASS' /tmp/t.log), failed $(grep -c -- '--- FAIL' /tmp/t.log)" | tee -a $OUT/c7-summary.txt
grep -- '--- FAIL' /tmp/t.log | head; gzip -c /tmp/t.log > $OUT/c7-test.log.gz
