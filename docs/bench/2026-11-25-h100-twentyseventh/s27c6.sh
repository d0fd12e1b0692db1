#!/usr/bin/env bash
# Twenty-seventh session, call 6: racecheck of R6-R10 (bin/rcvariants.py), synccheck of R7, R8, R10, and their time
# emitted; R1 no factor reads by warpgroup 1; R2 forward hand-off on an mbarrier; R3 hand-back on an
# mbarrier; R4 both; R5 R4 without the edge page's own barrier) on the two split hand-off test cases; synccheck
# on R2-R4; then the time of R0, R2, R3, R4 at b64 / b128 kv8k, back to back, two rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60 TILEGO_LINEINFO=1
mkdir -p $OUT /tmp/c6; S=$OUT/c6-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
cases='^TestGPUMLADecode$/^sm_90a/(split_3parts_hq128_handoff|split_sched_hq128_handoff)$'
for v in R6 R7 R8 R9 R10; do
  TILEGO_SOURCE=mla_decode=bin/rc-$v.cu timeout 120 compute-sanitizer --tool racecheck ./bin/cuda_backend.test -test.v -test.run "$cases" > /tmp/c6/rc-$v.log 2>&1
  echo "racecheck $v: exit $?, $(grep -c -- '--- PASS' /tmp/c6/rc-$v.log) passed, $(grep -c -- '--- FAIL' /tmp/c6/rc-$v.log) failed; $(grep -m1 'RACECHECK SUMMARY' /tmp/c6/rc-$v.log)" | tee -a $S
  grep -A3 "Race reported" /tmp/c6/rc-$v.log | head -12 | tee -a $S
done
for v in R7 R8 R10; do
  TILEGO_SOURCE=mla_decode=bin/rc-$v.cu timeout 100 compute-sanitizer --tool synccheck ./bin/cuda_backend.test -test.v -test.run "$cases" > /tmp/c6/sc-$v.log 2>&1
  echo "synccheck $v: exit $?, $(grep -c -- '--- PASS' /tmp/c6/sc-$v.log) passed; $(grep -m1 'ERROR SUMMARY' /tmp/c6/sc-$v.log)" | tee -a $S
done
unset TILEGO_LINEINFO
for i in 1 2; do for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192"; do for v in R0 R7 R8 R10; do
  [ $(( $(date +%s) - T0 )) -gt 500 ] && break 3
  TILEGO_SOURCE=mla_decode=bin/rc-$v.cu timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-28s %-4s ms %.4f ok %s' % ('$pt', '$v', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c6-logs.tgz -C /tmp c6
