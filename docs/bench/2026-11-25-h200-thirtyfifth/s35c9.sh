#!/usr/bin/env bash
# Thirty-fifth session, call 9 (the final tree): MLA's GPU tests (all), the FlashAttention split, tail, chain
# and device-tensor tests, and the bench package's GPU test (a small mla and fa-tail pair through the whole
# benchmark, where the default now starts the combine early).
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c9-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 300 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime|TestGPUDeviceTensors' -test.v > /tmp/t.log 2>&1
echo "cuda tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -A3 -- '--- FAIL' /tmp/t.log | head -20 | tee -a $S; gzip -c /tmp/t.log > $OUT/c9-test.log.gz
timeout 150 ./bin/bench.test -test.run 'GPU' -test.v > /tmp/b.log 2>&1
echo "bench tests: exit $?, $(grep -c -- '--- PASS' /tmp/b.log) passed, $(grep -c -- '--- FAIL' /tmp/b.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -A3 -- '--- FAIL' /tmp/b.log | head -20 | tee -a $S; gzip -c /tmp/b.log > $OUT/c9-bench-test.log.gz
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
