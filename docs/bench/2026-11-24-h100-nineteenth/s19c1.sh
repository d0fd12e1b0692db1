#!/usr/bin/env bash
# Nineteenth session, call 1: A/B of branch next/sm-constant-causal-tail (B: SM count a constant, packed causal tail) against main (A, 9c9100d), interleaved A B A B, persistent configs at the causal 512 and 1k points; then the persistent GPU tests.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
SH='seq_q=(512|1024) .*causal=true'; M='persistent=true'
for r in 1 2; do
  to=$(( r == 1 ? 100 : 70 ))
  timeout $to ./bin/tilego-ab bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c1-A$r.jsonl > /dev/null 2>&1; echo "A$r exit $?" | tee -a $S
  timeout $to ./bin/tilego bench --suite fa-sweep --shape "$SH" --match "$M" --out $OUT/c1-B$r.jsonl > /dev/null 2>&1; echo "B$r exit $?" | tee -a $S
done
python3 - $OUT <<'PY' | tee -a $S
import json, sys, statistics
o = sys.argv[1]
def load(f):
    r = {}
    try:
        for l in open(f):
            x = json.loads(l); s = x['shape']
            for t in x['tried']:
                if t.get('ms'): r[('d%d %d' % (s['dim'], s['seq_q']), json.dumps(t['config'], sort_keys=True))] = t['ms']
    except FileNotFoundError: pass
    return r
RL = {}
try:
    for l in open(o + '/c1-B1.jsonl'):
        x = json.loads(l); s = x['shape']
        for t in x['tried']: RL[('d%d %d' % (s['dim'], s['seq_q']), json.dumps(t['config'], sort_keys=True))] = (t.get('regs'), t.get('local_bytes'))
except FileNotFoundError: pass
A = [load(o + '/c1-A%d.jsonl' % i) for i in (1, 2)]; B = [load(o + '/c1-B%d.jsonl' % i) for i in (1, 2)]
best = {}
for k in sorted(set(A[0]) & set(B[0])):
    a = min(x[k] for x in A if k in x); b = min(x[k] for x in B if k in x)
    print('%s %.4f -> %.4f  B/A speed %.3f  %s  regs/local B %s' % (k[0], a, b, a / b, k[1], RL.get(k)))
    p = k[0]; ba = best.setdefault(p, [1e9, 1e9]); ba[0] = min(ba[0], a); ba[1] = min(ba[1], b)
for p, (a, b) in best.items(): print('best %s: A %.4f B %.4f  %.3f' % (p, a, b, a / b))
PY
t0=$(date +%s); timeout 150 ./bin/cuda_backend.test -test.v -test.run '^TestGPUPersistent$/sm_90a/(tail_causal_d128|f16_causal_d64|causal_d256)$' > /tmp/tp.log 2>&1
echo "TestGPUPersistent: exit $? $(grep -c -- '--- PASS' /tmp/tp.log) pass $(grep -c -- '--- FAIL' /tmp/tp.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/tp.log | tail -1)" | tee -a $S
grep -- '--- FAIL' /tmp/tp.log | head | tee -a $S
t0=$(date +%s); timeout 90 ./bin/cuda_backend.test -test.v -test.run '^TestGPUSMsConstant$' > /tmp/ts.log 2>&1
echo "TestGPUSMsConstant: exit $? $(grep -c -- '--- PASS' /tmp/ts.log) pass $(grep -c -- '--- FAIL' /tmp/ts.log) fail ($(( $(date +%s) - t0 )) s)" | tee -a $S
grep -B5 -- '--- FAIL' /tmp/ts.log | head -30 | tee -a $S
