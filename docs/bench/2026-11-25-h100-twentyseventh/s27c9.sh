#!/usr/bin/env bash
# Twenty-seventh session, call 9: the mla suite at the bench's picks (rotated inputs) with the hand-offs on
# mbarriers; the copy and cuBLAS before and after, the plain-PyTorch MLA peer; then the bench package's GPU test.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c9-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c9-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 400 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c9-mla.jsonl 2>/tmp/bench.err; echo "mla: exit $? ($(wc -l < $OUT/c9-mla.jsonl) records)" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c9-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
if [ $(( $(date +%s) - T0 )) -lt 420 ]; then
  timeout 120 python3 scripts/peers.py --suite mla > $OUT/c9-torch.jsonl 2>/tmp/t.err; echo "torch mla: exit $?" | tee -a $S
fi
python3 scripts/table.py $OUT/c9-mla.jsonl $OUT/c9-peak.jsonl $OUT/c9-torch.jsonl 2>&1 | tee -a $S
if [ $(( $(date +%s) - T0 )) -lt 500 ]; then
  timeout 80 ./bin/bench.test -test.v > /tmp/bench-test.log 2>&1; echo "bench.test: exit $?, $(grep -c -- '--- PASS' /tmp/bench-test.log) passed, $(grep -c -- '--- FAIL' /tmp/bench-test.log) failed" | tee -a $S
fi
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
