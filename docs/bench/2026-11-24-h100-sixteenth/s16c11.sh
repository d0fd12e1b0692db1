#!/usr/bin/env bash
# Sixteenth session, call 11: the d256 sweep with its peers (walks with 16-byte stores in the list), the bench package's GPU tests, the persistent/cluster tests.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c11-summary.txt
OUT=/tmp/c11 TESTS=0 SUITES=fa-sweep SHAPE='dim=256 ' timeout 250 bash scripts/gpu-suite.sh run > /tmp/c11-suite.log 2>&1
echo "d256 sweep with peers: exit $?" | tee -a $S
cp /tmp/c11/table.txt $OUT/c11-table.txt; cp /tmp/c11/table.md $OUT/c11-table.md; cp /tmp/c11/tilego.jsonl $OUT/c11-tilego.jsonl; cp /tmp/c11/peers.jsonl $OUT/c11-peers.jsonl
cat /tmp/c11/table.txt
t0=$(date +%s)
timeout 150 ./bin/bench.test -test.v > /tmp/t-b.log 2>&1
echo "bench: exit $? $(grep -c -- '--- PASS' /tmp/t-b.log) pass $(grep -c -- '--- FAIL' /tmp/t-b.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-b.log | tail -1)" | tee -a $S
t0=$(date +%s)
timeout 140 ./bin/cuda_backend.test -test.v -test.run '^(TestGPUPersistent|TestGPUCluster)$' > /tmp/t-g.log 2>&1
echo "persistent/cluster: exit $? $(grep -c -- '--- PASS' /tmp/t-g.log) pass $(grep -c -- '--- FAIL' /tmp/t-g.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/t-g.log | tail -1)" | tee -a $S
