#!/usr/bin/env bash
# Thirty-fourth session, call 2. (a) Warpgroup 1's P·V of page j after warpgroup 0's scores of page j+1
# (pvlate_edit.py; pvp1 = that and p1late_edit.py): split GPU tests, then pairs, L2 flushed before each launch.
# (b) Where a page's time goes (pages2_edit.py), the epilogue's steps (epist_edit.py) and the combine
# (mla_stamps_edit.py's combine stamps), base program, b64 kv8k; and pages2 of pvlate.
cd "$(dirname "$0")/../../.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT/r; S=$OUT/c2-summary.txt; D=docs/bench/2026-11-25-h200-thirtyfourth
T='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_3parts_hq128_handoff)$'
for v in pvlate pvp1; do
  TILEGO_SOURCE=mla_decode=bin/$v.cu timeout 90 ./bin/cuda_backend.test -test.run "$T" -test.v > $OUT/r/c2-$v-test.log 2>&1
  echo "$v tests: exit $?, $(grep -c -- '--- PASS' $OUT/r/c2-$v-test.log) passed, $(grep -c -- '--- FAIL' $OUT/r/c2-$v-test.log) failed" | tee -a $S
done
for tag in base pv; do
  src=bin/pe.cu; [ $tag = pv ] && src=bin/pvpages.cu
  TILEGO_SOURCE=mla_decode=$src,mla_combine=bin/cstamped.cu TILEGO_STAMPS=$OUT/r/$tag timeout 60 ./bin/tilego run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 10 --json > $OUT/r/$tag.json 2>$OUT/r/$tag.err
  echo "== stamps $tag: $(python3 -c "import json; s=json.load(open('$OUT/r/$tag.json')); print(s['time_ms'], s.get('ok'))" 2>&1 | tail -1)" | tee -a $S
  python3 $D/pages2_read.py $OUT/r/$tag.mla_decode.txt 2>&1 | tee -a $S
  python3 -c "
v=open('$OUT/r/$tag.mla_decode.txt').read().split(); open('/tmp/cut.txt','w').write('\n'.join(v[:264*51]))"
  python3 scripts/mla_stamps_read.py /tmp/cut.txt $OUT/r/$tag.mla_combine.txt 2>&1 | tee -a $S
done
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json --flush-l2"
  echo "== $pt" >> $OUT/r/c2-pairs.txt
  timeout 170 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" \
    p1late="TILEGO_SOURCE=mla_decode=bin/p1late.cu ./bin/tilego run mla-decode $R" \
    pvlate="TILEGO_SOURCE=mla_decode=bin/pvlate.cu ./bin/tilego run mla-decode $R" \
    pvp1="TILEGO_SOURCE=mla_decode=bin/pvp1.cu ./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/r/c2-pairs.txt | tail -5 | sed "s/^/mla $pt: /" | tee -a $S
done
tar czf $OUT/c2-records.tgz -C $OUT r
