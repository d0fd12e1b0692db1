#!/usr/bin/env bash
# Twenty-third session, call 6: the final tree (the late start of a dealt walk's blocks that run a tile fewer, tl's LateStart; the walks'
# query tiles loaded evict-first): GPU tests of FlashAttention (plain, large, row scale, split, tail; deferred, cluster; persistent), three
# processes at once; then the sweep's 512 and 1k points of every head dim with the peers (fa-sweep, SHAPE 'seq_q=(512|1024) ').
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); TILEGO_CACHE=/tmp/cache-$name timeout $to "$@" > /tmp/c6-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' /tmp/c6-$name.log) pass $(grep -c -- '--- FAIL' /tmp/c6-$name.log) fail $(grep -c -- '--- SKIP' /tmp/c6-$name.log) skip ($(( $(date +%s) - t0 )) s); last: $(grep -- '=== RUN' /tmp/c6-$name.log | tail -1)" >> $S
  grep -B2 -A8 -- '--- FAIL' /tmp/c6-$name.log | head -30 >> $S; }
t fa 230 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttention|TestGPUFlashAttentionLarge|TestGPURowScale|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail)$' &
t defcl 230 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUDeferred|TestGPUCluster)$' &
t pers 230 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUPersistent)$' &
wait
cat $S
tar czf $OUT/c6-tests.tgz -C /tmp c6-fa.log c6-defcl.log c6-pers.log
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024) ' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee -a $S
cp /tmp/sw/tilego.jsonl $OUT/c6-tilego.jsonl; cp /tmp/sw/peers.jsonl $OUT/c6-peers.jsonl; cp /tmp/sw/table.txt $OUT/c6-table.txt
cat /tmp/sw/summary.txt >> $S
tail -30 /tmp/sw/table.txt
