#!/usr/bin/env bash
# Thirty-third session, call 8: the producer issues a piece's first page before waiting for Q's slot (a hand
# edit of the split kernel, tried-pagefirst.py): that page's ring slot frees while the piece before runs its
# last page, Q's only when its page loop ends. The split GPU tests of the program, then pairs (round 1 checked).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c8-summary.txt
T='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_3parts_hq128_handoff)$'
TILEGO_SOURCE=mla_decode=bin/pagefirst.cu timeout 60 ./bin/cuda_backend.test -test.run "$T" -test.v > /tmp/t.log 2>&1
echo "pagefirst tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192"; do
  R="$pt --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c8-pairs.txt
  timeout 60 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" pagefirst="TILEGO_SOURCE=mla_decode=bin/pagefirst.cu ./bin/tilego run mla-decode $R" 2>&1 | tee -a $OUT/c8-pairs.txt | tail -3 | sed "s/^/mla $pt: /" | tee -a $S
done
