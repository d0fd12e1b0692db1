#!/usr/bin/env bash
# Twenty-first session, call 12: issue 6's numbers on today's code (MLA's programs are byte-identical to the eighteenth session's): the mla suite at the bench's two pick configs (warpgroup roles, with and without the hand-off; 'ws=true splitn=true roles=true'), split path and single program, L2 flushed before every launch, and the copy bandwidth and cuBLAS peak in the same call.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c12-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c12-peak.jsonl 2>/tmp/c12-peak.err; echo "peak: exit $?" | tee -a $S
timeout 420 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c12-mla.jsonl 2>/tmp/c12-bench.err; echo "mla: exit $? ($(wc -l < $OUT/c12-mla.jsonl) records)" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c12-peak.jsonl 2>>/tmp/c12-peak.err; echo "peak again: exit $?" | tee -a $S
python3 scripts/table.py $OUT/c12-mla.jsonl $OUT/c12-peak.jsonl | tee -a $S
