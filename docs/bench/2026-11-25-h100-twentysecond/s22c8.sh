#!/usr/bin/env bash
# Twenty-second session, call 8: the sweep's d128 points at 512-2k tokens with the peers, now that the bench also tries the drawn walk there (non-causal) and the library's pick draws at 512 keys.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c8-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) .* dim=128 ' bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $?" | tee -a $S
cp /tmp/sw/tilego.jsonl $OUT/c8-tilego.jsonl; cp /tmp/sw/peers.jsonl $OUT/c8-peers.jsonl; cp /tmp/sw/table.txt $OUT/c8-table.txt
cat /tmp/sw/summary.txt >> $S
tail -20 /tmp/sw/table.txt
