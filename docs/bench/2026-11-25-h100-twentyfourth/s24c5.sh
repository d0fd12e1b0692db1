#!/usr/bin/env bash
# Twenty-fourth session, call 5: causal walks that draw single tiles, longest first, from a counter (draw; the pairs walk otherwise) at the causal 512 points, against the picks. Back to back, 3 rounds; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
B="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256 --causal"
E="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128 --causal"
G="--batch 32 --heads 32 --seq-q 512 --seq-kv 512 --dim 64 --causal"
declare -A CFG
CFG[b-base]="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
CFG[b-draw]="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent draw"
CFG[b-ovdraw]="m=128 n=64 stages=2 threads=256 ws overlap direct persistent pingpong=false draw"
CFG[e-base]="m=128 n=128 stages=2 threads=256 ws persistent pingpong=false"
CFG[e-draw]="m=128 n=128 stages=2 threads=256 ws persistent pingpong=false draw"
CFG[e-ppov]="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
CFG[e-ppovdraw]="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent draw"
CFG[e-ppovdirdraw]="m=128 n=128 stages=2 threads=256 ws pingpong overlap direct persistent draw"
CFG[g-base]="m=64 n=64 stages=2 threads=128"
CFG[g-ppov]="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
CFG[g-ppovdraw]="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent draw"
CFG[g-dir3draw]="m=128 n=128 stages=3 threads=256 ws pingpong overlap direct persistent draw"
CFG[g-t128draw]="m=128 n=128 stages=2 threads=128 ws overlap persistent draw"
r() { local tag=$1 var=$2 chk=$3; shift 3
  timeout 120 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "${CFG[$tag-$var]}" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-12s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
for i in 1 2 3; do
  chk=false; [ $i = 1 ] && chk=true
  for v in base draw ovdraw; do r b $v $chk $B; done
  for v in base draw ppov ppovdraw ppovdirdraw; do r e $v $chk $E; done
  for v in base ppov ppovdraw dir3draw t128draw; do r g $v $chk $G; done
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
