#!/usr/bin/env bash
# Sixteenth session, call 4: d256 walks (persistent, output stored from registers) with two query buffers (n32, n48) or one (n64), against the grid, at the short d256 points, on the fifteenth session's fragment stores.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
timeout 400 ./bin/tilego bench --suite fa-sweep --shape 'seq_q=(512|1024|2048) .*dim=256 ' --out $OUT/c4-bench.jsonl > /tmp/c4-bench.log 2>&1
echo "bench exit $?"
python3 - $OUT/c4-bench.jsonl <<'PY' | tee $OUT/c4-summary.txt
import json, sys
for l in open(sys.argv[1]):
    x = json.loads(l); s = x['shape']
    print('d%d %s %d: best %.1f TF %s' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'], x['tflops'], x['config']))
    tr = sorted(x['tried'], key=lambda t: t.get('ms') or 1e9)
    best = tr[0]['ms']
    for t in tr:
        c = t['config']
        if c.get('persistent') or tr.index(t) < 3:
            print('   %7.4f ms %5.3f  regs %s local %s ok %s  %s' % (t.get('ms') or 0, best / t['ms'] if t.get('ms') else 0, t.get('regs'), t.get('local_bytes'), t.get('ok'), c))
PY
tail -3 /tmp/c4-bench.log
