#!/usr/bin/env bash
# Thirtieth session, call 5 (H200): the tail split against the single program at d128 16k and GQA d128 8k
# (tilego run, unflushed, the same config both sides, pingpong off and on), in alternating pairs; the fa-tail
# suite; MLA's memory-bound points (h_q 16-64) with the copy bandwidth.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; T0=$(date +%s); S=$OUT/c5-summary.txt
C="m=128 n=176 stages=2 threads=256 ws=true overlap=true prefetch=false direct=false persistent=false"
for i in 1 2 3 4 5 6 7 8; do
for pt in "--batch 1 --heads 16 --seq-q 16384" "--batch 2 --heads 32 --heads-kv 8 --seq-q 8192"; do
for pp in false true; do
for sp in 1 0; do
  timeout 60 ./bin/tilego run flash-attention $pt --dim 128 --layout bshd --splits $sp --repeats 60 --json --check=$([ $i = 1 ] && echo true || echo false) --config "$C pingpong=$pp" > /tmp/r.json 2>/tmp/r.err
  python3 -c "import json; r=json.load(open('/tmp/r.json')); print('%-48s pp=%-5s splits=%s ms %.4f tf %.1f ok %s' % ('$pt', '$pp', '$sp', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "$pt $pp $sp failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "round $i at $(( $(date +%s) - T0 )) s $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)" | tee -a $S
done
timeout 120 ./bin/tilego bench --suite fa-tail --out $OUT/c5-fa-tail.jsonl 2>/tmp/tail.err; echo "fa-tail: exit $?" | tee -a $S
python3 scripts/table.py $OUT/c5-fa-tail.jsonl | tee -a $S
python3 scripts/peers.py --suite peak > /tmp/peak.jsonl 2>/dev/null
timeout 150 ./bin/tilego bench --suite mla --match 'ws=true splitn=true roles=true' --shape 'heads=(16|32|64) ' --out $OUT/c5-mla.jsonl 2>/tmp/mla.err; echo "mla: exit $?" | tee -a $S
python3 scripts/peers.py --suite peak >> /tmp/peak.jsonl 2>/dev/null; cp /tmp/peak.jsonl $OUT/c5-peak.jsonl
python3 scripts/table.py $OUT/c5-mla.jsonl $OUT/c5-peak.jsonl | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
