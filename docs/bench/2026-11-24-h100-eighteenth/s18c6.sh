#!/usr/bin/env bash
# Eighteenth session, call 6: the MLA suite with its peers, tilego's launches L2-flushed as the peers' (the bench's new default); the bench package's GPU tests.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c6 TESTS=0 SUITES=mla timeout 400 bash scripts/gpu-suite.sh run > /tmp/c6-suite.log 2>&1
echo "mla suite with peers: exit $?" | tee -a $S
cp /tmp/c6/table.txt $OUT/c6-table.txt; cp /tmp/c6/tilego.jsonl $OUT/c6-tilego.jsonl; cp /tmp/c6/peers.jsonl $OUT/c6-peers.jsonl
t0=$(date +%s); timeout 170 ./bin/bench.test -test.v > /tmp/bt.log 2>&1
echo "bench tests: exit $? $(grep -c -- '--- PASS' /tmp/bt.log) pass $(grep -c -- '--- FAIL' /tmp/bt.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/bt.log | tail -1)" | tee -a $S
grep -- '--- FAIL' /tmp/bt.log | head | tee -a $S
cat /tmp/c6/table.txt
