#!/usr/bin/env bash
# Twentieth session, call 1: the drawn walk (Spread loops, target/cuda/spread.go). The persistent GPU tests on the shapes whose walks draw (each drawn program launched 3 times, the counter checked zero after); compute-sanitizer on small_d128; then an A/B of the non-causal persistent configs at 512-2k: A = TILEGO_DRAW=0 (dealt by block index), B = drawn.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t0=$(date +%s); timeout 280 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$/sm_90a/(mha_d64|mha_d256|small_d128|causal_d128)$' > $OUT/c1-persistent.log 2>&1
echo "TestGPUPersistent drawn shapes: exit $? $(grep -c -- '--- PASS' $OUT/c1-persistent.log) pass $(grep -c -- '--- FAIL' $OUT/c1-persistent.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' $OUT/c1-persistent.log | tail -1)" | tee -a $S
grep -A3 -- '--- FAIL' $OUT/c1-persistent.log | head -20 | tee -a $S
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s); timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$/sm_90a/small_d128/(ws_ovpp|ws_direct|ws_ovpp_direct|ws_pf)$' > /tmp/san-$tool.log 2>&1
  echo "san $tool small_d128: exit $? $(grep -c -- '--- PASS' /tmp/san-$tool.log) pass ($(( $(date +%s) - t0 )) s) $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
SH='seq_q=(512|1024|2048) .*causal=false'; M='persistent=true'
t0=$(date +%s)
TILEGO_DRAW=0 timeout 120 ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c1-A1.jsonl > /dev/null 2>&1; echo "A1 exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
t0=$(date +%s)
timeout 120 ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c1-B1.jsonl > /dev/null 2>&1; echo "B1 exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
python3 bin/ab2.py $OUT c1 | tee -a $S
