#!/usr/bin/env bash
# Twenty-third session, call 5: how late the blocks that walk one tile fewer should start (bin/abl/more4.py): d256 512 (blocks 100+ of 132),
# d128 512 (68+), d256 1k (100+), N thousand cycles; a-ql8 adds the query tile's evict-first load. All checked. Back to back, 3 rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
A="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256"; CA="m=128 n=64 stages=2 threads=256 ws overlap direct persistent pingpong=false"
C="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128"; CC="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
D="--batch 16 --heads 8 --seq-q 1024 --seq-kv 1024 --dim 256"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  export TILEGO_SOURCE=flash_attention=bin/abl/$tag-$var.cu
  ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-9s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); unset TILEGO_SOURCE; }
for i in 1 2 3; do
  for v in base l4 l6 l8 l11 ql8; do r a $v true "$CA" $A; done
  for v in base l2 l4 l6; do r c $v true "$CC" $C; done
  for v in base l6 l8 l12 l16; do r d $v true "$CA" $D; done
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
