#!/usr/bin/env bash
# Nineteenth session, call 13: compute-sanitizer memcheck, racecheck and synccheck on the persistent causal walk whose last round is packed (TestGPUPersistent tail_causal_d128: 160 pairs on 132 SMs), the configs the SAN=1 suite takes.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c13-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
sel='^TestGPUPersistent$/^sm_90a$/^tail_causal_d128$/^(ws_ovpp|ws_pf|noprod|ws_direct|ws_ovpp_direct)$'
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s)
  timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$sel" > /tmp/san-$tool.log 2>&1
  echo "$tool: exit $?, $(grep -c -- '--- PASS' /tmp/san-$tool.log) passed, $(grep -c -- '--- FAIL' /tmp/san-$tool.log) failed ($(( $(date +%s) - t0 )) s); $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log)" | tee -a $S
done
