#!/usr/bin/env bash
# Nineteenth session, call 5: the sweep's 512-2k points with peers, tilego timed as the peers are (L2 flushed before every launch, the bench's new default), on main 754912b (walk variables, the causal walk's packed last round).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c5 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) ' timeout 540 bash scripts/gpu-suite.sh run > /tmp/c5-suite.log 2>&1
echo "512-2k sweep with peers: exit $?" | tee -a $S
cp /tmp/c5/table.txt $OUT/c5-table.txt; cp /tmp/c5/tilego.jsonl $OUT/c5-tilego.jsonl; cp /tmp/c5/peers.jsonl $OUT/c5-peers.jsonl
grep -v '^$' /tmp/c5/table.txt | tail -25
