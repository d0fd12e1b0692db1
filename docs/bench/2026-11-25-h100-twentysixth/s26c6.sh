#!/usr/bin/env bash
# Twenty-sixth session, call 6: the hand-back three ways (an experiment switch, TILEGO_HANDBACK): meet (the
# non-aligned barrier.sync, the default), mbar (an mbarrier of warpgroup 1's 128 arrivals at the same point,
# warpgroup 0 waiting on its parity) and mbar-early (the same mbarrier, arrived at after warpgroup 1's last use,
# as the bar.arrive before). racecheck and synccheck on MLA's two hand-off cases and the hand-off GPU tests for
# each; then the split path's time at three points, the three interleaved, four rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c6; S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
ho='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_handoff|split_uniform3_sq2_f16_handoff)$'
for m in meet mbar mbar-early; do
  for tool in racecheck synccheck; do
    TILEGO_HANDBACK=$m TILEGO_LINEINFO=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$ho" > /tmp/c6/$tool-$m.log 2>&1
    echo "$m $tool: exit $?, $(grep -c -- '--- PASS' /tmp/c6/$tool-$m.log) passed; $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c6/$tool-$m.log)" | tee -a $S
  done
  TILEGO_HANDBACK=$m timeout 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$/^sm_90a/.*handoff' > /tmp/c6/tests-$m.log 2>&1
  echo "$m hand-off tests: exit $?, $(grep -c -- '    --- PASS' /tmp/c6/tests-$m.log) passed, $(grep -c -- '--- FAIL' /tmp/c6/tests-$m.log) failed" | tee -a $S
done
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 16384" "--batch 64 --mean-kv 4096 --seq-q 2"; do
for i in 1 2 3 4; do for m in meet mbar mbar-early; do
  TILEGO_HANDBACK=$m timeout 90 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-36s %-10s ms %.4f ok %s' % ('$pt', '$m', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$m failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
tar czf $OUT/c6-logs.tgz -C /tmp c6
