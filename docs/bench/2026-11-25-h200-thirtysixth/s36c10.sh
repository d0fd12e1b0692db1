#!/usr/bin/env bash
# Thirty-sixth session, call 10, the final tree (Merge the default on sm_90a's split path where requests
# outnumber parts): MLA's GPU tests, FlashAttention's split, tail and chain tests (every launch now goes
# through LaunchWith), the bench package's GPU test, and compute-sanitizer on two Merge cases.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c10-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 400 ./bin/cuda_backend.test -test.run '^(TestGPUMLADecode|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime|TestGPUDeviceTensors)$' -test.v > $OUT/c10-tests.log 2>&1
echo "cuda tests: exit $? $(grep -c -- '--- PASS' $OUT/c10-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c10-tests.log) failed, $(grep -c -- '--- SKIP' $OUT/c10-tests.log) skipped" | tee -a $S
grep -E -- '--- FAIL' $OUT/c10-tests.log | head | tee -a $S
timeout 200 ./bin/bench.test -test.run GPU -test.v > $OUT/c10-bench-test.log 2>&1; echo "bench GPU test: exit $? $(grep -c -- '--- PASS' $OUT/c10-bench-test.log) passed" | tee -a $S
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/(split_sched_hq64_handoff_merge|split_3parts_hq128_handoff_merge)$' -test.v > $OUT/c10-san-$tool.log 2>&1
  echo "$tool: exit $? $(grep -c -- '--- PASS' $OUT/c10-san-$tool.log) passed; $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/c10-san-$tool.log)" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
