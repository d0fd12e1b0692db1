#!/usr/bin/env bash
# Twenty-first session, call 8: more pairs at d128 16k (the single program, then --splits 0, which now cuts the last wave's 68 blocks in 7), eight rounds back to back as in call 6; then the fa-tail suite on the new model (its split counts: one-wave grids as before, 34 heads × 4 causal over 8k now 31 pieces).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c8-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
r() { local tag=$1; shift; ./bin/tilego run flash-attention --layout bshd --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json,sys
r=json.load(open('/tmp/r.json')); s=r['shape']
print('%-16s ms %.4f TF %.1f ok %s splits %s %s' % ('$tag', r['time_ms'], r['tflops'], r['ok'], s.get('splits'), r.get('split_note','')[:70]))
" 2>&1 | tee -a $S || (echo "$tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
C128="m=128 n=176 stages=2 threads=256 ws pingpong overlap"
for i in 1 2 3 4 5 6 7 8; do
  r d128-16k-s1 --batch 1 --heads 16 --seq-q 16384 --dim 128 --config "$C128" --splits 1
  r d128-16k-s0 --batch 1 --heads 16 --seq-q 16384 --dim 128 --config "$C128" --splits 0 --sms 132
done
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\S+)-s(\d+)\s+ms ([\d.]+) TF ([\d.]+)',l)
    if m: d.setdefault(int(m[2]),[]).append(float(m[4]))
a,b=d[1],d[0]; rs=[y/x for x,y in zip(a,b)]
print('s1 median %.1f (%.1f-%.1f)' % (st.median(a),min(a),max(a)), 'model split median %.1f (%.1f-%.1f)' % (st.median(b),min(b),max(b)), 'paired median %.3f min %.3f max %.3f faster %d/%d' % (st.median(rs),min(rs),max(rs),sum(x>1 for x in rs),len(rs)))
PY
./bin/tilego bench --suite fa-tail --out $OUT/c8-tail.jsonl 2>/tmp/c8-tail.err; echo "fa-tail: exit $?" | tee -a $S
python3 scripts/table.py $OUT/c8-tail.jsonl | tee -a $S
