#!/usr/bin/env bash
# Twenty-fourth session, call 18: the causal grid's group of heads (longestFirst; TILEGO_XGROUP=N heads, a trial) at d64 causal 512 and 1k (64-row blocks, four an SM), N 4-64 against the default (8 at 1k, 16 at 512). Back to back, 3 rounds; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c18-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
G="--batch 32 --heads 32 --seq-q 512 --seq-kv 512 --dim 64 --causal"; H="--batch 16 --heads 32 --seq-q 1024 --seq-kv 1024 --dim 64 --causal"
CG="m=64 n=64 stages=2 threads=128"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  timeout 120 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-12s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
for i in 1 2 3; do
  chk=false; [ $i = 1 ] && chk=true
  r g base $chk "$CG" $G; for k in 4 8 32 64; do TILEGO_XGROUP=$k r g g$k $chk "$CG" $G; done
  r h base $chk "$CG" $H; for k in 4 16 32 64; do TILEGO_XGROUP=$k r h g$k $chk "$CG" $H; done
done
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\w+)\s+(\w+)\s+ms ([\d.]+)',l)
    if m: d.setdefault(m[1],{}).setdefault(m[2],[]).append(float(m[3]))
for tag,v in d.items():
    b=st.median(v['base'])
    print(tag, ' '.join('%s %.4f (%.3f)' % (k, st.median(x), st.median(x)/b) for k,x in v.items()))
PY
