#!/usr/bin/env bash
# Seventeenth session, call 6: d256 512-2k with peers, deeper rings of narrower K/V tiles in the walk (n48 ×3, n32 ×4, Direct) beside n64 ×2.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c6-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
OUT=/tmp/c6 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) .*dim=256 ' timeout 400 bash scripts/gpu-suite.sh run > /tmp/c6-suite.log 2>&1
echo "d256 short sweep with peers: exit $?" | tee -a $S
cp /tmp/c6/table.txt $OUT/c6-table.txt; cp /tmp/c6/tilego.jsonl $OUT/c6-tilego.jsonl; cp /tmp/c6/peers.jsonl $OUT/c6-peers.jsonl
python3 - $OUT/c6-tilego.jsonl <<'PY' | tee -a $S
import json, sys
for l in open(sys.argv[1]):
    x = json.loads(l); s = x['shape']
    tr = sorted(x['tried'], key=lambda t: t.get('ms') or 1e9)
    best = tr[0]['ms']
    print('d%d %s %d: best %.1f TF' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'], x['tflops']))
    for t in tr:
        c = t['config']
        if c.get('persistent'):
            print('   %7.4f ms %5.3f  n%d s%d %s%s' % (t.get('ms') or 0, best / t['ms'] if t.get('ms') else 0, c['n'], c['stages'], 'pp ' if c.get('pingpong') else '', 'ov' if c.get('overlap') else ''))
PY
cat /tmp/c6/table.txt
