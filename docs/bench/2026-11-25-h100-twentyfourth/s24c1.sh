#!/usr/bin/env bash
# Twenty-fourth session, call 1: warpgroup 0 skipping its fully masked causal step (sk), late start of the pairs walk's idle-tail blocks (slN), and n=64 walks with the skip at d128/d64 against the current picks. Back to back, 3 rounds; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
B="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256 --causal"; C="--batch 16 --heads 8 --seq-q 1024 --seq-kv 1024 --dim 256 --causal"
C256="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
E="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128 --causal"; H="--batch 16 --heads 16 --seq-q 1024 --seq-kv 1024 --dim 128 --causal"
G="--batch 32 --heads 32 --seq-q 512 --seq-kv 512 --dim 64 --causal"
C64="m=128 n=64 stages=2 threads=256 ws pingpong overlap persistent"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  case $var in base|sk|sl*|sksl*) export TILEGO_SOURCE=flash_attention=bin/abl/$tag-$var.cu;; *) unset TILEGO_SOURCE;; esac
  timeout 120 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-9s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); unset TILEGO_SOURCE; }
for i in 1 2 3; do
  chk=false; [ $i = 1 ] && chk=true
  for v in base sk sl10 sl20 sksl20; do r b $v $chk "$C256" $B; done
  for v in base sk; do r c $v $chk "$C256" $C; done
  r e pick $chk "m=128 n=128 stages=2 threads=256 ws persistent pingpong=false" $E
  for v in base sk; do r e $v $chk "$C64" $E; done
  r h pick $chk "m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent" $H
  for v in base sk; do r h $v $chk "$C64" $H; done
  r g pick $chk "m=64 n=64 stages=2 threads=128" $G
  r g pickpf $chk "m=64 n=64 stages=2 threads=128 prefetch" $G
  for v in base sk; do r g $v $chk "$C64" $G; done
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
