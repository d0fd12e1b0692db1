#!/usr/bin/env bash
# Thirty-second session, call 6, the final tree (merges in registers, piece cost 6): MLA's GPU tests, then the
# mla and fa-tail suites with their peers (torch MLA, copy bandwidth, cuBLAS peak before and after).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
T0=$(date +%s)
timeout 150 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode|TestGPUFlashAttentionTail' -test.v > /tmp/t.log 2>&1
t="MLA and tail tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s"; echo "$t"
SUITES=mla,fa-tail TESTS=0 timeout $(( 560 - ($(date +%s) - T0) )) bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?"
echo "$t" > $OUT/c6-tests.txt; grep -- '--- FAIL' /tmp/t.log | head >> $OUT/c6-tests.txt; gzip -c /tmp/t.log > $OUT/c6-test.log.gz
tail -45 /tmp/suite.log
echo "elapsed $(( $(date +%s) - T0 )) s"
