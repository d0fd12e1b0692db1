#!/usr/bin/env bash
# Twenty-first session, call 1: the cuda_backend tests the twentieth session's last call did not reach (TestGPUFlashAttention, ...Large, RowScale) and the guarded group (TMA, Deferred, Cluster), on main e487848, four test processes at once (each compiles with NVRTC on its own cache; the kernels are small).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); TILEGO_CACHE=/tmp/cache-$name timeout $to "$@" > $OUT/c1-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' $OUT/c1-$name.log) pass $(grep -c -- '--- FAIL' $OUT/c1-$name.log) fail $(grep -c -- '--- SKIP' $OUT/c1-$name.log) skip ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' $OUT/c1-$name.log | tail -1)" >> $S
  grep -B2 -A6 -- '--- FAIL' $OUT/c1-$name.log | head -30 >> $S; }
t fa 560 ./bin/cuda_backend.test -test.v -test.run '^TestGPUFlashAttention$' &
t large 560 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttentionLarge|TestGPURowScale)$' &
t tma 560 ./bin/cuda_backend.test -test.v -test.run '^TestGPUTMA$' &
t defcl 560 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUDeferred|TestGPUCluster)$' &
wait
cat $S
gzip -f $OUT/c1-*.log
