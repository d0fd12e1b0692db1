#!/usr/bin/env bash
# Seventeenth session, call 1: runtime/jit/autotune tests on the final code; d64/d128 512-2k sweep with peers, Direct walks (stages 2/3) in the list.
cd "$(dirname "$0")/.."
export TILEGO_REQUIRE_GPU=1 TILEGO_CACHE=/tmp/tilego-cache TILEGO_HANG_S=60
mkdir -p $OUT
S=$OUT/c1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a $S
for t in runtime jit autotune; do
  t0=$(date +%s)
  timeout 150 ./bin/$t.test -test.v -test.skip '^(TestGPUTMA|TestGPUDeferred|TestGPUPersistent|TestGPUCluster)$' > /tmp/t-$t.log 2>&1
  echo "$t: exit $? $(grep -c -- '--- PASS' /tmp/t-$t.log) pass $(grep -c -- '--- FAIL' /tmp/t-$t.log) fail ($(( $(date +%s) - t0 )) s)" | tee -a $S
  grep -- '--- FAIL' /tmp/t-$t.log | head -5 | tee -a $S
done
OUT=/tmp/c1 TESTS=0 SUITES=fa-sweep SHAPE='seq_q=(512|1024|2048) .*dim=(64|128) ' timeout 380 bash scripts/gpu-suite.sh run > /tmp/c1-suite.log 2>&1
echo "d64/d128 short sweep with peers: exit $?" | tee -a $S
cp /tmp/c1/table.txt $OUT/c1-table.txt; cp /tmp/c1/tilego.jsonl $OUT/c1-tilego.jsonl; cp /tmp/c1/peers.jsonl $OUT/c1-peers.jsonl
tail -5 /tmp/c1-suite.log
python3 - $OUT/c1-tilego.jsonl <<'PY' | tee -a $S
import json, sys
for l in open(sys.argv[1]):
    x = json.loads(l); s = x['shape']
    tr = sorted(x['tried'], key=lambda t: t.get('ms') or 1e9)
    best = tr[0]['ms']
    print('d%d %s %d: best %.1f TF %s' % (s['dim'], 'c' if s['causal'] else '-', s['seq_q'], x['tflops'], x['config']))
    for i, t in enumerate(tr[:6]):
        print('   %7.4f ms %5.3f  %s' % (t.get('ms') or 0, best / t['ms'] if t.get('ms') else 0, t['config']))
PY
cat /tmp/c1/table.txt
