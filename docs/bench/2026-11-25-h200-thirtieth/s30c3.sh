#!/usr/bin/env bash
# Thirtieth session, call 3 (H200, tree with the group rule): the sweep at 4k-16k tokens and the extra points with
# the peers.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader | tee $S
OUT=/tmp/sw TESTS=0 SUITES=fa-sweep,extra SHAPE='seq_q=(4096|8192|16384) ' timeout 450 bash scripts/gpu-suite.sh run > /tmp/sw-run.log 2>&1
echo "sweep run: exit $? in $(( $(date +%s) - T0 )) s" | tee -a $S
for f in tilego.jsonl peers.jsonl table.txt logs.tgz; do cp /tmp/sw/$f $OUT/c3-$f; done
cat /tmp/sw/summary.txt; tail -40 /tmp/sw/table.txt | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
