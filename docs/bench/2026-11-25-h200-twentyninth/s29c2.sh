#!/usr/bin/env bash
# Twenty-ninth session, call 2 (tree f421269, on an H200): the sweep at 512-2k tokens and GEMM 8192^3, with the peers.
cd "$(dirname "$0")/.."
mkdir -p $OUT; T0=$(date +%s)
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep,gemm SHAPE='seq_q=(512|1024|2048) |m=8192' timeout 580 bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $? in $(( $(date +%s) - T0 )) s" | tee $OUT/c2-summary.txt
for f in tilego.jsonl peers.jsonl table.txt summary.txt logs.tgz; do cp /tmp/sw/$f $OUT/c2-$f; done
cat /tmp/sw/summary.txt; tail -40 /tmp/sw/table.txt | tee -a $OUT/c2-summary.txt
