#!/usr/bin/env bash
# Twenty-second session, call 9: compute-sanitizer memcheck, synccheck and racecheck on programs with the kept maximum and the warp vote before the rescale: the d256 persistent walks the library picks (TestGPUPersistent mha_d256 ws_ov_direct, ws_ovpp_direct) and MLA's split path with warpgroup roles (split_sched_hq128_splitn_ws; memcheck and synccheck also on the hand-off kernel, whose racecheck reports are the known false hazards of scripts/racecheck_named_barrier.cu).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=120
mkdir -p $OUT; S=$OUT/c9-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
fa='^TestGPUPersistent$/^sm_90a$/^mha_d256$/^(ws_ov_direct|ws_ovpp_direct)$'
mla='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_splitn_ws|split_sched_hq128_handoff)$'
mlarc='^TestGPUMLADecode$/^sm_90a/(split_sched_hq128_splitn_ws)$'
s() { local name=$1 tool=$2 re=$3; local t0=$(date +%s)
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$re" > /tmp/san-$name-$tool.log 2>&1; local rc=$?
  echo "$name $tool: exit $rc, $(grep -c -- '--- PASS' /tmp/san-$name-$tool.log) passed, $(grep -c -- '--- FAIL' /tmp/san-$name-$tool.log) failed ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$name-$tool.log | sed 's/=* *//')) $(( $(date +%s) - t0 )) s" | tee -a $S; }
s fa memcheck "$fa"; s mla memcheck "$mla"
s fa synccheck "$fa"; s mla synccheck "$mla"
s fa racecheck "$fa"; s mla racecheck "$mlarc"
tar czf $OUT/c9-san-logs.tgz -C /tmp $(cd /tmp && ls san-*.log)
