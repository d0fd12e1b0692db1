#!/usr/bin/env bash
# Twenty-sixth session, call 13: MLA's edge page zeroes only the slots past the length (a branch in the Parallel
# loop, no read of the others) against HEAD (bin/tilego-ab: every slot read and rewritten). All of
# TestGPUMLADecode and the sanitizers on MLA's small set; then the split path's time at five points, back to back,
# four rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c13; S=$OUT/c13-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' > /tmp/c13/mla-tests.log 2>&1
echo "TestGPUMLADecode: exit $?, $(grep -c -- '    --- PASS' /tmp/c13/mla-tests.log) passed, $(grep -c -- '--- FAIL' /tmp/c13/mla-tests.log) failed" | tee -a $S
mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge)$'
for tool in memcheck synccheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$mla" > /tmp/c13/$tool-mla.log 2>&1
  echo "$tool MLA: exit $?, $(grep -c -- '--- PASS' /tmp/c13/$tool-mla.log) passed; $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c13/$tool-mla.log)" | tee -a $S
done
for pt in "--batch 64 --mean-kv 1024" "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 16384" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 64 --mean-kv 8192 --heads 16"; do
for i in 1 2 3 4; do for b in tilego tilego-ab; do
  h=128; case "$pt" in *--heads*) h= ;; esac
  timeout 90 ./bin/$b run mla-decode $pt ${h:+--heads $h} --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-36s %-10s ms %.4f ok %s' % ('$pt', '$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
tar czf $OUT/c13-logs.tgz -C /tmp c13
