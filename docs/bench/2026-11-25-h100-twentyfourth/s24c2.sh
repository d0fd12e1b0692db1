#!/usr/bin/env bash
# Twenty-fourth session, call 2: warpgroup 0 skipping its fully masked causal step by its loop's bound (wl; bin/abl/variants.py), d256 causal 512 and 1k. Back to back, 4 rounds; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
B="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256 --causal"; C="--batch 16 --heads 8 --seq-q 1024 --seq-kv 1024 --dim 256 --causal"
C256="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  export TILEGO_SOURCE=flash_attention=bin/abl/$tag-$var.cu
  timeout 120 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-9s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); unset TILEGO_SOURCE; }
for i in 1 2 3 4; do
  chk=false; [ $i = 1 ] && chk=true
  for v in base wl; do r b $v $chk "$C256" $B; done
  for v in base wl; do r c $v $chk "$C256" $C; done
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
