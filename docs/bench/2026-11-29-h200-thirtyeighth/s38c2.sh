#!/usr/bin/env bash
# Thirty-eighth session, call 2, the final tree (the last commit's kernels; the mla suite also times
# the split path's Hopper default and its Early/Merge counterpart): MLA's GPU tests, FlashAttention's
# split, tail, chain and device-tensor tests, the bench package's GPU test, compute-sanitizer on two
# Merge cases; the mla suite's memory-bound points with their peers (call 1's suite ran out of time
# there); b64 h_q 128 kv8k five times, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 300 ./bin/cuda_backend.test -test.run '^(TestGPUMLADecode|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime|TestGPUDeviceTensors)$' -test.v > $OUT/c2-tests.log 2>&1
echo "cuda tests: exit $? $(grep -c -- '--- PASS' $OUT/c2-tests.log) passed, $(grep -c -- '--- FAIL' $OUT/c2-tests.log) failed, $(grep -c -- '--- SKIP' $OUT/c2-tests.log) skipped ($(( $(date +%s) - T0 )) s)" | tee -a $S
grep -E -- '--- FAIL' $OUT/c2-tests.log | head | tee -a $S
timeout 120 ./bin/bench.test -test.run GPU -test.v > $OUT/c2-bench-test.log 2>&1; echo "bench GPU test: exit $? $(grep -c -- '--- PASS' $OUT/c2-bench-test.log) passed" | tee -a $S
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/(split_sched_hq64_handoff_merge|split_3parts_hq128_handoff_merge)$' -test.v > $OUT/c2-san-$tool.log 2>&1
  echo "$tool: exit $? $(grep -c -- '--- PASS' $OUT/c2-san-$tool.log) passed; $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/c2-san-$tool.log) ($(( $(date +%s) - T0 )) s)" | tee -a $S
done
for i in 1 2 3 4 5; do
  echo "b64 kv8k run $i: $(timeout 30 ./bin/tilego run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --flush-l2 --json --check=$([ $i = 1 ] && echo true || echo false) 2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); print(round(r["time_ms"],4), "ms", round(r["tflops"],1), "TFLOP/s ok", r.get("ok"))')" | tee -a $S
done
OUT=$OUT/suite SUITES=mla TESTS=0 SHAPE='heads=(16|32|64) ' timeout 200 bash scripts/gpu-suite.sh run > /tmp/suite.log 2>&1; echo "suite exit $?" | tee -a $S
tail -14 /tmp/suite.log
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
