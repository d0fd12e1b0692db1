#!/usr/bin/env bash
# Twenty-first session, call 10: the extra suite now times the tail split where the model cuts (GQA d128 8k non-causal: 4096 blocks, a tail of 4 in 32 pieces): extra with peers, then eight back-to-back pairs of the single program and --splits 0 at that shape (the bench's pick, n=176 ping-pong overlap).
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c10-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c10 TESTS=0 SUITES=extra timeout 300 bash scripts/gpu-suite.sh run > /tmp/c10-suite.log 2>&1
echo "extra with peers: exit $?" | tee -a $S
cp /tmp/c10/table.txt $OUT/c10-table.txt; cp /tmp/c10/tilego.jsonl $OUT/c10-tilego.jsonl; cp /tmp/c10/peers.jsonl $OUT/c10-peers.jsonl
grep -v '^$' /tmp/c10/table.txt | tee -a $S
r() { local tag=$1; shift; ./bin/tilego run flash-attention --layout bshd --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json,sys
r=json.load(open('/tmp/r.json')); s=r['shape']
print('%-16s ms %.4f TF %.1f ok %s %s' % ('$tag', r['time_ms'], r['tflops'], r['ok'], r.get('split_note','')[:70]))
" 2>&1 | tee -a $S || (echo "$tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
C="m=128 n=176 stages=2 threads=256 ws pingpong overlap"
for i in 1 2 3 4 5 6 7 8; do
  r gqa-s1 --batch 2 --heads 32 --heads-kv 8 --seq-q 8192 --dim 128 --config "$C" --splits 1
  r gqa-s0 --batch 2 --heads 32 --heads-kv 8 --seq-q 8192 --dim 128 --config "$C" --splits 0 --sms 132
done
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'(\S+)-s(\d+)\s+ms ([\d.]+) TF ([\d.]+)',l)
    if m: d.setdefault(int(m[2]),[]).append(float(m[4]))
a,b=d[1],d[0]; rs=[y/x for x,y in zip(a,b)]
print('gqa s1 median %.1f (%.1f-%.1f)' % (st.median(a),min(a),max(a)), 'model split median %.1f (%.1f-%.1f)' % (st.median(b),min(b),max(b)), 'paired median %.3f min %.3f max %.3f faster %d/%d' % (st.median(rs),min(rs),max(rs),sum(x>1 for x in rs),len(rs)))
PY
