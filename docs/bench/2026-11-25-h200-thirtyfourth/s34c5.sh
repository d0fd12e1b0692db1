#!/usr/bin/env bash
# Thirty-fourth session, call 5: warpgroup 0's exponentials partly on the FMA pipe (poly_edit.py: poly2 = 2 of
# every 4 by the polynomial, poly3 = 3 of 4; hpp2 = poly2 on halves_edit.py and p1late_edit.py): the split GPU
# tests, then pairs, L2 flushed before each launch.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT/r; S=$OUT/c5-summary.txt
T='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_3parts_hq128_handoff)$'
for v in poly2 poly3 hpp2; do
  TILEGO_SOURCE=mla_decode=bin/$v.cu timeout 90 ./bin/cuda_backend.test -test.run "$T" -test.v > $OUT/r/c5-$v-test.log 2>&1
  echo "$v tests: exit $?, $(grep -c -- '--- PASS' $OUT/r/c5-$v-test.log) passed, $(grep -c -- '--- FAIL' $OUT/r/c5-$v-test.log) failed" | tee -a $S
  grep -h "max_abs\|err" $OUT/r/c5-$v-test.log | head -3 >> $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  echo "== $pt" >> $OUT/r/c5-pairs.txt
  timeout 200 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" \
    hp1="TILEGO_SOURCE=mla_decode=bin/hp1.cu ./bin/tilego run mla-decode $R" \
    poly2="TILEGO_SOURCE=mla_decode=bin/poly2.cu ./bin/tilego run mla-decode $R" \
    poly3="TILEGO_SOURCE=mla_decode=bin/poly3.cu ./bin/tilego run mla-decode $R" \
    hpp2="TILEGO_SOURCE=mla_decode=bin/hpp2.cu ./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/r/c5-pairs.txt | tail -6 | sed "s/^/mla $pt: /" | tee -a $S
done
grep -h '"errors"\|max' $OUT/r/c5-pairs.txt | head -0
tar czf $OUT/c5-records.tgz -C $OUT r && rm -rf $OUT/r
