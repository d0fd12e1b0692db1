#!/usr/bin/env bash
# Thirty-third session, call 3 (this tree, 9720e18): the split, tail and chain GPU tests, memcheck and racecheck
# on six split and combine cases, then the fa-tail suite with its peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
T0=$(date +%s); S=/tmp/c3-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 200 ./bin/cuda_backend.test -test.run 'TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime|TestGPUDeviceTensors' -test.v > /tmp/t.log 2>&1
echo "split/tail/chain/device-tensor tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head | tee -a $S
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUMLADecode|TestGPUFlashAttentionSplit)$/^sm_90a/(split_sched_hq128_handoff|split_sched_hq128_handoff_v0|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge|split5_causal_sq>skv|split9_short|split2_d64_f16)$' > /tmp/san-$tool.log 2>&1
  echo "compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
SUITES=fa-tail TESTS=0 timeout $(( 570 - ($(date +%s) - T0) )) bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?" | tee -a $S
mkdir -p $OUT/c3; cp $S $OUT/c3/summary.txt; gzip -c /tmp/t.log > $OUT/c3/test.log.gz
tail -25 /tmp/suite.log
echo "elapsed $(( $(date +%s) - T0 )) s"
