#!/usr/bin/env bash
# Sixteenth session, call 1: the Q-ahead patch. MLA GPU tests (new: 3 parts over 6 requests), sanitizers on a multi-piece split, then A (HEAD) / B (patch) interleaved.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee $OUT/c1-summary.txt
timeout 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' > /tmp/c1-tests.log 2>&1
echo "MLA tests: exit $?, $(grep -c -- '--- PASS' /tmp/c1-tests.log) pass, $(grep -c -- '--- FAIL' /tmp/c1-tests.log) fail" | tee -a $OUT/c1-summary.txt
grep -E -- '--- FAIL|3parts' /tmp/c1-tests.log | head -12 | tee -a $OUT/c1-summary.txt
grep -A3 -- '3parts' /tmp/c1-tests.log | grep splits | head -6 | tee -a $OUT/c1-summary.txt
for tool in memcheck racecheck synccheck; do
timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.run '^TestGPUMLADecode$/^sm_90a/(split_3parts_hq128_handoff|split_3parts_hq64_splitn_ws)$' > /tmp/c1-$tool.log 2>&1; echo "$tool exit $? $(grep -m1 'ERROR SUMMARY' /tmp/c1-$tool.log)" | tee -a $OUT/c1-summary.txt
done
SH='seq_q=1 mean_kv=8192|heads=128 seq_q=1 mean_kv=16384'
M='stages=2 threads=256 (ws=true )?splitn=true$|handoff=true$'
for r in A1 B1; do
  bin=./bin/tilego; case $r in A*) bin=./bin/tilego-ab;; esac
  timeout 130 $bin bench --suite mla --shape "$SH" --match "$M" --repeats 30 --out $OUT/c1-$r.jsonl > /tmp/c1-$r.log 2>&1; echo "$r exit $?" | tee -a $OUT/c1-summary.txt
done
python3 bin/summ.py A1 $OUT/c1-A1.jsonl B1 $OUT/c1-B1.jsonl | sort -k1,3 -s | tee -a $OUT/c1-summary.txt
