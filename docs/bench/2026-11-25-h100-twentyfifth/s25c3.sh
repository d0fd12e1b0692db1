#!/usr/bin/env bash
# Twenty-fifth session, call 3: the mla suite at the bench's picks, timed on rotated inputs (the new default), with the copy before and after; then the drawn walks' ticket read by lane 0 (this tree) against f3d3294 (bin/tilego-ab), back to back, four rounds, at d128 causal 512 (drawn by default) and d128 512 non-causal drawn.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
python3 scripts/peers.py --suite peak > $OUT/c3-peak.jsonl 2>/tmp/p.err; echo "peak: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
timeout 450 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --out $OUT/c3-mla.jsonl 2>/tmp/c3-bench.err; echo "mla: exit $? ($(wc -l < $OUT/c3-mla.jsonl) records)" | tee -a $S
python3 scripts/peers.py --suite peak >> $OUT/c3-peak.jsonl 2>/tmp/p.err; echo "peak again: exit $?" | tee -a $S; grep -E "copy|cublas" /tmp/p.err | tee -a $S
python3 scripts/table.py $OUT/c3-mla.jsonl $OUT/c3-peak.jsonl | tee -a $S
r() { local bin=$1 chk=$2; shift 2
  timeout 60 ./bin/$bin run flash-attention --layout bshd --repeats 30 --json --check=$chk "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-10s ms %.4f ok %s' % ('$bin', r['time_ms'], r.get('ok')))" 2>&1 || echo "$bin failed: $(tail -2 /tmp/r.err)"; }
for sh in "--batch 32 --heads 16 --seq-q 512 --dim 128 --causal" "--batch 32 --heads 16 --seq-q 512 --dim 128 --config draw=true"; do
  echo "== $sh" | tee -a $S
  for i in 1 2 3 4; do chk=false; [ $i = 1 ] && chk=true; r tilego $chk $sh | tee -a $S; r tilego-ab $chk $sh | tee -a $S; done
done
