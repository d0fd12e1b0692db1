#!/usr/bin/env bash
# Twenty-ninth session, call 7 (H200, tree f421269): the TMA/warp-specialized/persistent/cluster GPU tests,
# the autotune and bench packages' GPU tests, then compute-sanitizer on the MLA cases as time allows.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c7-summary.txt; T0=$(date +%s)
timeout 360 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$' > $OUT/c7-tma.log 2>&1
echo "tma/ws/deferred/persistent/cluster: exit $?, $(grep -c -- '--- PASS' $OUT/c7-tma.log) passed, $(grep -c -- '--- FAIL' $OUT/c7-tma.log) failed, at $(( $(date +%s) - T0 )) s" | tee -a $S
grep -- '--- FAIL' $OUT/c7-tma.log | head | tee -a $S
for t in autotune bench; do
  timeout 100 ./bin/$t.test -test.v > $OUT/c7-$t.log 2>&1
  echo "$t: exit $?, $(grep -c -- '--- PASS' $OUT/c7-$t.log) passed, $(grep -c -- '--- FAIL' $OUT/c7-$t.log) failed, at $(( $(date +%s) - T0 )) s" | tee -a $S
done
mla='^TestGPUMLADecode$/^sm_90a/(sq1_m16|split_sched_hq128_splitn_ws|split_sched_hq128_handoff|split_3parts_hq128_handoff|hq128_handoff_long|split_sched_hq32_padded_splitn_ws|split_uniform3_sq2_f16_handoff|split_sched_hq64_splitn_merge)$'
for tool in memcheck synccheck racecheck; do
  [ $(( $(date +%s) - T0 )) -gt 400 ] && break
  timeout $(( 470 - $(date +%s) + T0 )) compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$mla" > /tmp/san-$tool.log 2>&1
  echo "compute-sanitizer $tool, MLA: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log | sed 's/=* *//')) at $(( $(date +%s) - T0 )) s" | tee -a $S
done
gzip $OUT/c7-*.log
cat $S
