#!/usr/bin/env bash
# Twenty-fourth session, call 9: drawn causal walks in head order (kernels.headsThenLongest), d128 causal 512 drawing by default: GPU tests of
# FlashAttention (plain, large, row scale, split, tail; deferred, cluster; persistent), three
# processes at once; then the sweep's causal points at 512-2k with the peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c9-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); TILEGO_CACHE=/tmp/cache-$name timeout $to "$@" > /tmp/c9-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' /tmp/c9-$name.log) pass $(grep -c -- '--- FAIL' /tmp/c9-$name.log) fail $(grep -c -- '--- SKIP' /tmp/c9-$name.log) skip ($(( $(date +%s) - t0 )) s); last: $(grep -- '=== RUN' /tmp/c9-$name.log | tail -1)" >> $S
  grep -B2 -A8 -- '--- FAIL' /tmp/c9-$name.log | head -30 >> $S; }
t fa 320 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttention|TestGPUFlashAttentionLarge|TestGPURowScale|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail)$' &
t defcl 320 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUDeferred|TestGPUCluster)$' &
t pers 320 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUPersistent)$' &
wait
cat $S
tar czf $OUT/c9-tests.tgz -C /tmp c9-fa.log c9-defcl.log c9-pers.log
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) .*causal=true' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee -a $S
cp /tmp/sw/tilego.jsonl $OUT/c9-tilego.jsonl; cp /tmp/sw/peers.jsonl $OUT/c9-peers.jsonl; cp /tmp/sw/table.txt $OUT/c9-table.txt
cat /tmp/sw/summary.txt >> $S
tail -30 /tmp/sw/table.txt
