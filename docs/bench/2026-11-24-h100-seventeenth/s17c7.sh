#!/usr/bin/env bash
# Seventeenth session, call 7: the GPU tests on the final code (cuda_backend, the guarded TMA/deferred/persistent/cluster group, bench),
# compute-sanitizer memcheck/racecheck/synccheck on the small FlashAttention set (persistent walks with the early release included).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c7-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
run() { # name timeout args...
  n=$1; to=$2; shift 2; t0=$(date +%s)
  timeout $to "$@" > /tmp/t-$n.log 2>&1
  echo "$n: exit $? $(grep -c -- '--- PASS' /tmp/t-$n.log) pass $(grep -c -- '--- FAIL' /tmp/t-$n.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-$n.log | tail -1)" | tee -a $S
  grep -- '--- FAIL' /tmp/t-$n.log | head -5 | tee -a $S
}
run cuda_backend 150 ./bin/cuda_backend.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$'
run guarded 260 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$'
small='^(TestGPUFlashAttention|TestGPUGemm|TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$/^(sm_90a?|wstrue|pingpong|gemm_ws|short_kv)$/^(mha_cfg0|mha_cfg4|mha_cfg5|causal_sq<skv_cfg0|77x130x40_tafalse_tbtrue_bf16_cfg0|200x136x96_tafalse_tbfalse_bf16|san_d64|ws_ov)$/^(ws_ovpp|ws_pf|noprod|ws_direct|ws_ovpp_direct)$'
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s)
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 ./bin/cuda_backend.test -test.v -test.run "$small" > /tmp/san-$tool.log 2>&1
  echo "sanitizer $tool: exit $? $(grep -c -- '--- PASS' /tmp/san-$tool.log) pass ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool.log | sed 's/=* *//')) ($(( $(date +%s) - t0 )) s)" | tee -a $S
done
grep -E -- '--- PASS.*(ws_ovpp_direct|ws_ovpp)' /tmp/san-racecheck.log | head -3 | tee -a $S
run bench 150 ./bin/bench.test -test.v
