#!/usr/bin/env bash
# Twenty-third session, call 4: L2 policies on the walks' loads (bin/abl/more3.py): kvel (K and V evict-last), qkv (with Q evict-first), qo (Q and O evict-first); slN (the blocks with one tile fewer start N thousand cycles late). All checked. Back to back, 3 rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
A="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256"; CA="m=128 n=64 stages=2 threads=256 ws overlap direct persistent pingpong=false"
B="$A --causal"; CB="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
C="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128"; CC="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  if [ "$var" = base ] || [ "$var" = pf ]; then unset TILEGO_SOURCE; else export TILEGO_SOURCE=flash_attention=bin/abl/$tag-$var.cu; fi
  [ "$var" = pf ] && cfg="$cfg prefetch=true"
  ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-9s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); unset TILEGO_SOURCE; }
for i in 1 2 3; do
  for v in base qef kvel qkv sl8 sl15 st8; do r a $v true "$CA" $A; done
  for v in base qef kvel qkv qo; do r b $v true "$CB" $B; done
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
