#!/usr/bin/env bash
# Twenty-eighth session, call 8: the d64 sweep points (causal 512-4k, non-causal 8k and 16k) with 64-row
# blocks of 128-key tiles among the candidates (bench/suites.go), with the peers.
cd "$(dirname "$0")/.."
mkdir -p $OUT
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048|4096) seq_kv=[0-9]+ dim=64 dim_v=64 causal=true|seq_q=(8192|16384) seq_kv=[0-9]+ dim=64 dim_v=64 causal=false' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee $OUT/c8-summary.txt
for f in tilego.jsonl peers.jsonl table.txt summary.txt; do cp /tmp/sw/$f $OUT/c8-$f; done
cat /tmp/sw/summary.txt; tail -12 /tmp/sw/table.txt | tee -a $OUT/c8-summary.txt
