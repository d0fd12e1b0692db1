#!/usr/bin/env bash
# Twenty-first session, call 5: call 4 had the tail split with 3 pieces 5-9% above the single program at 16k (d128, d256), more than the partial last wave costs (1-3%). Interleaved A/B, three rounds: single, --splits 3, 7 at 16k, and single against 3 at 4k and 8k (batch·seq = 16k as the sweep).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
r() { local tag=$1; shift; ./bin/tilego run flash-attention --layout bshd --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json,sys
r=json.load(open('/tmp/r.json')); s=r['shape']
print('%-16s ms %.4f TF %.1f ok %s %s' % ('$tag', r['time_ms'], r['tflops'], r['ok'], r.get('split_note','')[:70]))
" 2>&1 | tee -a $S || (echo "$tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
C128="m=128 n=176 stages=2 threads=256 ws pingpong overlap"
C256="m=128 n=80 stages=2 threads=256 ws overlap"
for i in 1 2 3; do
  for n in 1 3 7; do
    r d128-16k-s$n --batch 1 --heads 16 --seq-q 16384 --dim 128 --config "$C128" --splits $n --sms 132
    r d256-16k-s$n --batch 1 --heads 8 --seq-q 16384 --dim 256 --config "$C256" --splits $n --sms 132
  done
done
for i in 1 2; do
  for n in 1 3; do
    r d128-8k-s$n --batch 2 --heads 16 --seq-q 8192 --dim 128 --config "$C128" --splits $n --sms 132
    r d256-8k-s$n --batch 2 --heads 8 --seq-q 8192 --dim 256 --config "$C256" --splits $n --sms 132
    r d128-4k-s$n --batch 4 --heads 16 --seq-q 4096 --dim 128 --config "$C128" --splits $n --sms 132
    r d256-4k-s$n --batch 4 --heads 8 --seq-q 4096 --dim 256 --config "$C256" --splits $n --sms 132
  done
done
echo "--- medians"
python3 - $S <<'PY'
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\S+)-s(\d+)\s+ms ([\d.]+) TF ([\d.]+)',l)
    if m: d.setdefault((m[1],int(m[2])),[]).append(float(m[4]))
for k in sorted(d): print(k[0], 's%d'%k[1], 'TF median %.1f' % st.median(d[k]), 'n', len(d[k]), 'vs s1 %.3f' % (st.median(d[k])/st.median(d[(k[0],1)])) if (k[0],1) in d else '')
PY
