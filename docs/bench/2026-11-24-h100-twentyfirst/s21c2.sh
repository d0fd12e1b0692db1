#!/usr/bin/env bash
# Twenty-first session, call 2: the sweep's 512-2k points with peers on main e487848 (Spread walks dealt; the nineteenth session's sweep predates them).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c2 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) ' timeout 560 bash scripts/gpu-suite.sh run > /tmp/c2-suite.log 2>&1
echo "512-2k sweep with peers: exit $?" | tee -a $S
cp /tmp/c2/table.txt $OUT/c2-table.txt; cp /tmp/c2/tilego.jsonl $OUT/c2-tilego.jsonl; cp /tmp/c2/peers.jsonl $OUT/c2-peers.jsonl
grep -v '^$' /tmp/c2/table.txt | tail -25
