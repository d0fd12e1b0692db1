#!/usr/bin/env bash
# Twenty-second session, call 12: the d256 walk's query tile in two buffers beside a one-slot K ring freed as soon as Q·Kᵀ is done (TILEGO_SHORTRING=1; call 11: d256's fixed cost a tile is 3.4 KV steps against d128's 1.2, whose walk has two query buffers). TestGPUShortRing and the d256 persistent tests with it; then the library's picks with TILEGO_SHORTRING=0 and 1, back to back, four rounds.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c12-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
TILEGO_CACHE=/tmp/cache-t timeout 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUShortRing$' > /tmp/c12-short.log 2>&1; echo "TestGPUShortRing: exit $? $(grep -c -- '--- PASS' /tmp/c12-short.log) pass $(grep -c -- '--- FAIL' /tmp/c12-short.log) fail" | tee -a $S
grep -B2 -A6 -- '--- FAIL' /tmp/c12-short.log | head -20 | tee -a $S
TILEGO_SHORTRING=1 TILEGO_CACHE=/tmp/cache-t timeout 200 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$/^sm_90a$/d256' > /tmp/c12-pers.log 2>&1; echo "TestGPUPersistent d256 with TILEGO_SHORTRING=1: exit $? $(grep -c -- '--- PASS' /tmp/c12-pers.log) pass $(grep -c -- '--- FAIL' /tmp/c12-pers.log) fail" | tee -a $S
r() { local sr=$1 tag=$2; shift 2
  TILEGO_SHORTRING=$sr ./bin/tilego run flash-attention --layout bshd --repeats 30 --json "$@" > /tmp/r.json 2>/tmp/r.err
  python3 -c "
import json
r=json.load(open('/tmp/r.json'))
print('short=%s %-12s ms %.4f TF %.1f ok %s' % ('$sr', '$tag', r['time_ms'], r.get('tflops',0), r['ok']))
" 2>&1 | tee -a $S || (echo "short=$sr $tag failed: $(tail -3 /tmp/r.err)" | tee -a $S); }
for i in 1 2 3 4; do for sr in 0 1; do
  r $sr d256-512 --batch 32 --heads 8 --seq-q 512 --dim 256
  r $sr d256-1k --batch 16 --heads 8 --seq-q 1024 --dim 256
  r $sr d256-c512 --batch 32 --heads 8 --seq-q 512 --dim 256 --causal
  r $sr d256-c1k --batch 16 --heads 8 --seq-q 1024 --dim 256 --causal
done; done
echo "--- paired, short ring over the default" | tee -a $S
python3 - $S <<'PY' | tee -a $S
import sys,re,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'short=(\d) (\S+)\s+ms ([\d.]+)',l)
    if m: d.setdefault(m[2],{}).setdefault(m[1],[]).append(float(m[3]))
for k,v in d.items():
    rs=[a/b for a,b in zip(v['0'],v.get('1',[]))]
    if rs: print('%-10s default ms %.4f short ms %.4f  speed median %.3f (%.3f-%.3f) faster %d/%d' % (k, st.median(v['0']), st.median(v['1']), st.median(rs), min(rs), max(rs), sum(x>1 for x in rs), len(rs)))
PY
tar czf $OUT/c12-logs.tgz -C /tmp c12-short.log c12-pers.log
