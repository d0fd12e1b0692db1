#!/usr/bin/env bash
# Twenty-third session, call 1: where a walk's fixed cost a tile goes. The library's 512-token picks (d256, d256 causal, d128) emitted here and
# compiled from edited copies (TILEGO_SOURCE): noq (the producer loads the query tile only for the first two tiles), nostore (the output's stores
# never run), both, and (d128) noepi (no staging either). Back to back, 3 rounds, --check=false (the edited programs compute wrong outputs).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
A="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256"; CA="m=128 n=64 stages=2 threads=256 ws overlap direct persistent pingpong=false"
B="$A --causal"; CB="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
C="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128"; CC="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
A4="--batch 32 --heads 8 --seq-q 512 --seq-kv 4096 --dim 256"
r() { local tag=$1 var=$2 cfg=$3; shift 3
  if [ "$var" = gen ]; then unset TILEGO_SOURCE; else export TILEGO_SOURCE=flash_attention=bin/abl/$tag-$var.cu; fi
  ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=false --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-9s ms %.4f TF %.1f' % ('$tag', '$var', r['time_ms'], r.get('tflops',0)))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); unset TILEGO_SOURCE; }
for i in 1 2 3; do
  for v in gen base noq nostore noqstore; do r a $v "$CA" $A; done
  for v in base noq nostore noqstore; do r b $v "$CB" $B; done
  for v in base noq nostore noqstore noepi; do r c $v "$CC" $C; done
  for v in base noq nostore; do r a4 $v "$CA" $A4; done
done
grep -h "TILEGO_SOURCE" /tmp/r.err | head -1 | tee -a $S
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
