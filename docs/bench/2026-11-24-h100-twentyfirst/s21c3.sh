#!/usr/bin/env bash
# Twenty-first session, call 3: the sweep from 4k to 16k tokens, GQA/B1H16 and GEMM with peers, on main e487848.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c3 TESTS=0 SUITES=fa-sweep,extra,gemm SHAPE='seq_q=(4096|8192|16384) |m=8192 n=8192' timeout 560 bash scripts/gpu-suite.sh run > /tmp/c3-suite.log 2>&1
echo "4k-16k sweep, extra, gemm with peers: exit $?" | tee -a $S
cp /tmp/c3/table.txt $OUT/c3-table.txt; cp /tmp/c3/tilego.jsonl $OUT/c3-tilego.jsonl; cp /tmp/c3/peers.jsonl $OUT/c3-peers.jsonl
grep -v '^$' /tmp/c3/table.txt | tail -25
