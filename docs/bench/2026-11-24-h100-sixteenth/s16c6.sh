#!/usr/bin/env bash
# Sixteenth session, call 6: d256 short points with one-warpgroup, one-stage blocks (two an SM) beside the list.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
timeout 400 ./bin/tilego bench --suite fa-sweep --shape 'seq_q=(512|1024) .*dim=256 ' --out $OUT/c6-bench.jsonl > /tmp/c6-bench.log 2>&1
echo "bench exit $?"
python3 - $OUT/c6-bench.jsonl <<'PY' | tee $OUT/c6-summary.txt
import json, sys
for l in open(sys.argv[1]):
    x = json.loads(l); s = x['shape']
    print('d%d %s %d: best %.1f TF %s' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'], x['tflops'], x['config']))
    tr = sorted(x['tried'], key=lambda t: t.get('ms') or 1e9)
    best = tr[0]['ms']
    for i, t in enumerate(tr):
        c = t['config']
        if c['m'] == 64 or i < 2:
            print('   %7.4f ms %5.3f  regs %s local %s ok %s  %s' % (t.get('ms') or 0, best / t['ms'] if t.get('ms') else 0, t.get('regs'), t.get('local_bytes'), t.get('ok'), c))
PY
grep -iE "error|fail" /tmp/c6-bench.log | head -5
