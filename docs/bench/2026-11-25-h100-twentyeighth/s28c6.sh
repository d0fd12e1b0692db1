#!/usr/bin/env bash
# Twenty-eighth session, call 6 (FlashAttention unchanged since the twenty-fifth session): issue 4's sweep
# points that were below 1.0x cuDNN in the twenty-fourth session's runs, with the peers (fa-sweep, SHAPE below).
cd "$(dirname "$0")/.."
mkdir -p $OUT
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep SHAPE='seq_q=1024 seq_kv=1024 dim=64 dim_v=64 causal=true|seq_q=512 seq_kv=512 dim=256 dim_v=256 |seq_q=8192 seq_kv=8192 dim=64 dim_v=64 causal=false|seq_q=16384 seq_kv=16384 dim=128 dim_v=128 causal=false|seq_q=4096 seq_kv=4096 dim=256 dim_v=256 causal=false' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee $OUT/c6-summary.txt
for f in tilego.jsonl peers.jsonl table.txt summary.txt; do cp /tmp/sw/$f $OUT/c6-$f; done
cat /tmp/sw/summary.txt; tail -12 /tmp/sw/table.txt | tee -a $OUT/c6-summary.txt
