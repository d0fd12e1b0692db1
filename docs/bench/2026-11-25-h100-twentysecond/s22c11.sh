#!/usr/bin/env bash
# Twenty-second session, call 11: what a tile costs besides its KV steps. One tile count (B32, 512 queries), the 512-token pick's walk, keys 512 to 4096: time = tiles/SMs · (steps · c + F); fit c and F per head dim, three rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c11-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
r() { local tag=$1 cfg=$2; shift 2
  ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-12s ms %.4f TF %.1f ok %s' % ('$tag', r['time_ms'], r.get('tflops',0), r['ok']))
" 2>&1 | tee -a $S || (echo "$tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
W256="m=128 n=64 stages=2 threads=256 ws pingpong overlap direct persistent"
W128="m=128 n=128 stages=2 threads=256 ws pingpong overlap persistent"
for i in 1 2 3; do for kv in 512 1024 2048 4096; do
  r d256-kv$kv "$W256" --batch 32 --heads 8 --seq-q 512 --seq-kv $kv --dim 256
  r d128-kv$kv "$W128" --batch 32 --heads 16 --seq-q 512 --seq-kv $kv --dim 128
done; done
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(d\d+)-kv(\d+)\s+ms ([\d.]+)',l)
    if m: d.setdefault(m[1],{}).setdefault(int(m[2]),[]).append(float(m[3]))
for dim,v in d.items():
    n=64 if dim=='d256' else 128
    xs=sorted(v); steps=[k//n for k in xs]; ts=[st.median(v[k]) for k in xs]
    # least squares t = a*steps + b
    mx=sum(steps)/len(steps); my=sum(ts)/len(ts)
    a=sum((x-mx)*(y-my) for x,y in zip(steps,ts))/sum((x-mx)**2 for x in steps); b=my-a*mx
    print(dim, 'medians ms', ['%d:%.4f' % (k,t) for k,t in zip(xs,ts)], 'fit: %.4f ms a step, %.4f ms fixed = %.1f steps' % (a,b,b/a))
PY
