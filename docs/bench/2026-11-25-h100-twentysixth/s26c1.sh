#!/usr/bin/env bash
# Twenty-sixth session, call 1: where MLA's hand-off racecheck reports point. racecheck on the race-free
# probes k1 and k10-k12 (MLA's hand-off loop, scripts/racecheck_named_barrier.cu) with every hazard shown, and on
# split_sched_hq128_handoff with line info and the program's source (TILEGO_DUMP) to map the reports to lines.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c1; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
nvcc -arch=sm_90a -lineinfo -o /tmp/rc scripts/racecheck_named_barrier.cu
for k in 1 2 8 10 11 12; do
  compute-sanitizer --tool racecheck --print-limit 50 /tmp/rc $k > /tmp/c1/rc-k$k.log 2>&1
  echo "k$k: $(grep -m1 'RACECHECK SUMMARY' /tmp/c1/rc-k$k.log)" | tee -a $S
done
t='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff)$'
TILEGO_LINEINFO=1 TILEGO_DUMP=mla_decode TILEGO_CACHE=off timeout 300 compute-sanitizer --tool racecheck --print-limit 100 ./bin/cuda_backend.test -test.v -test.run "$t" > /tmp/c1/rc-mla.log 2> /tmp/c1/rc-mla.err
echo "mla handoff: exit $?, $(grep -m1 'RACECHECK SUMMARY' /tmp/c1/rc-mla.log)" | tee -a $S
grep -A3 "Race reported" /tmp/c1/rc-mla.log | head -60 | tee -a $S
tar czf $OUT/c1-logs.tgz -C /tmp c1
