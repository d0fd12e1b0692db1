#!/usr/bin/env bash
# Twenty-sixth session, call 8: racecheck and synccheck on the probes k13, k16, k21 and k22 (the producer warp alive
# while the consumers hand off).
cd "$(dirname "$0")/.."
mkdir -p $OUT /tmp/c8; S=$OUT/c8-summary.txt
nvcc -arch=sm_90a -lineinfo -o /tmp/rc scripts/racecheck_named_barrier.cu || exit 1
for k in 13 16 21 22; do
  for tool in racecheck synccheck; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 50 /tmp/rc $k > /tmp/c8/$tool-k$k.log 2>&1
    echo "k$k $tool: $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c8/$tool-k$k.log) ($(tail -1 /tmp/c8/$tool-k$k.log))" | tee -a $S
  done
done
tar czf $OUT/c8-logs.tgz -C /tmp c8
