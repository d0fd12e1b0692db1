#!/usr/bin/env bash
# Nineteenth session, call 3: MLA A/B of branch next/walk-vars (B: the split kernel's request and split are walk variables, so the producer loads each piece's Q by TMA) against main (A, 9c9100d), interleaved A B A B, flushed as the peers; then the MLA GPU tests.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT; S=$OUT/c3-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
SH='^batch=(64|128) heads=128 seq_q=1 mean_kv=(8192|32768) |^batch=64 heads=64 seq_q=1 mean_kv=8192 |^batch=64 heads=128 seq_q=2 '
M='roles=true'
for r in 1 2; do
  to=$(( r == 1 ? 140 : 100 ))
  timeout $to ./bin/tilego-ab bench --suite mla --shape "$SH" --match "$M" --out $OUT/c3-A$r.jsonl > /dev/null 2>&1; echo "A$r exit $?" | tee -a $S
  timeout $to ./bin/tilego bench --suite mla --shape "$SH" --match "$M" --out $OUT/c3-B$r.jsonl > /dev/null 2>&1; echo "B$r exit $?" | tee -a $S
done
python3 - $OUT <<'PY' | tee -a $S
import json, sys
o = sys.argv[1]
def load(f):
    r = {}
    try:
        for l in open(f):
            x = json.loads(l); s = x['shape']
            for t in x['tried']:
                if t.get('ms'): r[('%s b%d h%d sq%d kv%d' % (x['impl'], s['batch'], s['heads'], s['seq_q'], s['mean_kv']), json.dumps(t['config'], sort_keys=True))] = (t['ms'], t.get('regs'), t.get('local_bytes'), x.get('tflops'), x.get('gbps'))
    except FileNotFoundError: pass
    return r
A = [load(o + '/c3-A%d.jsonl' % i) for i in (1, 2)]; B = [load(o + '/c3-B%d.jsonl' % i) for i in (1, 2)]
for k in sorted(set(A[0]) & set(B[0])):
    a = min(x[k][0] for x in A if k in x); b = min(x[k][0] for x in B if k in x)
    print('%s %.4f -> %.4f  B/A speed %.3f  regs/local A %s/%s B %s/%s  %s' % (k[0], a, b, a / b, A[0][k][1], A[0][k][2], B[0][k][1], B[0][k][2], k[1]))
PY
t0=$(date +%s); timeout 150 ./bin/cuda_backend.test -test.v -test.run '^TestGPUMLADecode$' > /tmp/tm.log 2>&1
echo "TestGPUMLADecode: exit $? $(grep -c -- '--- PASS' /tmp/tm.log) pass $(grep -c -- '--- FAIL' /tmp/tm.log) fail ($(( $(date +%s) - t0 )) s); last: $(grep -- '^=== RUN' /tmp/tm.log | tail -1)" | tee -a $S
grep -B3 -- '--- FAIL' /tmp/tm.log | head -20 | tee -a $S
