#!/usr/bin/env bash
# Twenty-ninth session, call 5 (H200, tree f421269): MLA's bench pick against clusters of two and the seesaw
# at three points (tilego run, --splits 0, interleaved rounds); d128 16k timed by the bench flushed (l2) and
# not, and by tilego run, alternating.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2"; do
for cf in "" "cluster=2" "seesaw=true stages=1"; do
  timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) ${cf:+--config "$cf"} > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-22s ms %.4f tf %.1f ok %s' % ('$pt', '$cf', r['time_ms'], r['tflops'], r.get('ok')))" 2>&1 | tee -a $S || echo "$pt $cf failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done
echo "round $i at $(( $(date +%s) - T0 )) s" | tee -a $S
done
B="flash-attention --batch 1 --heads 16 --seq-q 16384 --dim 128 --layout bshd"
for i in 1 2; do
for fl in l2 none; do
  timeout 100 ./bin/tilego bench --suite fa-sweep --shape 'seq_q=16384 seq_kv=16384 dim=128 dim_v=128 causal=false' --match 'n=176 stages=2 threads=256 ws=true pingpong=true overlap=true$' --flush $fl --out /tmp/b.jsonl 2>/tmp/b.err
  python3 -c "
import json
for l in open('/tmp/b.jsonl'):
  r=json.loads(l); print('d128 16k bench flush=$fl %-12s %.1f TFLOP/s' % (r['impl'], r['tflops']))" | tee -a $S
done
timeout 60 ./bin/tilego run $B --splits 1 --repeats 30 --json --check=false --config "m=128 n=176 stages=2 threads=256 ws overlap pingpong persistent=false" > /tmp/r.json 2>/tmp/r.err
python3 -c "import json; r=json.load(open('/tmp/r.json')); print('d128 16k run %.1f TFLOP/s' % r['tflops'])" | tee -a $S
done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
