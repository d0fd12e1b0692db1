#!/usr/bin/env bash
# Thirty-fourth session, call 11 (the tree with parts.go: ring slots freed in parts by the warpgroups that use
# them): MLA's GPU tests, memcheck and racecheck on two hand-off split cases, then pairs against the program
# before it (bin/ff.cu: firstFill alone, emitted by the previous commit), L2 flushed before each launch.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c11-summary.txt
timeout 160 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode' -test.v > /tmp/t.log 2>&1
echo "MLA tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head | tee -a $S; gzip -c /tmp/t.log > $OUT/c11-test.log.gz
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_3parts_hq128_handoff)$' > /tmp/san-$tool.log 2>&1
  echo "compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 60 python3 scripts/pairs.py --rounds 3 before="TILEGO_SOURCE=mla_decode=bin/ff.cu ./bin/tilego run mla-decode $R" after="./bin/tilego run mla-decode $R" 2>&1 | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
