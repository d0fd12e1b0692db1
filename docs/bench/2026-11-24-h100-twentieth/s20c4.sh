#!/usr/bin/env bash
# Twentieth session, call 4: the dealt Spread walk now loops over its count of tiles (as the serial walk did) after call 3 measured the loop over the values 7-14% slower at 2k with ping-pong. A = main 4d620de, B = this tree (dealt), C = this tree with TILEGO_DRAW=1 (drawn), interleaved A B C A B C, persistent 256-thread configs at the non-causal 512-2k points; then TestGPUPersistent and compute-sanitizer on small_d128 (dealt and drawn configs).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
SH='seq_q=(512|1024|2048) .*causal=false'; M='threads=256.*persistent=true'
for r in 1 2; do
  t0=$(date +%s); timeout 100 ./bin/tilego-ab bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c4-A$r.jsonl > /dev/null 2>&1; echo "A$r exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
  t0=$(date +%s); timeout 100 ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c4-B$r.jsonl > /dev/null 2>&1; echo "B$r exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
  t0=$(date +%s); TILEGO_DRAW=1 timeout 100 ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c4-C$r.jsonl > /dev/null 2>&1; echo "C$r exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
done
echo "== B (dealt) over A (main)" | tee -a $S; python3 bin/ab2.py $OUT c4 | tee -a $S
mkdir -p /tmp/d; for r in 1 2; do cp $OUT/c4-B$r.jsonl /tmp/d/x-A$r.jsonl; cp $OUT/c4-C$r.jsonl /tmp/d/x-B$r.jsonl; done
echo "== C (drawn) over B (dealt)" | tee -a $S; python3 bin/ab2.py /tmp/d x | tee -a $S
t0=$(date +%s); timeout 260 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$' > $OUT/c4-persistent.log 2>&1
echo "TestGPUPersistent: exit $? $(grep -c -- '--- PASS' $OUT/c4-persistent.log) pass $(grep -c -- '--- FAIL' $OUT/c4-persistent.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' $OUT/c4-persistent.log | tail -1)" | tee -a $S
grep -A3 -- '--- FAIL' $OUT/c4-persistent.log | head -20 | tee -a $S
gzip -f $OUT/c4-persistent.log
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s); timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$/sm_90a/small_d128/(ws_ovpp|ws_direct|ws_ovpp_direct|ws_pf|ws_draw|ws_pf_draw|ws_ovpp_draw|ws_ovpp_direct_draw)$' > /tmp/san-$tool.log 2>&1
  echo "san $tool small_d128: exit $? $(grep -c -- '--- PASS' /tmp/san-$tool.log) pass ($(( $(date +%s) - t0 )) s) $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
