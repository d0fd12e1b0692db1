#!/usr/bin/env bash
# Twenty-fourth session, call 10: the final tree's sweep at 512-2k tokens (every head dim, causal and not) and GEMM 8192³, with the peers.
cd "$(dirname "$0")/.."
mkdir -p $OUT
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep,gemm SHAPE='seq_q=(512|1024|2048) |m=8192' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?"
for f in tilego.jsonl peers.jsonl table.txt summary.txt; do cp /tmp/sw/$f $OUT/c10-$f; done
cat /tmp/sw/summary.txt; tail -32 /tmp/sw/table.txt
