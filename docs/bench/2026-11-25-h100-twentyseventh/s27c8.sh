#!/usr/bin/env bash
# Twenty-seventh session, call 8: call 7's change with the seesaw's two hand-offs on mbarriers too. All of
# TestGPUMLADecode; the three sanitizers on gpu-suite.sh's MLA set; the split path and the seesaw against HEAD.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c8; S=$OUT/c8-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
timeout 220 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' > /tmp/c8/mla-tests.log 2>&1
echo "TestGPUMLADecode: exit $?, $(grep -c -- '    --- PASS' /tmp/c8/mla-tests.log) passed, $(grep -c -- '--- FAIL' /tmp/c8/mla-tests.log) failed" | tee -a $S
mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_3parts_hq128_handoff|hq128_handoff_long|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge|split_sched_hq128_seesaw)$'
for tool in racecheck synccheck memcheck; do
  timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$mla" > /tmp/c8/$tool-mla.log 2>&1
  echo "$tool MLA: exit $?, $(grep -c -- '    --- PASS' /tmp/c8/$tool-mla.log) passed, $(grep -c -- '--- FAIL' /tmp/c8/$tool-mla.log) failed; $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c8/$tool-mla.log)" | tee -a $S
done
grep -B3 -A1 "Race reported" /tmp/c8/racecheck-mla.log | head -8 | tee -a $S
for i in 1 2; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 64 --mean-kv 8192 --config seesaw=true,stages=1"; do
for b in tilego tilego-ab; do
  [ $(( $(date +%s) - T0 )) -gt 540 ] && break 3
  cf=""; case "$pt" in *--config*) cf="seesaw=true stages=1"; pt="--batch 64 --mean-kv 8192" ;; esac
  timeout 60 ./bin/$b run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) ${cf:+--config "$cf"} > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-36s %-12s %-10s ms %.4f ok %s' % ('$pt', '$cf', '$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
tar czf $OUT/c8-logs.tgz -C /tmp c8
