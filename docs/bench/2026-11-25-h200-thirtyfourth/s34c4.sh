#!/usr/bin/env bash
# Thirty-fourth session, call 4: ring slots freed in two parts (V's first half and the rope columns by warpgroup 0,
# V's other half by warpgroup 1; halves_edit.py; hp1 = that and p1late_edit.py): the split GPU tests, compute-sanitizer memcheck
# and racecheck on one, then pairs, L2 flushed before each launch.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT/r; S=$OUT/c4-summary.txt
T='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_3parts_hq128_handoff)$'
for v in halves hp1; do
  TILEGO_SOURCE=mla_decode=bin/$v.cu timeout 90 ./bin/cuda_backend.test -test.run "$T" -test.v > $OUT/r/c4-$v-test.log 2>&1
  echo "$v tests: exit $?, $(grep -c -- '--- PASS' $OUT/r/c4-$v-test.log) passed, $(grep -c -- '--- FAIL' $OUT/r/c4-$v-test.log) failed" | tee -a $S
done
T1='^TestGPUMLADecode$/^sm_90a/split_3parts_hq128_handoff$'
for tool in memcheck racecheck; do
  TILEGO_SOURCE=mla_decode=bin/hp1.cu timeout 120 compute-sanitizer --tool $tool ./bin/cuda_backend.test -test.run "$T1" > $OUT/r/c4-san-$tool.log 2>&1
  echo "hp1 $tool: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r/c4-san-$tool.log | tail -1)" | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  echo "== $pt" >> $OUT/r/c4-pairs.txt
  timeout 170 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" \
    p1late="TILEGO_SOURCE=mla_decode=bin/p1late.cu ./bin/tilego run mla-decode $R" \
    halves="TILEGO_SOURCE=mla_decode=bin/halves.cu ./bin/tilego run mla-decode $R" \
    hp1="TILEGO_SOURCE=mla_decode=bin/hp1.cu ./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/r/c4-pairs.txt | tail -5 | sed "s/^/mla $pt: /" | tee -a $S
done
tar czf $OUT/c4-records.tgz -C $OUT r && rm -rf $OUT/r
