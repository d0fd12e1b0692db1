#!/usr/bin/env bash
# Thirty-ninth session, call 6: the final tree (proxy fences only where
# plain writes are not yet fenced: target/cuda syncState.unfenced) against
# HEAD (bin/tilego-ab) in alternating pairs, L2 flushed; then the MLA and
# FlashAttention split GPU tests and memcheck and racecheck on one
# hand-off split cases.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
pairs() { # rounds, point, variants...
  local n=$1 pt=$2; shift 2
  timeout 150 python3 scripts/pairs.py --rounds $n "$@" 2>&1 | grep -vE "^round [2-9]" | sed "s/^/$pt: /" | tee -a $S
}
for pt in "--batch 64 --heads 128 --mean-kv 8192:6" "--batch 128 --heads 128 --mean-kv 8192:3" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096:2"; do
  R="run mla-decode ${pt%:*} --splits 0 --repeats 30 --json --flush-l2"
  pairs ${pt#*:} "${pt%:*}" old="./bin/tilego-ab $R" new="./bin/tilego $R"
done
echo "pairs done at $(( $(date +%s) - T0 )) s" | tee -a $S
timeout 200 ./bin/cuda_backend.test -test.run '^(TestGPUMLADecode|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail|TestGPUChainTime|TestGPUDeviceTensors)$' -test.v > /tmp/tests.log 2>&1; echo "tests exit $?" | tee -a $S
echo "tests: $(grep -c -- '--- PASS' /tmp/tests.log) passed, $(grep -c -- '--- FAIL' /tmp/tests.log) failed, $(grep -c -- '--- SKIP' /tmp/tests.log) skipped" | tee -a $S
grep -- '--- FAIL' /tmp/tests.log | head | tee -a $S
for tool in memcheck racecheck; do
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 3 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/(split_sched_hq128_handoff_early)$' > /tmp/$tool.log 2>&1
  echo "$tool exit $? : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/$tool.log | tr '\n' ' ')" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
