#!/usr/bin/env bash
# Nineteenth session, call 17: the sweep's 512-2k points with peers, tilego timed as the peers are (L2 flushed before every launch, the bench's new default), again (a second sample of the same points, main as of the end of the session).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c17-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c17 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) ' timeout 540 bash scripts/gpu-suite.sh run > /tmp/c17-suite.log 2>&1
echo "512-2k sweep with peers: exit $?" | tee -a $S
cp /tmp/c17/table.txt $OUT/c17-table.txt; cp /tmp/c17/tilego.jsonl $OUT/c17-tilego.jsonl; cp /tmp/c17/peers.jsonl $OUT/c17-peers.jsonl
grep -v '^$' /tmp/c17/table.txt | tail -25
