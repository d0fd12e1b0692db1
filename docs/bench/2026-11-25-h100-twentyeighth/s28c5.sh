#!/usr/bin/env bash
# Twenty-eighth session, call 5: the split kernel with its scores' exponentials two at a time in half
# precision (bin/h2exp.py, a hand edit through TILEGO_SOURCE), against the kernel as emitted (7db900b),
# at s_q 1 kv8k and s_q 2 kv4k, three rounds back to back; round 1 checked against float64.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for i in 1 2 3; do
for pt in "--batch 64 --mean-kv 8192" "--batch 128 --mean-kv 8192" "--batch 64 --mean-kv 4096 --seq-q 2" "--batch 128 --mean-kv 4096 --seq-q 2"; do
for v in base h2; do
  [ $(( $(date +%s) - T0 )) -gt 400 ] && break 3
  f=sq1; case "$pt" in *seq-q*) f=sq2 ;; esac
  TILEGO_SOURCE=mla_decode=bin/$f-$v.cu timeout 60 ./bin/tilego run mla-decode $pt --heads 128 --splits 0 --repeats 30 --json --check=$([ $i = 1 ] && echo true || echo false) > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json')); print('%-40s %-5s ms %.4f ok %s %s' % ('$pt', '$v', r['time_ms'], r.get('ok'), {k: v for k, v in r.items() if 'err' in k}))" 2>&1 | tee -a $S || echo "$v failed: $(tail -2 /tmp/r.err)" | tee -a $S
done; done; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
