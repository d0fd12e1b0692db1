#!/usr/bin/env bash
# Thirty-fifth session, call 3 (MLAConfig.Early: the combine launched to start early, programmatic dependent
# launch, on the SMs of the split kernel's parts that end first; its blocks wait for each request's pieces on a
# counter the split kernel's pieces add to). Predicted at b64 kv8k: the combine's 2.1 µs start and most of its
# 6.3 µs under the last parts (ends 216-232 µs in the thirty-fourth's stamps): 2-3% less time.
# MLA's split GPU tests (five Early cases), sanitizers on an Early case, then pairs against the default program.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 200 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/split_' -test.v > /tmp/t.log 2>&1
echo "MLA split tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -E -- '--- (FAIL|PASS).*early' /tmp/t.log | tee -a $S; grep -A3 -- '--- FAIL' /tmp/t.log | head -20 | tee -a $S; gzip -c /tmp/t.log > $OUT/c3-test.log.gz
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff_early|split_sched_sq2_m32_early)$' > /tmp/san-$tool.log 2>&1
  echo "compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
echo "tests done at $(( $(date +%s) - T0 )) s" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 64 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096"; do
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 120 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" early="./bin/tilego run mla-decode $R --config early" nopdl="TILEGO_PDL=0 ./bin/tilego run mla-decode $R --config early" 2>&1 | tail -4 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
