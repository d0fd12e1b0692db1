#!/usr/bin/env bash
# Eighteenth session, call 4: the sweep's 512-2k points with peers, tilego timed as the peers are (L2 flushed before every launch, the bench's new default); tilego run's back-to-back timing (Launch.Time no longer waits between launches) at d128 512.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2; do ./bin/tilego run flash-attention --batch 32 --heads 16 --seq-q 512 --dim 128 --layout bshd --config "m=128 n=128 stages=2 threads=256 ws=true pingpong=true overlap=true persistent=true" --repeats 100 2>&1 | grep -E "time|speed" | tr '\n' ' ' | sed 's/^/run d128 512 (back to back): /' | tee -a $S; echo | tee -a $S; done
OUT=/tmp/c4 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) ' timeout 540 bash scripts/gpu-suite.sh run > /tmp/c4-suite.log 2>&1
echo "512-2k sweep with peers: exit $?" | tee -a $S
cp /tmp/c4/table.txt $OUT/c4-table.txt; cp /tmp/c4/tilego.jsonl $OUT/c4-tilego.jsonl; cp /tmp/c4/peers.jsonl $OUT/c4-peers.jsonl
grep -v '^$' /tmp/c4/table.txt | tail -25
