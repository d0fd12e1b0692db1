#!/usr/bin/env bash
# Twenty-first session, call 9: the tail split's waves now count two blocks an SM at head dim 64 (kernels.attnPerSM), so its d64 programs' whole/piece boundary moved: the GPU tests of the split paths (the d64 case now 67 heads, a wave of 264 and a tail of 4) and the bench package's.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c9-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); timeout $to "$@" > $OUT/c9-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' $OUT/c9-$name.log) pass $(grep -c -- '--- FAIL' $OUT/c9-$name.log) fail ($(( $(date +%s) - t0 )) s)" | tee -a $S
  grep -B2 -A6 -- '--- FAIL' $OUT/c9-$name.log | head -20 | tee -a $S; }
t tail 200 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttentionTail|TestGPUFlashAttentionSplit)$' &
t bench 200 ./bin/bench.test -test.v &
wait
gzip -f $OUT/c9-*.log
