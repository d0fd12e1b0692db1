#!/usr/bin/env bash
# Twenty-sixth session, call 5: racecheck and synccheck on the probes k16-k20 (where the meeting hand-back's
# remaining reports come from: warpgroup 0's own edge barrier?); then the mla suite at the bench's picks (rotated
# inputs) with the meeting hand-back, the copy and cuBLAS before and after.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c5; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
nvcc -arch=sm_90a -lineinfo -o /tmp/rc scripts/racecheck_named_barrier.cu
for k in 16 17 18 19 20; do
  for tool in racecheck synccheck; do
    compute-sanitizer --tool $tool --print-limit 50 /tmp/rc $k > /tmp/c5/$tool-k$k.log 2>&1
    echo "k$k $tool: $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c5/$tool-k$k.log)" | tee -a $S
  done
done
python3 scripts/peers.py --suite peak > $OUT/c5-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 450 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c5-mla.jsonl 2>/tmp/c5/bench.err; echo "mla: exit $? ($(wc -l < $OUT/c5-mla.jsonl) records)" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c5-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
python3 scripts/table.py $OUT/c5-mla.jsonl $OUT/c5-peak.jsonl | tee -a $S
tar czf $OUT/c5-logs.tgz -C /tmp c5
