#!/usr/bin/env bash
# Twenty-sixth session, call 14: the mla suite at the bench's picks (rotated inputs) with the edge page zeroing only
# the slots past the length, the copy and cuBLAS before and after.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c14-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c14-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 450 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c14-mla.jsonl 2>/tmp/bench.err; echo "mla: exit $? ($(wc -l < $OUT/c14-mla.jsonl) records)" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c14-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
python3 scripts/table.py $OUT/c14-mla.jsonl $OUT/c14-peak.jsonl | tee -a $S
