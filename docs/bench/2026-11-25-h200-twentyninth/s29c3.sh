#!/usr/bin/env bash
# Twenty-ninth session, call 3 (tree f421269, on an H200): the sweep at 4k-16k tokens and the extra points (GQA, B=1 H=16 4k causal), with the peers.
cd "$(dirname "$0")/.."
mkdir -p $OUT; T0=$(date +%s)
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep,extra SHAPE='seq_q=(4096|8192|16384) ' timeout 580 bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $? in $(( $(date +%s) - T0 )) s" | tee $OUT/c3-summary.txt
for f in tilego.jsonl peers.jsonl table.txt summary.txt logs.tgz; do cp /tmp/sw/$f $OUT/c3-$f; done
cat /tmp/sw/summary.txt; tail -40 /tmp/sw/table.txt | tee -a $OUT/c3-summary.txt
