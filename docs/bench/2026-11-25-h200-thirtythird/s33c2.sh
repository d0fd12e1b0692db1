#!/usr/bin/env bash
# Thirty-third session, call 2: P for warpgroup 1 in the page's rope columns (a hand edit of the split kernel,
# /tmp/pslot.py: they are dead once warpgroup 0 has the page's scores, and the ring's two slots double-buffer
# P), so warpgroup 0 no longer waits for warpgroup 1's P.V before writing the next P: the hand-back moves to
# right after warpgroup 1's rescale. With V0 = 192 too (pslot192). Checked by the GPU test of the same
# program and racecheck, then alternating pairs against this tree (round 1 checked against float64).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $S
T='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_3parts_hq128_handoff)$'
TILEGO_SOURCE=mla_decode=bin/pslot.cu timeout 100 ./bin/cuda_backend.test -test.run "$T" -test.v > /tmp/t.log 2>&1
echo "pslot tests: exit $?, $(grep -c -- '--- PASS' /tmp/t.log) passed, $(grep -c -- '--- FAIL' /tmp/t.log) failed" | tee -a $S
grep -- '--- FAIL' -A3 /tmp/t.log | head | tee -a $S
TILEGO_SOURCE=mla_decode=bin/pslot.cu timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 ./bin/cuda_backend.test -test.run "$T" -test.v > /tmp/san.log 2>&1
echo "pslot racecheck: exit $?, $(grep -c -- '--- PASS' /tmp/san.log) passed, $(grep -m1 -E 'RACECHECK SUMMARY' /tmp/san.log)" | tee -a $S
echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
for pt in "--batch 64 --heads 128 --mean-kv 8192" "--batch 128 --heads 128 --mean-kv 8192" "--batch 64 --heads 128 --mean-kv 32768" "--batch 64 --heads 128 --mean-kv 4096"; do
  R="$pt --splits 0 --repeats 30 --json"
  echo "== $pt" >> $OUT/c2-pairs.txt
  timeout 150 python3 scripts/pairs.py --rounds 3 base="./bin/tilego run mla-decode $R" pslot="TILEGO_SOURCE=mla_decode=bin/pslot.cu ./bin/tilego run mla-decode $R" pslot192="TILEGO_SOURCE=mla_decode=bin/pslot192.cu ./bin/tilego run mla-decode $R --config v0=192" 2>&1 | tee -a $OUT/c2-pairs.txt | tail -4 | sed "s/^/mla $pt: /" | tee -a $S
  echo "  at $(( $(date +%s) - T0 )) s" | tee -a $S
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
