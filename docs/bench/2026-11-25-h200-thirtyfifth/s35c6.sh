#!/usr/bin/env bash
# Thirty-fifth session, call 6 (the compiler's Signal: the split kernel's piece counted by the first thread of
# the last warp with red.release, no barrier after, as call 5's "red" hand edit; Ticket lowered as one
# atom.add.acq_rel.gpu): MLA's split GPU tests (Merge's and Early's among them), sanitizers on two Early
# cases, then Early against the default program in pairs at five points, L2 flushed.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 200 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode/sm_90a/split_|TestGPUChainTime' -test.v > /tmp/t.log 2>&1
echo "MLA split tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -E -- '--- (FAIL|PASS).*(early|merge)' /tmp/t.log | tee -a $S; grep -A3 -- '--- FAIL' /tmp/t.log | head -20 | tee -a $S; gzip -c /tmp/t.log > $OUT/c6-test.log.gz
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff_early|split_sched_sq2_m32_early)$' > /tmp/san-$tool.log 2>&1
  echo "compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
echo "tests done at $(( $(date +%s) - T0 )) s" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 64 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 4096" "--batch 64 --heads 128 --seq-q 2 --mean-kv 4096"; do
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  timeout 100 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" early="./bin/tilego run mla-decode $R --config early" 2>&1 | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
