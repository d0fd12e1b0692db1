#!/usr/bin/env bash
# Twenty-third session, call 2: hand edits of the 512-token walks (TILEGO_SOURCE; bin/abl/more.py made them): d256 a-defer (a tile's epilogue
# after the next tile's first Q·Kᵀ issue; checked), a-noxpose and a-rawstore (what the quad transpose and the bf16 packing cost; not checked),
# d128 c-late (the TMA store's read wait moved before the next tile's staging writes; checked). Back to back, 3 rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
A="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256"; CA="m=128 n=64 stages=2 threads=256 ws overlap direct persistent pingpong=false"
C="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128"; CC="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  export TILEGO_SOURCE=flash_attention=bin/abl/$tag-$var.cu
  ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-9s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); unset TILEGO_SOURCE; }
for i in 1 2 3; do
  r a base true "$CA" $A; r a defer true "$CA" $A; r a noxpose false "$CA" $A; r a rawstore false "$CA" $A; r a nostore false "$CA" $A
  r c base true "$CC" $C; r c late true "$CC" $C; r c nostore false "$CC" $C
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
