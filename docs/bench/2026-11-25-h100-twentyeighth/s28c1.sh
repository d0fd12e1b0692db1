#!/usr/bin/env bash
# Twenty-eighth session, call 1: a request's only piece writes O and LSE itself (kernels/mla.go epilogue;
# the combine skips num_splits 1). TestGPUMLADecode and TestGPUDeviceTensors; the three sanitizers on
# gpu-suite.sh's MLA set; then the split path against HEAD (bin/tilego-ab), back to back, three rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c1; S=$OUT/c1-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 240 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUMLADecode|TestGPUDeviceTensors)$' > /tmp/c1/mla-tests.log 2>&1
echo "TestGPUMLADecode+DeviceTensors: exit $?, $(grep -c -- '    --- PASS' /tmp/c1/mla-tests.log) passed, $(grep -c -- '--- FAIL' /tmp/c1/mla-tests.log) failed" | tee -a $S
grep -- '--- FAIL' /tmp/c1/mla-tests.log | head -5 | tee -a $S
mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_3parts_hq128_handoff|hq128_handoff_long|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge|split_sched_hq128_seesaw)$'
for tool in memcheck synccheck racecheck; do
  timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$mla" > /tmp/c1/$tool-mla.log 2>&1
  echo "$tool MLA: exit $?, $(grep -c -- '    --- PASS' /tmp/c1/$tool-mla.log) passed, $(grep -c -- '--- FAIL' /tmp/c1/$tool-mla.log) failed; $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c1/$tool-mla.log)" | tee -a $S
done
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 32768" "--batch 128 --mean-kv 8192 --heads 64"; do
for b in tilego tilego-ab; do
  [ $(( $(date +%s) - T0 )) -gt 560 ] && break 3
  h=128; case "$pt" in *--heads*) h= ;; esac
  timeout 60 ./bin/$b run mla-decode $pt ${h:+--heads $h} --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-10s ms %.4f ok %s' % ('$pt', '$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c1-logs.tgz -C /tmp c1
