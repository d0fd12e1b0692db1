#!/usr/bin/env bash
# Twenty-second session, call 10: with the rescale skipped, a KV step costs less outside the tensor cores, so shorter steps with deeper rings may now pay at d256 512 (32-key tiles on 3-4 stages lost 5-33% in earlier sessions): the library's pick (64 keys, 2 stages, ping-pong) against 32 keys on 4 and 3 stages, with and without ping-pong, back to back, four rounds; non-causal and causal.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c10-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
r() { local tag=$1 cfg=$2; shift 2
  ./bin/tilego run flash-attention --layout bshd --repeats 30 --json --config "$cfg" "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('%-22s ms %.4f TF %.1f ok %s' % ('$tag', r['time_ms'], r.get('tflops',0), r['ok']))
" 2>&1 | tee -a $S || (echo "$tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
for i in 1 2 3 4; do for cz in "" "--causal"; do
  z=nc; [ -n "$cz" ] && z=c
  r $z-pick "n=64" --batch 32 --heads 8 --seq-q 512 --dim 256 $cz
  r $z-n32s4 "n=32 stages=4" --batch 32 --heads 8 --seq-q 512 --dim 256 $cz
  r $z-n32s4-nopp "n=32 stages=4 pingpong=false" --batch 32 --heads 8 --seq-q 512 --dim 256 $cz
  r $z-n32s3 "n=32 stages=3" --batch 32 --heads 8 --seq-q 512 --dim 256 $cz
  r $z-n64-nopp "n=64 pingpong=false" --batch 32 --heads 8 --seq-q 512 --dim 256 $cz
done; done
echo "--- medians, and paired over the pick" | tee -a $S
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\S+)\s+ms ([\d.]+)',l)
    if m: d.setdefault(m[1],[]).append(float(m[2]))
for k,v in d.items():
    base=d[k.split('-')[0]+'-pick']
    rs=[b/x for b,x in zip(base,v)]
    print('%-22s ms median %.4f  speed over pick median %.3f (%.3f-%.3f)' % (k, st.median(v), st.median(rs), min(rs), max(rs)))
PY
