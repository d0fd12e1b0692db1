#!/usr/bin/env bash
# Twenty-second session, call 7: the drawn walk at d128 non-causal 512, 1k and 2k (the library pick), paired with the dealt walk back to back, four rounds (call 6: 1.011x at 512).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c7-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
r() { local d=$1 tag=$2; shift 2
  TILEGO_DRAW=$d ./bin/tilego run flash-attention --layout bshd --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('draw=%s %-16s ms %.4f TF %.1f ok %s' % ('$d', '$tag', r['time_ms'], r.get('tflops',0), r['ok']))
" 2>&1 | tee -a $S || (echo "draw=$d $tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
for i in 1 2 3 4; do for d in 0 1; do
  r $d d128-512 --batch 32 --heads 16 --seq-q 512 --dim 128
  r $d d128-1k --batch 16 --heads 16 --seq-q 1024 --dim 128
  r $d d128-2k --batch 8 --heads 16 --seq-q 2048 --dim 128
done; done
echo "--- paired drawn over dealt" | tee -a $S
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'draw=(\d) (\S+)\s+ms ([\d.]+)',l)
    if m: d.setdefault(m[2],{}).setdefault(m[1],[]).append(float(m[3]))
for k,v in d.items():
    rs=[a/b for a,b in zip(v['0'],v.get('1',[]))]
    if rs: print('%-14s dealt ms %.4f drawn ms %.4f  drawn/dealt speed median %.3f (%.3f-%.3f) faster %d/%d' % (k, st.median(v['0']), st.median(v['1']), st.median(rs), min(rs), max(rs), sum(x>1 for x in rs), len(rs)))
PY
