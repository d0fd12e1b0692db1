#!/usr/bin/env bash
# Thirty-fourth session, call 7 (the tree with ws.go's firstFill: the split kernel's producer issues its
# second page once Q and the first landed): MLA's GPU tests, memcheck and racecheck on split cases, then
# pairs against the programs before it (bin/split.cu, bin/split64.cu: emitted from the previous commit),
# L2 flushed before each launch.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c7-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
timeout 220 ./bin/cuda_backend.test -test.run 'TestGPUMLADecode' -test.v > /tmp/t.log 2>&1
echo "MLA tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' /tmp/t.log | head | tee -a $S; gzip -c /tmp/t.log > $OUT/c7-test.log.gz
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge|split_3parts_hq128_handoff)$' > /tmp/san-$tool.log 2>&1
  echo "compute-sanitizer $tool: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed, $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192:split" "--batch 128 --heads 128 --mean-kv 8192:split" "--batch 64 --heads 64 --mean-kv 8192:split64"; do
  old=${pt#*:}; pt=${pt%:*}
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  echo "== $pt" >> $OUT/c7-pairs.txt
  timeout 100 python3 scripts/pairs.py --rounds 4 before="TILEGO_SOURCE=mla_decode=bin/$old.cu ./bin/tilego run mla-decode $R" after="./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/c7-pairs.txt | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
