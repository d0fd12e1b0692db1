#!/usr/bin/env bash
# Twenty-second session, call 4: the final tree (the kept maximum and the skipped rescale at head dim 256 and in MLA, tl's ScaleRows): GPU tests of FlashAttention (plain, large, deferred, cluster, persistent, split, tail) and MLA, four processes at once; then the sweep's head dim 256 points with the peers (fa-sweep, SHAPE ' dim=256 ').
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
t() { local name=$1 to=$2; shift 2; local t0=$(date +%s); TILEGO_CACHE=/tmp/cache-$name timeout $to "$@" > /tmp/c4-$name.log 2>&1; local rc=$?
  echo "$name: exit $rc $(grep -c -- '--- PASS' /tmp/c4-$name.log) pass $(grep -c -- '--- FAIL' /tmp/c4-$name.log) fail $(grep -c -- '--- SKIP' /tmp/c4-$name.log) skip ($(( $(date +%s) - t0 )) s); last: $(grep -- '=== RUN' /tmp/c4-$name.log | tail -1)" >> $S
  grep -B2 -A8 -- '--- FAIL' /tmp/c4-$name.log | head -30 >> $S; }
t fa 260 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUFlashAttention|TestGPUFlashAttentionLarge|TestGPURowScale|TestGPUFlashAttentionSplit|TestGPUFlashAttentionTail)$' &
t mla 260 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' &
t defcl 260 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUDeferred|TestGPUCluster)$' &
t pers 260 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUPersistent)$' &
wait
cat $S
tar czf $OUT/c4-tests.tgz -C /tmp c4-fa.log c4-mla.log c4-defcl.log c4-pers.log
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep SHAPE=' dim=256 ' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee -a $S
cp /tmp/sw/tilego.jsonl $OUT/c4-tilego.jsonl; cp /tmp/sw/peers.jsonl $OUT/c4-peers.jsonl; cp /tmp/sw/table.txt $OUT/c4-table.txt
cat /tmp/sw/summary.txt >> $S
tail -40 /tmp/sw/table.txt
