#!/usr/bin/env bash
# Nineteenth session, call 6: the sweep from 4k to 16k tokens, GQA/B1H16 and GEMM with peers (tilego's launches L2-flushed as the peers'), on main 754912b.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c6 TESTS=0 SUITES=fa-sweep,extra,gemm SHAPE='seq_q=(4096|8192|16384) |m=8192 n=8192' timeout 330 bash scripts/gpu-suite.sh run > /tmp/c6-suite.log 2>&1
echo "4k-16k sweep, extra, gemm with peers: exit $?" | tee -a $S
cp /tmp/c6/table.txt $OUT/c6-table.txt; cp /tmp/c6/tilego.jsonl $OUT/c6-tilego.jsonl; cp /tmp/c6/peers.jsonl $OUT/c6-peers.jsonl
grep -v '^$' /tmp/c6/table.txt | tail -25
