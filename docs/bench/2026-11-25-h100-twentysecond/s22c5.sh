#!/usr/bin/env bash
# Twenty-second session, call 5: issue 6's numbers with the kept maximum and the skipped rescale (MLA's programs now ask for it): the mla suite at the bench's pick configs ('ws=true splitn=true roles=true'), split path and single program, L2 flushed before every launch, with the copy bandwidth and cuBLAS peak before and after in the same call.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c5-peak.jsonl 2>/tmp/c5-peak.err; echo "peak: exit $?" | tee -a $S
timeout 420 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c5-mla.jsonl 2>/tmp/c5-bench.err; echo "mla: exit $? ($(wc -l < $OUT/c5-mla.jsonl) records)" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c5-peak.jsonl 2>>/tmp/c5-peak.err; echo "peak again: exit $?" | tee -a $S
python3 scripts/table.py $OUT/c5-mla.jsonl $OUT/c5-peak.jsonl | tee -a $S
