#!/usr/bin/env bash
# Twenty-fourth session, call 15: the drawn causal walk's longest-first tail over k groups of heads (TILEGO_XTAIL=k, a trial; 1 is the committed order) against the pairs walk. Back to back, 3 rounds; round 1 checked.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c15-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
B="--batch 32 --heads 8 --seq-q 512 --seq-kv 512 --dim 256 --causal"; C="--batch 16 --heads 8 --seq-q 1024 --seq-kv 1024 --dim 256 --causal"
CB="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
E="--batch 32 --heads 16 --seq-q 512 --seq-kv 512 --dim 128 --causal"; CE="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
r() { local tag=$1 var=$2 chk=$3 cfg=$4; shift 4
  timeout 120 ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --check=$chk --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-4s %-12s ms %.4f TF %.1f ok %s' % ('$tag', '$var', r['time_ms'], r.get('tflops',0), r.get('ok')))
" 2>&1 | tee -a $S || (echo "$tag $var failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
for i in 1 2 3; do
  chk=false; [ $i = 1 ] && chk=true
  r b base $chk "$CB" $B; for k in 1 2 3 4; do TILEGO_XTAIL=$k r b t$k $chk "$CB draw" $B; done
  r c base $chk "$CB" $C; for k in 1 2 4 8; do TILEGO_XTAIL=$k r c t$k $chk "$CB draw" $C; done
  r e base $chk "$CE draw=false" $E; for k in 1 2 4; do TILEGO_XTAIL=$k r e t$k $chk "$CE draw" $E; done
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
