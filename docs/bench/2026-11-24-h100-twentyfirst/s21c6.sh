#!/usr/bin/env bash
# Twenty-first session, call 6: calls 4-5 had single runs of one program 6% apart (the SM clock), too noisy for the tail split's 1-3%. Paired A/B: eight rounds, each the single program then --splits 7 back to back, at d128 16k, d256 16k, d128 8k; the median of the eight paired ratios.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
r() { local tag=$1; shift; ./bin/tilego run flash-attention --layout bshd --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json,sys
r=json.load(open('/tmp/r.json')); s=r['shape']
print('%-16s ms %.4f TF %.1f ok %s %s' % ('$tag', r['time_ms'], r['tflops'], r['ok'], r.get('split_note','')[:70]))
" 2>&1 | tee -a $S || (echo "$tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
C128="m=128 n=176 stages=2 threads=256 ws pingpong overlap"
C256="m=128 n=80 stages=2 threads=256 ws overlap"
for i in 1 2 3 4 5 6 7 8; do
  for n in 1 7; do r d128-16k-s$n --batch 1 --heads 16 --seq-q 16384 --dim 128 --config "$C128" --splits $n --sms 132; done
  for n in 1 7; do r d256-16k-s$n --batch 1 --heads 8 --seq-q 16384 --dim 256 --config "$C256" --splits $n --sms 132; done
  for n in 1 7; do r d128-8k-s$n --batch 2 --heads 16 --seq-q 8192 --dim 128 --config "$C128" --splits $n --sms 132; done
done
echo "--- paired"
python3 - $S <<'PY'
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\S+)-s(\d+)\s+ms ([\d.]+) TF ([\d.]+)',l)
    if m: d.setdefault((m[1],int(m[2])),[]).append(float(m[4]))
for p in sorted({k[0] for k in d}):
    a,b=d[(p,1)],d[(p,7)]
    rs=[y/x for x,y in zip(a,b)]
    print(p, 's1 median %.1f (%.1f-%.1f)' % (st.median(a),min(a),max(a)), 's7 median %.1f (%.1f-%.1f)' % (st.median(b),min(b),max(b)), 'paired s7/s1 median %.3f min %.3f max %.3f faster %d/%d' % (st.median(rs),min(rs),max(rs),sum(x>1 for x in rs),len(rs)))
PY
