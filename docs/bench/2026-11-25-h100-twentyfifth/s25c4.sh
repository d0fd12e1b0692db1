#!/usr/bin/env bash
# Twenty-fifth session, call 4: MLA's hand-offs with warpgroup 1 meeting its own barrier on the edge page as warpgroup 0 does (target/cuda/mirror.go): racecheck, memcheck and synccheck on MLA's small set, all of TestGPUMLADecode, and the split path's time against f3d3294 (bin/tilego-ab) at b64 h_q 128 kv8k, back to back, four rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT /tmp/c4; S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge)$'
for tool in racecheck memcheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$mla" > /tmp/c4/$tool-mla.log 2>&1
  echo "$tool MLA: exit $?, $(grep -c -- '--- PASS' /tmp/c4/$tool-mla.log) passed; $(grep -m1 -E 'RACECHECK SUMMARY|ERROR SUMMARY' /tmp/c4/$tool-mla.log)" | tee -a $S
done
timeout 300 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' > /tmp/c4/mla-tests.log 2>&1
echo "TestGPUMLADecode: exit $?, $(grep -c -- '    --- PASS' /tmp/c4/mla-tests.log) passed, $(grep -c -- '--- FAIL' /tmp/c4/mla-tests.log) failed" | tee -a $S
for i in 1 2 3 4; do for b in tilego tilego-ab; do
  timeout 60 ./bin/$b run mla-decode --batch 64 --heads 128 --mean-kv 8192 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-10s ms %.4f ok %s' % ('$b', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "$b failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done
tar czf $OUT/c4-logs.tgz -C /tmp c4
