#!/usr/bin/env bash
# Twentieth session, call 3: the dealt Spread walk (the default: Draw off) against main 4d620de (A, bin/tilego-ab: the walk as a serial loop over g + i·grid), interleaved A B A B, persistent 256-thread configs at the non-causal 512-2k points; then all of TestGPUPersistent (the _draw configs launch 3 times, the counter checked zero).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
SH='seq_q=(512|1024|2048) .*causal=false'; M='threads=256.*persistent=true'
for r in 1 2; do
  t0=$(date +%s); timeout 100 ./bin/tilego-ab bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c3-A$r.jsonl > /dev/null 2>&1; echo "A$r exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
  t0=$(date +%s); timeout 100 ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c3-B$r.jsonl > /dev/null 2>&1; echo "B$r exit $? ($(( $(date +%s) - t0 )) s)" | tee -a $S
done
python3 bin/ab2.py $OUT c3 > $OUT/c3-ab.txt; grep best $OUT/c3-ab.txt | tee -a $S
t0=$(date +%s); timeout 300 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$' > $OUT/c3-persistent.log 2>&1
echo "TestGPUPersistent: exit $? $(grep -c -- '--- PASS' $OUT/c3-persistent.log) pass $(grep -c -- '--- FAIL' $OUT/c3-persistent.log) fail $(grep -c -- '--- SKIP' $OUT/c3-persistent.log) skip ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' $OUT/c3-persistent.log | tail -1)" | tee -a $S
grep -A3 -- '--- FAIL' $OUT/c3-persistent.log | head -20 | tee -a $S
gzip -f $OUT/c3-persistent.log
