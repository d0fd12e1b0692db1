#!/usr/bin/env bash
# Twenty-eighth session, call 3 (tree 7db900b: a request's only piece writes O and LSE itself): the seesaw
# (FlashMLA's alternating scorer, opt-in) at s_q 2, where the pages are not the bound, against the default,
# two rounds; then the mla suite at the bench's picks (rotated inputs), the copy and cuBLAS before and
# after, the plain-PyTorch MLA peer, and the bench package's GPU test.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2; do
for pt in "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2"; do
for cf in "" "seesaw=true stages=1"; do
  timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) ${cf:+--config "$cf"} > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-22s ms %.4f ok %s' % ('$pt', '$cf', r['time_ms'], r.get('ok')))" 2>&1 | tee -a $S || echo "failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
python3 scripts/peers.py --suite peak > $OUT/c3-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 400 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c3-mla.jsonl 2>/tmp/bench.err; echo "mla: exit $? ($(wc -l < $OUT/c3-mla.jsonl) records)" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c3-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 120 python3 scripts/peers.py --suite mla > $OUT/c3-torch.jsonl 2>/tmp/t.err; echo "torch mla: exit $?" | tee -a $S
python3 scripts/table.py $OUT/c3-mla.jsonl $OUT/c3-peak.jsonl $OUT/c3-torch.jsonl 2>&1 | tee -a $S
if [ $(( $(date +%s) - T0 )) -lt 500 ]; then
  timeout 80 ./bin/bench.test -test.v > /tmp/bench-test.log 2>&1; echo "bench.test: exit $?, $(grep -c -- '--- PASS' /tmp/bench-test.log) passed, $(grep -c -- '--- FAIL' /tmp/bench-test.log) failed" | tee -a $S
fi
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
