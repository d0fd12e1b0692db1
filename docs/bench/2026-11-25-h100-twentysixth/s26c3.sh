#!/usr/bin/env bash
# Twenty-sixth session, call 3: warpgroup 1 hands back by meeting warpgroup 0 at bar 9 (handoff.go lateBack). racecheck on the probes k10-k15; MLA's
# small set under racecheck (with line info), memcheck and synccheck; all of TestGPUMLADecode; the split path's
# time against HEAD (bin/tilego-ab: bar.arrive hand-back) at three points, back to back, four rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c3; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
nvcc -arch=sm_90a -lineinfo -o /tmp/rc scripts/racecheck_named_barrier.cu
for k in 10 11 12 13 14 15; do
  compute-sanitizer --tool racecheck --print-limit 50 /tmp/rc $k > /tmp/c3/rc-k$k.log 2>&1
  echo "k$k: $(grep -m1 'RACECHECK SUMMARY' /tmp/c3/rc-k$k.log)" | tee -a $S
done
mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge)$'
for tool in racecheck memcheck synccheck; do
  TILEGO_LINEINFO=1 timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$mla" > /tmp/c3/$tool-mla.log 2>&1
  echo "$tool MLA: exit $?, $(grep -c -- '--- PASS' /tmp/c3/$tool-mla.log) passed; $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c3/$tool-mla.log)" | tee -a $S
done
grep -A2 "Race reported" /tmp/c3/racecheck-mla.log | head -24 | tee -a $S
timeout 300 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' > /tmp/c3/mla-tests.log 2>&1
echo "TestGPUMLADecode: exit $?, $(grep -c -- '    --- PASS' /tmp/c3/mla-tests.log) passed, $(grep -c -- '--- FAIL' /tmp/c3/mla-tests.log) failed" | tee -a $S
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 16384" "--batch 64 --mean-kv 4096 --seq-q 2"; do
for i in 1 2 3 4; do for b in tilego tilego-ab; do
  timeout 90 ./bin/$b run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-28s %-10s ms %.4f ok %s' % ('$pt', '$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
tar czf $OUT/c3-logs.tgz -C /tmp c3
